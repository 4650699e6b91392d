/* The safetensors reader (vkattn/weights.h) without a device: listing,
 * F32 / F16 / BF16 read exactly (every half checked against an independent
 * decoding), and every kind of malformed file rejected with a specific error
 * that names the tensor, from memory and from disk. */
#define _POSIX_C_SOURCE 200809L /* mkfifo */
#include "st_writer.h"
#include "test_util.h"

#include <vkattn/weights.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

/* Independent decodings: the value from its fields, by arithmetic. */
static double half_value(uint16_t h)
{
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 31)
        return man ? NAN : sign * INFINITY;
    if (exp == 0)
        return sign * ldexp(man, -24);
    return sign * ldexp(1024 + man, exp - 25);
}

static double bf16_value(uint16_t h)
{
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    int exp = (h >> 7) & 0xff, man = h & 0x7f;
    if (exp == 255)
        return man ? NAN : sign * INFINITY;
    if (exp == 0)
        return sign * ldexp(man, -133);
    return sign * ldexp(128 + man, exp - 134);
}

static void assert_same(float got, double want, uint32_t i)
{
    if (isnan(want)) {
        if (!isnan(got))
            fail_msg("element %u: %g, expected NaN", i, (double)got);
    } else if ((double)got != want || !signbit(got) != !signbit(want)) {
        fail_msg("element %u: %.9g, expected %.9g", i, (double)got, want);
    }
}

