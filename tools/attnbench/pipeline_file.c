/* Pipeline cache files (see pipeline_file.h). Unlike the peak cache, a
 * file named on the command line that cannot be read or written fails the
 * run: the user asked for it, and a silent cold start would skew timings. */
#include "pipeline_file.h"

#include "args.h"
#include "common.h"
#include "platform.h"
#include "regular_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int file_error(const char *path, const char *what, int err)
{
    fprintf(stderr, "attnbench: --pipeline-cache %s: cannot %s: %s\n", path, what,
            err ? strerror(err) : "unexpected end of file");
    return ATTNBENCH_EXIT_CHECK;
}

int ab_pipeline_file_load(const char *path, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    /* a regular file only, as check's FILE.json (regular_file.h): a FIFO
     * would block in fopen, a device never end */
    uint64_t file_size;
    const char *why;
    ab_file_kind kind = ab_regular_file(path, &file_size, &why);
    if (kind == AB_FILE_MISSING)
        return errno == ENOENT ? ATTNBENCH_EXIT_OK : file_error(path, "open it", errno);
    if (kind == AB_FILE_OTHER) {
        fprintf(stderr, "attnbench: --pipeline-cache %s: cannot read it: %s; a pipeline cache "
                        "is a regular file\n", path, why);
        return ATTNBENCH_EXIT_CHECK;
    }
    if (file_size > AB_PIPELINE_FILE_MAX) {
        fprintf(stderr, "attnbench: --pipeline-cache %s: larger than %u MiB; not a pipeline "
                        "cache vkattn wrote\n", path, AB_PIPELINE_FILE_MAX >> 20);
        return ATTNBENCH_EXIT_CHECK;
    }
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? ATTNBENCH_EXIT_OK : file_error(path, "open it", errno);
    /* read in chunks, at most AB_PIPELINE_FILE_MAX bytes: the file may have
     * grown since stat */
    size_t cap = 0, n = 0;
    unsigned char *buf = NULL;
    int status = ATTNBENCH_EXIT_OK;
    for (;;) {
        if (n > AB_PIPELINE_FILE_MAX) {
            fprintf(stderr, "attnbench: --pipeline-cache %s: larger than %u MiB; not a pipeline "
                            "cache vkattn wrote\n", path, AB_PIPELINE_FILE_MAX >> 20);
            status = ATTNBENCH_EXIT_CHECK;
            break;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64 * 1024;
            if (ncap > (size_t)AB_PIPELINE_FILE_MAX + 1) /* one byte over tells "too large" */
                ncap = (size_t)AB_PIPELINE_FILE_MAX + 1;
            unsigned char *nbuf = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nbuf) {
                status = file_error(path, "read it", ENOMEM);
                break;
            }
            buf = nbuf, cap = ncap;
        }
        errno = 0;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                status = file_error(path, "read it", errno ? errno : EIO);
            break;
        }
    }
    fclose(f);
    if (status != ATTNBENCH_EXIT_OK) {
        free(buf);
        return status;
    }
    *data = buf;
    *size = n;
    return ATTNBENCH_EXIT_OK;
}

int ab_pipeline_file_save(vkattn_context *ctx, const char *path, size_t *size)
{
    *size = 0;
    size_t n = 0;
    vkattn_result r = vkattn_context_get_pipeline_cache_data(ctx, NULL, &n);
    void *buf = NULL;
    /* the cache may grow between the two calls only if another thread
     * compiles; none does here, but retry once as the idiom allows */
    for (int tries = 0; r == VKATTN_SUCCESS && tries < 2; tries++) {
        free(buf);
        if (!(buf = malloc(n ? n : 1))) {
            r = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
            break;
        }
        size_t got = n;
        r = vkattn_context_get_pipeline_cache_data(ctx, buf, &got);
        if (r == VKATTN_SUCCESS) {
            n = got;
            break;
        }
        if (r == VKATTN_ERROR_INVALID_ARGUMENT && got > n) {
            n = got;
            r = VKATTN_SUCCESS;
            continue;
        }
    }
    if (r != VKATTN_SUCCESS) {
        free(buf);
        return ab_report(ctx, r, "--pipeline-cache: vkattn_context_get_pipeline_cache_data");
    }
    size_t len = strlen(path);
    char *tmp = malloc(len + 32);
    int status = ATTNBENCH_EXIT_OK;
    if (!tmp) {
        free(buf);
        return file_error(path, "write it", ENOMEM);
    }
    snprintf(tmp, len + 32, "%s.tmp%ld", path, (long)(ab_now_s() * 1e6) % 1000000);
    errno = 0;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        status = file_error(path, "write it", errno);
    } else {
        bool ok = fwrite(buf, 1, n, f) == n;
        int err = errno;
        if (fclose(f) != 0 && ok) {
            ok = false;
            err = errno;
        }
        if (ok && ab_replace_file(tmp, path) != 0) {
            ok = false;
            err = errno;
        }
        if (!ok) {
            remove(tmp);
            status = file_error(path, "write it", err ? err : EIO);
        }
    }
    free(tmp);
    free(buf);
    if (status == ATTNBENCH_EXIT_OK)
        *size = n;
    return status;
}
