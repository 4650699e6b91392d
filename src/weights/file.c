/* Opening a safetensors file: the 8-byte header length, the JSON header
 * (jansson), and every tensor entry checked before anything is read, so a
 * later read cannot go out of the data or trust a corrupt shape. Every
 * failure names the file and, where there is one, the tensor. */
#include "weights/weights_internal.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifndef S_ISREG /* MSVC's <sys/stat.h> has the mode bits, not the POSIX tests */
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
#endif
#ifndef S_ISDIR
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#endif

#include "core/check.h"
#include "core/error.h"

#define INVALID VKATTN_ERROR_INVALID_ARGUMENT

void vka_weights_shape_text(uint32_t rank, const uint64_t *dims, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "(");
    for (uint32_t i = 0; i < rank && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%llu", i ? ", " : "",
                              (unsigned long long)dims[i]);
    if (o < size)
        snprintf(buf + o, size - o, "%s)", rank == 1 ? "," : "");
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A JSON integer in [0, 2^63). */
static bool get_u64(json_t *j, uint64_t *out)
{
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return false;
    *out = (uint64_t)json_integer_value(j);
    return true;
}

/* One header entry into *t; fn and label for messages. */
static vkattn_result parse_entry(const char *fn, const char *label, const char *name, json_t *e,
                                 uint64_t data_size, vkattn_weights_tensor_info *t)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    if (!json_is_object(e))
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' is not a JSON object", fn, label, name);
    json_t *dt = json_object_get(e, "dtype"), *shape = json_object_get(e, "shape");
    json_t *offs = json_object_get(e, "data_offsets");
    if (!json_is_string(dt))
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has no dtype string", fn, label, name);
    t->dtype_name = json_string_value(dt);
    uint32_t esize = vka_weights_dtype_size(t->dtype_name, &t->dtype);
    if (!esize)
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has unknown dtype '%s'", fn, label,
                        name, t->dtype_name);
    if (!json_is_array(shape))
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has no shape array", fn, label, name);
    if (json_array_size(shape) > VKATTN_WEIGHTS_MAX_RANK)
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has rank %zu; at most %d supported",
                        fn, label, name, json_array_size(shape), VKATTN_WEIGHTS_MAX_RANK);
    t->rank = (uint32_t)json_array_size(shape);
    t->count = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (!get_u64(json_array_get(shape, i), &t->dims[i]))
            return vka_fail(NULL, INVALID,
                            "%s: %s: tensor '%s': shape[%u] is not a non-negative integer", fn,
                            label, name, i);
        if (!vka_mul_u64(t->count, t->dims[i], &t->count))
            return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                            "%s: %s: tensor '%s': the element count of its shape overflows", fn,
                            label, name);
    }
    uint64_t bytes;
    if (!vka_mul_u64(t->count, esize, &bytes))
        return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: %s: tensor '%s': its byte size overflows", fn, label, name);
    if (!json_is_array(offs) || json_array_size(offs) != 2 ||
        !get_u64(json_array_get(offs, 0), &t->data_begin) ||
        !get_u64(json_array_get(offs, 1), &t->data_end))
        return vka_fail(NULL, INVALID,
                        "%s: %s: tensor '%s': data_offsets must be [begin, end], non-negative "
                        "integers", fn, label, name);
    if (t->data_end < t->data_begin)
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s': data_offsets end %llu < begin %llu",
                        fn, label, name, (unsigned long long)t->data_end,
                        (unsigned long long)t->data_begin);
    if (t->data_end > data_size)
        return vka_fail(NULL, INVALID,
                        "%s: %s: tensor '%s': data_offsets end %llu is past the data (%llu bytes)",
                        fn, label, name, (unsigned long long)t->data_end,
                        (unsigned long long)data_size);
    if (t->data_end - t->data_begin != bytes) {
        char s[160];
        vka_weights_shape_text(t->rank, t->dims, s, sizeof s);
        return vka_fail(NULL, INVALID,
                        "%s: %s: tensor '%s': %llu data bytes but %s %s needs %llu", fn, label,
                        name, (unsigned long long)(t->data_end - t->data_begin), t->dtype_name, s,
                        (unsigned long long)bytes);
    }
    return VKATTN_SUCCESS;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const vkattn_weights_tensor_info *)a)->name,
                  ((const vkattn_weights_tensor_info *)b)->name);
}