/* Every F16 and every BF16 pattern, and random F32 values, in one file. */
static void test_read_exact(void **state)
{
    (void)state;
    tu_seed();
    enum { NF = 1000 };
    uint16_t *all = malloc(65536 * sizeof *all);
    float f32[NF];
    for (uint32_t i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    tu_fill_uniform(f32, NF, -1e6f, 1e6f);
    f32[0] = 1e-40f; /* a float subnormal */
    uint8_t *h = st_u16_bytes(all, 65536), *f = st_f32_bytes(f32, NF);
    st_tensor t[] = {
        {"half", "F16", 2, {256, 256}, h, 2 * 65536},
        {"brain", "BF16", 1, {65536}, h, 2 * 65536},
        {"single", "F32", 3, {10, 10, 10}, f, 4 * NF},
        {"count", "I64", 0, {0}, "\x07\0\0\0\0\0\0\0", 8},
        {"empty", "F32", 2, {0, 5}, NULL, 0},
    };
    size_t size;
    uint8_t *file = st_build(t, 5, "{\"format\":\"pt\",\"n\":\"5\"}", &size);
    vkattn_weights_file *wf;
    assert_int_equal(vkattn_weights_file_open_memory(file, size, "mem", &wf), VKATTN_SUCCESS);
    assert_int_equal(vkattn_weights_file_count(wf), 5);
    assert_string_equal(vkattn_weights_file_metadata(wf, "format"), "pt");
    assert_null(vkattn_weights_file_metadata(wf, "nothing"));

    /* listed in name order with dtype, shape, count */
    const char *order[] = {"brain", "count", "empty", "half", "single"};
    vkattn_weights_tensor_info info;
    for (uint32_t i = 0; i < 5; i++) {
        assert_int_equal(vkattn_weights_file_tensor(wf, i, &info), VKATTN_SUCCESS);
        assert_string_equal(info.name, order[i]);
    }
    assert_int_equal(vkattn_weights_file_tensor(wf, 5, &info), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_weights_file_find(wf, "count", &info), VKATTN_SUCCESS);
    assert_int_equal(info.dtype, VKATTN_WEIGHTS_DTYPE_OTHER);
    assert_string_equal(info.dtype_name, "I64");
    assert_int_equal(info.rank, 0);
    assert_int_equal(info.count, 1);
    assert_int_equal(vkattn_weights_file_find(wf, "half", &info), VKATTN_SUCCESS);
    assert_int_equal(info.dtype, VKATTN_WEIGHTS_DTYPE_F16);
    assert_int_equal(info.rank, 2);
    assert_int_equal(info.dims[1], 256);
    assert_int_equal(info.count, 65536);
    assert_int_equal(vkattn_weights_file_find(wf, "nope", &info), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "no tensor 'nope'"));

    float *out = tu_floats(65536);
    assert_int_equal(vkattn_weights_file_read(wf, "half", out, 65536), VKATTN_SUCCESS);
    for (uint32_t i = 0; i < 65536; i++)
        assert_same(out[i], half_value((uint16_t)i), i);
    assert_int_equal(vkattn_weights_file_read(wf, "brain", out, 65536), VKATTN_SUCCESS);
    for (uint32_t i = 0; i < 65536; i++)
        assert_same(out[i], bf16_value((uint16_t)i), i);
    assert_int_equal(vkattn_weights_file_read(wf, "single", out, NF), VKATTN_SUCCESS);
    assert_memory_equal(out, f32, sizeof f32);
    assert_int_equal(vkattn_weights_file_read(wf, "empty", NULL, 0), VKATTN_SUCCESS);

    /* what is not read: another dtype, a wrong count, a missing name */
    assert_int_equal(vkattn_weights_file_read(wf, "count", out, 1), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "'count' has dtype I64"));
    assert_int_equal(vkattn_weights_file_read(wf, "single", out, NF - 1),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "'single' has 1000 elements; count is 999"));
    assert_int_equal(vkattn_weights_file_read(wf, "x", out, 1), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_weights_file_close(wf);

    /* the same bytes from disk */
    const char *path = "test_weights_file.safetensors";
    assert_int_equal(st_write(path, file, size), 0);
    assert_int_equal(vkattn_weights_file_open(path, &wf), VKATTN_SUCCESS);
    assert_int_equal(vkattn_weights_file_read(wf, "half", out, 65536), VKATTN_SUCCESS);
    for (uint32_t i = 0; i < 65536; i++)
        assert_same(out[i], half_value((uint16_t)i), i);
    assert_int_equal(vkattn_weights_file_read(wf, "single", out, NF), VKATTN_SUCCESS);
    assert_memory_equal(out, f32, sizeof f32);
    vkattn_weights_file_close(wf);
    /* truncated on disk: the header length now runs past the end */
    assert_int_equal(st_write(path, file, 40), 0);
    assert_int_equal(vkattn_weights_file_open(path, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(wf);
    assert_non_null(strstr(vkattn_last_error(), "larger than the file"));
    assert_non_null(strstr(vkattn_last_error(), path));
    remove(path);
    free(out), free(file), free(all), free(h), free(f);
}

typedef struct bad_case {
    const char *header;      /* NULL: use raw */
    size_t data_len;
    vkattn_result want;
    const char *message;     /* must occur in the last error */
} bad_case;

static void test_bad_headers(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"not json", 0, VKATTN_ERROR_INVALID_ARGUMENT, "the header is not JSON"},
        {"[1, 2]", 0, VKATTN_ERROR_INVALID_ARGUMENT, "not a JSON object"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "duplicate"},
        {"{\"a\":3}", 0, VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a' is not a JSON object"},
        {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, VKATTN_ERROR_INVALID_ARGUMENT,
         "tensor 'a' has no dtype"},
        {"{\"a\":{\"dtype\":\"F7\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a' has unknown dtype 'F7'"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":3,\"data_offsets\":[0,4]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a' has no shape array"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a': shape[0] is not a non-negative integer"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "shape[0]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a' has rank 9"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a': data_offsets end 0 < begin 4"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a': data_offsets end 8 is past the data (4 bytes)"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a': data_offsets must be [begin, end]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a': 4 data bytes but F32 (2,) needs 8"},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,4]}}", 8,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensor 'a': 4 data bytes but F16 (2, 3) needs 12"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
         VKATTN_ERROR_INVALID_ARGUMENT, "tensors 'a' and 'b' overlap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
         "\"data_offsets\":[0,4]}}", 4, VKATTN_ERROR_SIZE_OVERFLOW,
         "tensor 'a': the element count of its shape overflows"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}", 4,
         VKATTN_ERROR_SIZE_OVERFLOW, "tensor 'a': its byte size overflows"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,99999999999999999999999]}}",
         4, VKATTN_ERROR_INVALID_ARGUMENT, "the header is not JSON"},
        /* the tensors must tile the data exactly: no gap first, between or after */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
         VKATTN_ERROR_INVALID_ARGUMENT, "data bytes [0, 4) belong to no tensor (before tensor 'a')"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12,
         VKATTN_ERROR_INVALID_ARGUMENT, "data bytes [4, 8) belong to no tensor (before tensor 'b')"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8,
         VKATTN_ERROR_INVALID_ARGUMENT, "4 data bytes after the last tensor"},
        {"{}", 1, VKATTN_ERROR_INVALID_ARGUMENT, "1 data bytes after the last tensor"},
        /* an empty tensor takes no bytes, at a boundary */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}", 4,
         VKATTN_SUCCESS, ""},
        {"{\"__metadata__\":[1]}", 0, VKATTN_ERROR_INVALID_ARGUMENT,
         "__metadata__ is not a JSON object"},
        {"{}", 0, VKATTN_SUCCESS, ""},
        {"{\"__metadata__\":{}}", 0, VKATTN_SUCCESS, ""},
    };
    uint8_t zeros[16] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t size;
        uint8_t *file = st_raw(cases[i].header, zeros, cases[i].data_len, &size);
        vkattn_weights_file *wf = (vkattn_weights_file *)1;
        vkattn_result r = vkattn_weights_file_open_memory(file, size, "bad.safetensors", &wf);
        if (r != cases[i].want)
            fail_msg("case %zu (%s): %s, expected %s (%s)", i, cases[i].header,
                     vkattn_result_name(r), vkattn_result_name(cases[i].want), vkattn_last_error());
        if (r) {
            assert_null(wf);
            if (!strstr(vkattn_last_error(), cases[i].message) ||
                !strstr(vkattn_last_error(), "bad.safetensors"))
                fail_msg("case %zu: message '%s' lacks '%s'", i, vkattn_last_error(),
                         cases[i].message);
        }
        vkattn_weights_file_close(r ? NULL : wf);
        free(file);
    }
}

