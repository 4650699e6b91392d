/* Writing an F32 safetensors file: a JSON header (jansson) padded with spaces
 * to a multiple of 8 bytes, as the safetensors library does, so the data
 * starts aligned; tensors laid out in the order given. */
#include "weights/weights_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/error.h"

#define INVALID VKATTN_ERROR_INVALID_ARGUMENT

static vkattn_result build_header(const char *fn, const vkattn_weights_tensor *t, uint32_t count,
                                  const char *const *keys, const char *const *values,
                                  uint32_t n_meta, json_t *h, uint64_t *counts)
{
    uint64_t offset = 0;
    if (n_meta) {
        json_t *meta = json_object();
        json_object_set_new(h, "__metadata__", meta);
        for (uint32_t i = 0; i < n_meta; i++) {
            if (!keys[i] || !values[i])
                return vka_fail(NULL, INVALID, "%s: metadata %s[%u] is NULL", fn,
                                keys[i] ? "values" : "keys", i);
            if (json_object_set_new(meta, keys[i], json_string(values[i])))
                return vka_fail(NULL, INVALID, "%s: metadata %u is not valid UTF-8", fn, i);
        }
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!t[i].name || !t[i].data)
            return vka_fail(NULL, INVALID, "%s: tensors[%u].%s is NULL", fn, i,
                            t[i].name ? "data" : "name");
        if (!strcmp(t[i].name, "__metadata__") || json_object_get(h, t[i].name))
            return vka_fail(NULL, INVALID, "%s: tensors[%u].name '%s' is %s", fn, i, t[i].name,
                            json_object_get(h, t[i].name) ? "used twice" : "reserved");
        if (t[i].rank > VKATTN_WEIGHTS_MAX_RANK)
            return vka_fail(NULL, INVALID, "%s: tensors[%u] ('%s'): rank %u; at most %d", fn, i,
                            t[i].name, t[i].rank, VKATTN_WEIGHTS_MAX_RANK);
        json_t *shape = json_array();
        uint64_t n = 1, bytes, end;
        for (uint32_t d = 0; d < t[i].rank; d++) {
            json_array_append_new(shape, json_integer((json_int_t)t[i].dims[d]));
            if (t[i].dims[d] > (uint64_t)INT64_MAX || !vka_mul_u64(n, t[i].dims[d], &n))
                n = UINT64_MAX;
        }
        if (n == UINT64_MAX || !vka_mul_u64(n, 4, &bytes) || !vka_add_u64(offset, bytes, &end) ||
            end > (uint64_t)INT64_MAX || n > SIZE_MAX / 4) {
            json_decref(shape);
            return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW, "%s: tensors[%u] ('%s'): size "
                            "overflows", fn, i, t[i].name);
        }
        json_t *e = json_object();
        json_object_set_new(e, "dtype", json_string("F32"));
        json_object_set_new(e, "shape", shape);
        json_object_set_new(e, "data_offsets",
                            json_pack("[II]", (json_int_t)offset, (json_int_t)end));
        if (json_object_set_new(h, t[i].name, e))
            return vka_fail(NULL, INVALID, "%s: tensors[%u].name is not valid UTF-8", fn, i);
        counts[i] = n;
        offset = end;
    }
    return VKATTN_SUCCESS;
}

static bool write_floats(FILE *fp, const float *x, uint64_t n)
{
    uint8_t buf[4096];
    for (uint64_t done = 0; done < n;) {
        size_t k = (size_t)(n - done < sizeof buf / 4 ? n - done : sizeof buf / 4);
        for (size_t i = 0; i < k; i++) {
            uint32_t u;
            memcpy(&u, &x[done + i], 4);
            for (int b = 0; b < 4; b++)
                buf[4 * i + (size_t)b] = (uint8_t)(u >> (8 * b));
        }
        if (fwrite(buf, 4, k, fp) != k)
            return false;
        done += k;
    }
    return true;
}

vkattn_result vka_weights_save(const char *fn, const char *path, const vkattn_weights_tensor *t,
                               uint32_t count, const char *const *keys,
                               const char *const *values, uint32_t n_meta)
{
    if (!path || (!t && count) || (n_meta && (!keys || !values)))
        return vka_fail(NULL, INVALID, "%s: %s is NULL", fn,
                        !path ? "path" : (!t && count) ? "tensors" : "metadata");
    json_t *h = json_object();
    uint64_t *counts = calloc(count ? count : 1, sizeof *counts);
    char *text = NULL;
    FILE *fp = NULL;
    vkattn_result r;
    if (!h || !counts) {
        r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    if ((r = build_header(fn, t, count, keys, values, n_meta, h, counts)))
        goto done;
    if (!(text = json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS))) {
        r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    size_t len = strlen(text), padded = (len + 7) / 8 * 8;
    uint8_t prefix[8];
    for (int b = 0; b < 8; b++)
        prefix[b] = (uint8_t)((uint64_t)padded >> (8 * b));
    errno = 0;
    if (!(fp = fopen(path, "wb"))) {
        r = vka_fail(NULL, INVALID, "%s: %s: cannot create: %s", fn, path,
                     errno ? strerror(errno) : "unknown error");
        goto done;
    }
    bool ok = fwrite(prefix, 1, 8, fp) == 8 && fwrite(text, 1, len, fp) == len;
    for (size_t i = len; ok && i < padded; i++)
        ok = fputc(' ', fp) != EOF;
    for (uint32_t i = 0; ok && i < count; i++)
        ok = write_floats(fp, t[i].data, counts[i]);
    if (fclose(fp) != 0)
        ok = false;
    fp = NULL;
    if (!ok)
        r = vka_fail(NULL, INVALID, "%s: %s: write failed (disk full?)", fn, path);
done:
    if (fp)
        fclose(fp);
    free(text);
    free(counts);
    json_decref(h);
    return r;
}

vkattn_result vkattn_weights_save(const char *path, const vkattn_weights_tensor *tensors,
                                  uint32_t count, const char *const *metadata_keys,
                                  const char *const *metadata_values, uint32_t metadata_count)
{
    return vka_weights_save(__func__, path, tensors, count, metadata_keys,
                            metadata_values, metadata_count);
}