/* By begin, then end: an empty tensor at a boundary sorts before the
 * tensor that starts there. */
static int by_offsets(const void *a, const void *b)
{
    const vkattn_weights_tensor_info *x = *(const vkattn_weights_tensor_info *const *)a;
    const vkattn_weights_tensor_info *y = *(const vkattn_weights_tensor_info *const *)b;
    if (x->data_begin != y->data_begin)
        return x->data_begin < y->data_begin ? -1 : 1;
    return x->data_end < y->data_end ? -1 : x->data_end > y->data_end;
}

/* The tensors tile the data section exactly, as the safetensors format
 * requires ("entirely indexed, no holes"): sorted by offsets, each begins
 * where the one before ends, the first at 0, the last at the end of the
 * data. So no two share a byte, and a header length a few bytes off (its
 * trailing padding cut, which would read every tensor early) is refused as
 * bytes after the last tensor instead of read as wrong weights. */
static vkattn_result check_tiling(const char *fn, vkattn_weights_file *f)
{
    const vkattn_weights_tensor_info **order = malloc((f->count ? f->count : 1) * sizeof *order);
    if (!order)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    for (uint32_t i = 0; i < f->count; i++)
        order[i] = &f->tensors[i];
    qsort(order, f->count, sizeof *order, by_offsets);
    vkattn_result r = VKATTN_SUCCESS;
    uint64_t at = 0; /* where the next tensor must begin */
    for (uint32_t i = 0; i < f->count && !r; i++) {
        const vkattn_weights_tensor_info *t = order[i];
        if (t->data_begin < at)
            r = vka_fail(NULL, INVALID,
                         "%s: %s: tensors '%s' and '%s' overlap (data_offsets [%llu, %llu] and "
                         "[%llu, %llu])", fn, f->label, order[i - 1]->name, t->name,
                         (unsigned long long)order[i - 1]->data_begin,
                         (unsigned long long)order[i - 1]->data_end,
                         (unsigned long long)t->data_begin, (unsigned long long)t->data_end);
        else if (t->data_begin > at)
            r = vka_fail(NULL, INVALID,
                         "%s: %s: data bytes [%llu, %llu) belong to no tensor (before tensor "
                         "'%s'); safetensors data has no gaps", fn, f->label,
                         (unsigned long long)at, (unsigned long long)t->data_begin, t->name);
        at = t->data_end;
    }
    if (!r && at != f->data_size)
        r = vka_fail(NULL, INVALID,
                     "%s: %s: %llu data bytes after the last tensor (the tensors end at %llu "
                     "of %llu); safetensors data has no trailing bytes (is the header length "
                     "right?)", fn, f->label, (unsigned long long)(f->data_size - at),
                     (unsigned long long)at, (unsigned long long)f->data_size);
    free(order);
    return r;
}

/* Parses the header text into f (data_size already set). */
static vkattn_result parse_header(const char *fn, vkattn_weights_file *f, const char *text,
                                  size_t len)
{
    json_error_t jerr;
    f->header = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!f->header)
        return vka_fail(NULL, INVALID, "%s: %s: the header is not JSON (line %d, column %d: %s)",
                        fn, f->label, jerr.line, jerr.column, jerr.text);
    if (!json_is_object(f->header))
        return vka_fail(NULL, INVALID, "%s: %s: the header is not a JSON object", fn, f->label);
    json_t *meta = json_object_get(f->header, "__metadata__");
    if (meta && !json_is_object(meta))
        return vka_fail(NULL, INVALID, "%s: %s: __metadata__ is not a JSON object", fn, f->label);
    size_t n = json_object_size(f->header) - (meta ? 1 : 0);
    if (n > UINT32_MAX / 2)
        return vka_fail(NULL, INVALID, "%s: %s: %zu tensors; too many", fn, f->label, n);
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    if (!f->tensors)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    const char *key;
    json_t *e;
    json_object_foreach(f->header, key, e) {
        if (!strcmp(key, "__metadata__"))
            continue;
        vkattn_result r = parse_entry(fn, f->label, key, e, f->data_size, &f->tensors[f->count]);
        if (r)
            return r;
        f->count++;
    }
    qsort(f->tensors, f->count, sizeof *f->tensors, by_name);
    return check_tiling(fn, f);
}