/* A header length a few bytes short, the cut bytes being the header's
 * trailing spaces: the JSON still parses, but the data would start that many
 * bytes early and every tensor be read shifted. The tensors no longer reach
 * the end of the data, so the file is refused. */
static void test_short_header_length(void **state)
{
    (void)state;
    float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t *data = st_f32_bytes(w, 8);
    const char *header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                         "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,32]}}"
                         "        ";
    size_t size;
    uint8_t *file = st_raw(header, data, 32, &size);
    size_t hlen = strlen(header);
    vkattn_weights_file *wf;
    float got[4];
    assert_int_equal(vkattn_weights_file_open_memory(file, size, "padded", &wf), VKATTN_SUCCESS);
    assert_int_equal(vkattn_weights_file_read(wf, "b", got, 4), VKATTN_SUCCESS);
    assert_memory_equal(got, w + 4, sizeof got);
    vkattn_weights_file_close(wf);
    for (size_t cut = 1; cut <= 8; cut++) {
        for (int b = 0; b < 8; b++)
            file[b] = (uint8_t)((uint64_t)(hlen - cut) >> (8 * b));
        wf = (vkattn_weights_file *)1;
        vkattn_result r = vkattn_weights_file_open_memory(file, size, "short", &wf);
        if (r != VKATTN_ERROR_INVALID_ARGUMENT)
            fail_msg("header length %zu bytes short: %s", cut, vkattn_result_name(r));
        assert_null(wf);
        char want[64];
        snprintf(want, sizeof want, "short: %zu data bytes after the last tensor", cut);
        if (!strstr(vkattn_last_error(), want))
            fail_msg("cut %zu: message '%s' lacks '%s'", cut, vkattn_last_error(), want);
    }
    free(file), free(data);
}

/* Only a regular file is opened: a FIFO would block in fopen until a writer
 * came (for ever, from a case file's weights_file), so it is refused before. */