static uint64_t le64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* The length prefix against the total size; *n the header length. */
static vkattn_result check_length(const char *fn, const char *label, const uint8_t prefix[8],
                                  uint64_t total, uint64_t *n)
{
    *n = le64(prefix);
    if (*n > total - 8)
        return vka_fail(NULL, INVALID,
                        "%s: %s: header length %llu is larger than the file (%llu bytes after "
                        "the length)", fn, label, (unsigned long long)*n,
                        (unsigned long long)(total - 8));
    if (*n > VKA_WEIGHTS_MAX_HEADER)
        return vka_fail(NULL, INVALID, "%s: %s: header length %llu is over the 100 MB limit", fn,
                        label, (unsigned long long)*n);
    if (*n < 2)
        return vka_fail(NULL, INVALID, "%s: %s: header length %llu; too short for a JSON object",
                        fn, label, (unsigned long long)*n);
    return VKATTN_SUCCESS;
}

static vkattn_result new_file(const char *fn, const char *label, vkattn_weights_file **out)
{
    *out = calloc(1, sizeof **out);
    if (*out && !((*out)->label = dup_str(label))) {
        free(*out);
        *out = NULL;
    }
    return *out ? VKATTN_SUCCESS
                : vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
}

vkattn_result vkattn_weights_file_open_memory(const void *data, size_t size, const char *label,
                                              vkattn_weights_file **out)
{
    if (!out)
        return vka_fail(NULL, INVALID, "%s: out is NULL", __func__);
    *out = NULL;
    if (!data && size)
        return vka_fail(NULL, INVALID, "%s: data is NULL", __func__);
    if (!label)
        label = "<memory>";
    if (size < 8)
        return vka_fail(NULL, INVALID, "%s: %s: truncated: %zu bytes, fewer than the 8-byte "
                        "header length", __func__, label, size);
    uint64_t n;
    vkattn_weights_file *f;
    vkattn_result r = check_length(__func__, label, data, size, &n);
    if (r || (r = new_file(__func__, label, &f)))
        return r;
    f->mem = data;
    f->data_start = 8 + n;
    f->data_size = size - 8 - n;
    if ((r = parse_header(__func__, f, (const char *)f->mem + 8, n))) {
        vkattn_weights_file_close(f);
        return r;
    }
    *out = f;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_weights_file_open(const char *path, vkattn_weights_file **out)
{
    if (!out)
        return vka_fail(NULL, INVALID, "%s: out is NULL", __func__);
    *out = NULL;
    if (!path)
        return vka_fail(NULL, INVALID, "%s: path is NULL", __func__);
    vkattn_weights_file *f;
    vkattn_result r = new_file(__func__, path, &f);
    if (r)
        return r;
    char *text = NULL;
    uint8_t prefix[8];
    long size = -1;
    uint64_t n = 0;
    /* only a regular file: fopen of a FIFO blocks until a writer comes, and
     * a folder opens on some systems and has no size */
    struct stat st;
    errno = 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        r = vka_fail(NULL, INVALID, "%s: %s: %s; a safetensors file must be a regular file", __func__,
                     path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        goto fail;
    }
    errno = 0;
    f->fp = fopen(path, "rb");
    if (!f->fp) {
        r = vka_fail(NULL, INVALID, "%s: %s: cannot open: %s", __func__, path,
                     errno ? strerror(errno) : "unknown error");
        goto fail;
    }
    if (fseek(f->fp, 0, SEEK_END) != 0 || (size = ftell(f->fp)) < 0 ||
        fseek(f->fp, 0, SEEK_SET) != 0) {
        r = vka_fail(NULL, INVALID, "%s: %s: cannot find its size (not a regular file?)", __func__, path);
        goto fail;
    }
    if (size < 8 || fread(prefix, 1, 8, f->fp) != 8) {
        r = vka_fail(NULL, INVALID, "%s: %s: truncated: %ld bytes, fewer than the 8-byte header "
                     "length", __func__, path, size);
        goto fail;
    }
    if ((r = check_length(__func__, path, prefix, (uint64_t)size, &n)))
        goto fail;
    f->data_start = 8 + n;
    f->data_size = (uint64_t)size - 8 - n;
    if (!(text = malloc(n))) {
        r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
        goto fail;
    }
    if (fread(text, 1, n, f->fp) != n) {
        r = vka_fail(NULL, INVALID, "%s: %s: cannot read the %llu-byte header", __func__, path,
                     (unsigned long long)n);
        goto fail;
    }
    if ((r = parse_header(__func__, f, text, n)))
        goto fail;
    free(text);
    *out = f;
    return VKATTN_SUCCESS;
fail:
    free(text);
    vkattn_weights_file_close(f);
    return r;
}

void vkattn_weights_file_close(vkattn_weights_file *f)
{
    if (!f)
        return;
    if (f->fp)
        fclose(f->fp);
    json_decref(f->header);
    free(f->tensors);
    free(f->label);
    free(f);
}

uint32_t vkattn_weights_file_count(const vkattn_weights_file *f) { return f ? f->count : 0; }

vkattn_result vkattn_weights_file_tensor(const vkattn_weights_file *f, uint32_t index,
                                         vkattn_weights_tensor_info *info)
{
    if (!f || !info)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, f ? "info" : "file");
    if (index >= f->count)
        return vka_fail(NULL, INVALID, "%s: index %u; the file has %u tensors", __func__, index,
                        f->count);
    *info = f->tensors[index];
    return VKATTN_SUCCESS;
}

const vkattn_weights_tensor_info *vka_weights_lookup(const vkattn_weights_file *f,
                                                     const char *name)
{
    vkattn_weights_tensor_info key = {.name = name};
    return bsearch(&key, f->tensors, f->count, sizeof key, by_name);
}

vkattn_result vkattn_weights_file_find(const vkattn_weights_file *f, const char *name,
                                       vkattn_weights_tensor_info *info)
{
    if (!f || !name || !info)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, !f ? "file" : !name ? "name" : "info");
    const vkattn_weights_tensor_info *t = vka_weights_lookup(f, name);
    if (!t)
        return vka_fail(NULL, INVALID, "%s: %s has no tensor '%s'", __func__, f->label, name);
    *info = *t;
    return VKATTN_SUCCESS;
}

const char *vkattn_weights_file_metadata(const vkattn_weights_file *f, const char *key)
{
    if (!f || !key)
        return NULL;
    json_t *v = json_object_get(json_object_get(f->header, "__metadata__"), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

vkattn_result vka_weights_read(vkattn_weights_file *f, const char *fn,
                               const vkattn_weights_tensor_info *t, float *dst)
{
    if (t->dtype == VKATTN_WEIGHTS_DTYPE_OTHER)
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has dtype %s; vkattn reads F32, F16 "
                        "or BF16", fn, f->label, t->name, t->dtype_name);
    uint64_t esize = t->dtype == VKATTN_WEIGHTS_DTYPE_F32 ? 4 : 2;
    uint64_t pos = f->data_start + t->data_begin;
    if (f->mem) {
        vka_weights_decode(t->dtype, f->mem + pos, (size_t)t->count, dst);
        return VKATTN_SUCCESS;
    }
    /* in chunks, so a large tensor needs no second copy of its bytes */
    enum { CHUNK = 1 << 16 };
    uint8_t buf[CHUNK];
    if (pos > (uint64_t)LONG_MAX || fseek(f->fp, (long)pos, SEEK_SET) != 0)
        return vka_fail(NULL, INVALID, "%s: %s: cannot seek to tensor '%s'", fn, f->label, t->name);
    for (uint64_t done = 0; done < t->count;) {
        size_t n = (size_t)(t->count - done < CHUNK / esize ? t->count - done : CHUNK / esize);
        if (fread(buf, (size_t)esize, n, f->fp) != n)
            return vka_fail(NULL, INVALID, "%s: %s: short read in tensor '%s' (the file changed?)",
                            fn, f->label, t->name);
        vka_weights_decode(t->dtype, buf, n, dst + done);
        done += n;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_weights_file_read(vkattn_weights_file *f, const char *name, float *dst,
                                       uint64_t count)
{
    if (!f || !name || (!dst && count))
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, !f ? "file" : !name ? "name" : "dst");
    const vkattn_weights_tensor_info *t = vka_weights_lookup(f, name);
    if (!t)
        return vka_fail(NULL, INVALID, "%s: %s has no tensor '%s'", __func__, f->label, name);
    if (count != t->count)
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has %llu elements; count is %llu", __func__,
                        f->label, name, (unsigned long long)t->count, (unsigned long long)count);
    return vka_weights_read(f, __func__, t, dst);
}