static void test_not_regular(void **state)
{
    (void)state;
#ifdef _WIN32
    skip();
#else
    char path[64];
    snprintf(path, sizeof path, "test_weights_file_fifo.%ld", (long)getpid());
    remove(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    vkattn_weights_file *wf = (vkattn_weights_file *)1;
    vkattn_result r = vkattn_weights_file_open(path, &wf);
    remove(path);
    assert_int_equal(r, VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(wf);
    assert_non_null(strstr(vkattn_last_error(), "not a regular file"));
    assert_non_null(strstr(vkattn_last_error(), path));
#endif
}

/* What the 8-byte length can get wrong, and arguments. */
static void test_bad_lengths(void **state)
{
    (void)state;
    vkattn_weights_file *wf;
    uint8_t b[64] = {0};
    assert_int_equal(vkattn_weights_file_open_memory(b, 5, NULL, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "truncated: 5 bytes"));
    b[0] = 0xe8, b[1] = 0x03; /* 1000 */
    assert_int_equal(vkattn_weights_file_open_memory(b, 20, NULL, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "header length 1000 is larger than the file"));
    memset(b, 0xff, 8); /* 2^64 - 1: no overflow in 8 + N */
    assert_int_equal(vkattn_weights_file_open_memory(b, 64, NULL, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "larger than the file"));
    memset(b, 0, 8);
    assert_int_equal(vkattn_weights_file_open_memory(b, 8, NULL, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "too short"));
    b[0] = 4;
    memcpy(b + 8, "{}\0 ", 4); /* a NUL byte in the header */
    assert_int_equal(vkattn_weights_file_open_memory(b, 12, NULL, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "not JSON"));

    assert_int_equal(vkattn_weights_file_open_memory(b, 12, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "out is NULL"));
    assert_int_equal(vkattn_weights_file_open_memory(NULL, 12, NULL, &wf),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "data is NULL"));
    assert_int_equal(vkattn_weights_file_open(NULL, &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "path is NULL"));
    assert_int_equal(vkattn_weights_file_open("no/such/file.safetensors", &wf),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "no/such/file.safetensors: cannot open"));
    assert_int_equal(vkattn_weights_file_open(".", &wf), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(wf);
    assert_non_null(strstr(vkattn_last_error(), ".: is a directory"));
    assert_int_equal(vkattn_weights_file_count(NULL), 0);
    assert_null(vkattn_weights_file_metadata(NULL, "x"));
    vkattn_weights_tensor_info info;
    assert_int_equal(vkattn_weights_file_tensor(NULL, 0, &info), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_weights_file_find(NULL, "a", &info), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_weights_file_read(NULL, "a", NULL, 0), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_weights_file_close(NULL);
}

/* vkattn_weights_save: F32 bits back, metadata, bad arguments. */
static void test_save(void **state)
{
    (void)state;
    tu_seed();
    float a[24], s = 0.5f;
    tu_fill_uniform(a, 24, -3.0f, 3.0f);
    a[3] = -0.0f, a[4] = INFINITY, a[5] = 1e-42f;
    vkattn_weights_tensor t[] = {{"x/a", 3, {2, 3, 4}, a}, {"s", 0, {0}, &s}};
    const char *k[] = {"who"}, *v[] = {"test"};
    const char *path = "test_weights_save.safetensors";
    assert_int_equal(vkattn_weights_save(path, t, 2, k, v, 1), VKATTN_SUCCESS);
    vkattn_weights_file *wf;
    assert_int_equal(vkattn_weights_file_open(path, &wf), VKATTN_SUCCESS);
    assert_string_equal(vkattn_weights_file_metadata(wf, "who"), "test");
    float back[24], sb;
    assert_int_equal(vkattn_weights_file_read(wf, "x/a", back, 24), VKATTN_SUCCESS);
    assert_memory_equal(back, a, sizeof a);
    assert_int_equal(vkattn_weights_file_read(wf, "s", &sb, 1), VKATTN_SUCCESS);
    assert_true(sb == s);
    vkattn_weights_tensor_info info;
    assert_int_equal(vkattn_weights_file_find(wf, "x/a", &info), VKATTN_SUCCESS);
    assert_int_equal(info.data_begin % 4, 0);
    vkattn_weights_file_close(wf);
    remove(path);

    vkattn_weights_tensor dup[] = {{"a", 1, {1}, &s}, {"a", 1, {1}, &s}};
    assert_int_equal(vkattn_weights_save(path, dup, 2, NULL, NULL, 0), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "'a' is used twice"));
    vkattn_weights_tensor nodata[] = {{"a", 1, {1}, NULL}};
    assert_int_equal(vkattn_weights_save(path, nodata, 1, NULL, NULL, 0),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "tensors[0].data is NULL"));
    vkattn_weights_tensor huge[] = {{"a", 2, {1ull << 40, 1ull << 40}, &s}};
    assert_int_equal(vkattn_weights_save(path, huge, 1, NULL, NULL, 0), VKATTN_ERROR_SIZE_OVERFLOW);
    assert_int_equal(vkattn_weights_save("no/such/dir/x.safetensors", t, 2, NULL, NULL, 0),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "cannot create"));
    assert_int_equal(vkattn_weights_save(NULL, t, 2, NULL, NULL, 0), VKATTN_ERROR_INVALID_ARGUMENT);
    remove(path);
}

TU_MAIN(NULL, NULL,
    test_read_exact, test_bad_headers, test_bad_lengths, test_short_header_length, test_not_regular,
    test_save)
