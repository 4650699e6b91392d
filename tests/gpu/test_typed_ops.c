/* 16-bit tensors (f16, bf16) in softmax, dropout, heads split/merge and
 * additive scoring vs the typed CPU reference (vkattn/reference.h), once per
 * row of `halves` (one 16-bit type each).
 *
 * Each case draws fresh inputs exactly representable in their type, gives
 * every data tensor a type at random (f32 or the row's type, every
 * combination over the runs; a random case sometimes the other 16-bit type,
 * so f16 and bf16 meet in one call), poisons the output with NaN, and
 * compares against the exact result of the stored inputs (the typed
 * reference with an f32 output). Bounds, as the headers state them, per
 * element, with e = 1e-5 max|ref| (the f32 kernels' error; 0 for heads and
 * dropout) and R(x) = k sp(|x| + e) for a 16-bit out (0 for f32), sp the
 * spacing of the output's type:
 *   softmax, additive: |got - ref| <= R(ref) + e
 *   heads:             exact, but R(ref) where out is 16-bit of another type
 *   dropout:           the same elements kept as the f32 op (exact zeros
 *                      where dropped), kept values within R(ref)
 * The f32 result y (|y - ref| <= e) is rounded once into the out: by at most
 * k sp(y) <= k sp(|ref| + e). f16: sp = ulp16, 2^(e-10) at 2^e <= |x|, 2^-24
 * below 2^-14; k = 1, as Vulkan leaves the device's f32 -> f16 rounding open
 * (lavapipe rounds to nearest even). bf16: sp = ulp_bf16, 2^(e-7), 2^-133
 * below 2^-126 (f32's exponent range, no f16-like floor); k = 1/2: the
 * rounding is our own GLSL, to nearest even (elem_type.glsl), so a rounding
 * toward zero fails here.
 * Shapes: odd sizes, batch 1, Tq != Tv; softmax with bias (any type),
 * value mask, mask, causal and broadcasts. Bad inputs: 16-bit masks are
 * INVALID_ARGUMENT naming the tensor and both types. Run under the default
 * profile (16-bit storage on lavapipe: float16_t kernels for f16; bf16 packed
 * or staged), mobile-min (packed words, 4 storage buffers: the softmax packs
 * its side inputs) and on an app's imported device (no 16-bit storage, the
 * device's limits).
 * Late failures: on an app's device whose allocator fails its Nth request,
 * for every N a 16-bit additive scoring or heads split record makes (two
 * 16-bit inputs staged through scratch, so N = 2 fails after a staging pass),
 * the record returns OUT_OF_DEVICE_MEMORY and has recorded nothing. */
#include "app_device.h"
#include "harness.h"

#include <vkattn/half.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 1e-5

static const vkattn_dtype F32 = VKATTN_DTYPE_F32, F16 = VKATTN_DTYPE_F16,
                          BF16 = VKATTN_DTYPE_BF16;

/* f16 bits of an exactly representable value, and back */
static uint16_t f16_bits(float x) { return tu_f16_bits(x); }
/* bf16: the top half of the f32 (x is cut to it first) */
static uint16_t bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (uint16_t)(u >> 16);
}
static float bf16_value(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The spacing of f16 at |x| (2^-24 below the normal range). */
static double ulp16(double x)
{
    x = fabs(x);
    if (x < 0x1p-14)
        return 0x1p-24;
    return ldexp(1.0, ilogb(x) - 10);
}

/* The spacing of bf16 at |x|: 8 significand bits, f32's exponents (2^-133
 * below the normal range). */
static double ulp_bf16(double x)
{
    x = fabs(x);
    if (x < 0x1p-126)
        return 0x1p-133;
    return ldexp(1.0, ilogb(x) - 7);
}

/* One 16-bit type: its host bits of a representable value (the value in
 * x: truncation, exact there), the value of bits, its spacing, and the
 * device's rounding error into it in spacings (k above). */
typedef struct half_type {
    vkattn_dtype dtype;
    const char *name;
    uint16_t (*bits)(float x);
    float (*value)(uint16_t bits);
    double (*spacing)(double x);
    double k;
} half_type;

static const half_type halves[] = {
    {VKATTN_DTYPE_F16, "f16", f16_bits, tu_f16_to_f32, ulp16, 1.0},
    {VKATTN_DTYPE_BF16, "bf16", bf16_bits, bf16_value, ulp_bf16, 0.5},
};
enum { N_HALVES = sizeof halves / sizeof halves[0] };

static const half_type *half_of(vkattn_dtype t)
{
    for (int i = 0; i < N_HALVES; i++)
        if (halves[i].dtype == t)
            return &halves[i];
    return NULL;
}

/* The row under test. */
static const half_type *row;

/* f32 or the row's type (bit c), as the fixed cases' combinations */
static vkattn_dtype type_bit(int c) { return c ? row->dtype : F32; }

/* the row's type, f32, or (1 in 4) the other 16-bit type */
static vkattn_dtype random_type(void)
{
    switch (tu_rand_range(0, 3)) {
    case 0:
        return F32;
    case 1:
        return row->dtype == F16 ? BF16 : F16;
    default:
        return row->dtype;
    }
}

/* An input: host floats exactly representable in its type, its typed array
 * for the reference (f16 bit patterns or the floats), and the device tensor. */
typedef struct operand {
    size_t n;
    vkattn_dtype type;
    float *x;
    uint16_t *bits;
    vkattn_tensor *t;
} operand;

static const void *typed(const operand *o) { return o->type != F32 ? (const void *)o->bits : o->x; }

static vkattn_tensor *tensor_of(vkattn_context *ctx, size_t n, vkattn_dtype type)
{
    vkattn_tensor_desc desc = {.rank = 1, .dims = {(uint32_t)n}, .dtype = type};
    vkattn_tensor *t = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &desc, &t));
    TH_OK(ctx, vkattn_tensor_fill(t, NAN)); /* poison */
    return t;
}

static operand make_operand(vkattn_context *ctx, size_t n, vkattn_dtype type, float lo, float hi)
{
    operand o = {.n = n, .type = type, .x = tu_floats(n), .bits = tu_alloc(n * sizeof(uint16_t))};
    tu_fill_uniform(o.x, n, lo, hi);
    const half_type *h = half_of(type);
    for (size_t i = 0; i < n && h; i++) {
        o.bits[i] = h->bits(o.x[i]);
        o.x[i] = h->value(o.bits[i]);
    }
    o.t = tensor_of(ctx, n, type);
    TH_OK(ctx, vkattn_tensor_upload(o.t, o.x, 0, n));
    return o;
}

static void free_operand(operand *o)
{
    free(o->x);
    free(o->bits);
    vkattn_tensor_destroy(o->t);
}

/* got vs the exact ref: |err| <= k sp(|ref| + e) + e, e = rel * max|ref|,
 * k and sp those of `rounded` (NULL: 0); NaN only where the reference has NaN. */
static void compare(const char *what, const float *got, const float *ref, size_t n,
                    const half_type *rounded, double rel)
{
    double scale = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > scale)
            scale = fabs(ref[i]);
    for (size_t i = 0; i < n; i++) {
        if (isnan(ref[i])) {
            if (!isnan(got[i]))
                fail_msg("%s: element %zu: got %.9g, ref NaN", what, i, (double)got[i]);
            continue;
        }
        const double e = rel * scale;
        const double bound = (rounded ? rounded->k * rounded->spacing(fabs(ref[i]) + e) : 0.0) + e;
        if (!TU_WITHIN(fabs((double)got[i] - ref[i]), bound))
            fail_msg("%s: element %zu: got %.9g, ref %.9g (bound %.3g)", what, i, (double)got[i],
                     (double)ref[i], bound);
    }
}

static const char *tn(vkattn_dtype t) { return half_of(t) ? half_of(t)->name : "f32"; }

/* ------------------------------------------------------------------ softmax */

static void softmax_case(vkattn_context *ctx, uint32_t b, uint32_t h, uint32_t tq, uint32_t tv,
                         vkattn_dtype ts, vkattn_dtype tb, vkattn_dtype to, bool in_place)
{
    vkattn_softmax_params p = {.batch = b, .heads = h, .tq = tq, .tv = tv};
    static const float scales[] = {1.0f, 0.5f, -2.0f, 0.125f};
    p.scale = scales[tu_rand_range(0, 3)];
    vkattn_mask_params *m = &p.mask;
    m->causal = (vkattn_causal)tu_rand_range(0, 2);
    m->masked_row = (vkattn_masked_row)tu_rand_range(0, 1);
    m->has_bias = tu_rand_range(0, 1);
    m->has_value_mask = tu_rand_range(0, 1);
    m->has_mask = tu_rand_range(0, 1);
    m->bias_broadcast = (vkattn_broadcast){tu_rand_range(0, 1), tu_rand_range(0, 1),
                                           tu_rand_range(0, 1)};
    m->mask_broadcast = (vkattn_broadcast){tu_rand_range(0, 1), tu_rand_range(0, 1),
                                           tu_rand_range(0, 1)};
    if (in_place)
        to = ts;
    const size_t n = (size_t)b * h * tq * tv;
    const size_t nb = (size_t)(m->bias_broadcast.batch ? 1 : b) * (m->bias_broadcast.heads ? 1 : h) *
                      (m->bias_broadcast.rows ? 1 : tq) * tv;
    const size_t nm = (size_t)(m->mask_broadcast.batch ? 1 : b) * (m->mask_broadcast.heads ? 1 : h) *
                      (m->mask_broadcast.rows ? 1 : tq) * tv;
    operand s = make_operand(ctx, n, ts, -4, 4);
    operand bias = {0}, vmask = {0}, mask = {0};
    if (m->has_bias)
        bias = make_operand(ctx, nb, tb, -2, 2);
    if (m->has_value_mask) {
        vmask = make_operand(ctx, (size_t)b * tv, F32, 0, 1);
        tu_fill_mask(vmask.x, vmask.n, 0.8f);
        TH_OK(ctx, vkattn_tensor_upload(vmask.t, vmask.x, 0, vmask.n));
    }
    if (m->has_mask) {
        mask = make_operand(ctx, nm, F32, 0, 1);
        tu_fill_mask(mask.x, mask.n, 0.8f);
        TH_OK(ctx, vkattn_tensor_upload(mask.t, mask.x, 0, mask.n));
    }
    vkattn_tensor *out = in_place ? s.t : tensor_of(ctx, n, to);
    vkattn_softmax_io io = {.scores = s.t, .bias = bias.t, .value_mask = vmask.t,
                            .mask = mask.t, .out = out};
    TH_OK(ctx, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(out, n), *ref = tu_floats(n);
    const vkattn_softmax_dtypes ty = {.scores = ts, .bias = tb, .out = F32};
    TH_OK(ctx, vkattn_reference_softmax(&p, &ty, typed(&s), m->has_bias ? typed(&bias) : NULL,
                                              vmask.x, mask.x, ref));
    char what[160];
    snprintf(what, sizeof what, "softmax %ux%ux%ux%u scores %s bias %s out %s%s", b, h, tq, tv,
             tn(ts), tn(tb), tn(to), in_place ? " in place" : "");
    compare(what, got, ref, n, half_of(to), BOUND);
    free(got);
    free(ref);
    if (!in_place)
        vkattn_tensor_destroy(out);
    free_operand(&s);
    if (m->has_bias)
        free_operand(&bias);
    if (m->has_value_mask)
        free_operand(&vmask);
    if (m->has_mask)
        free_operand(&mask);
}

static void softmax_row(vkattn_context *ctx)
{
    /* every type combination on fixed odd shapes, then random ones */
    for (int c = 0; c < 8; c++)
        softmax_case(ctx, 1 + c % 2, 1 + c % 3, 3 + c, 7 + 5 * c, type_bit(c & 1),
                     type_bit((c >> 1) & 1), type_bit((c >> 2) & 1), false);
    const vkattn_dtype h = row->dtype;
    softmax_case(ctx, 1, 1, 1, 1, h, h, h, false);
    softmax_case(ctx, 1, 2, 5, 1031, h, F32, h, false); /* beyond a cached row on lavapipe */
    for (int i = 0; i < 14; i++)
        softmax_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 3), tu_rand_range(1, 17),
                     tu_rand_range(1, 150), random_type(), random_type(), random_type(),
                     i % 4 == 0);
    th_assert_validation_clean();
}

/* ----------------------------------------------------------------- additive */

static void additive_case(vkattn_context *ctx, uint32_t b, uint32_t tq, uint32_t tv, uint32_t dim,
                          bool has_scale, vkattn_additive_dtypes ty)
{
    vkattn_additive_params p = {.batch = b, .tq = tq, .tv = tv, .dim = dim,
                                .has_scale_vector = has_scale};
    p.inner_scale = tu_rand_range(0, 1) ? 0.0f : 0.75f;
    p.outer_scale = tu_rand_range(0, 1) ? 0.0f : -1.5f;
    operand q = make_operand(ctx, (size_t)b * tq * dim, ty.q, -2, 2);
    operand k = make_operand(ctx, (size_t)b * tv * dim, ty.k, -2, 2);
    operand sc = {0};
    if (has_scale)
        sc = make_operand(ctx, dim, ty.scale, -1, 1);
    const size_t n = (size_t)b * tq * tv;
    vkattn_tensor *out = tensor_of(ctx, n, ty.scores);
    vkattn_additive_io io = {.q = q.t, .k = k.t, .scale = sc.t, .scores = out};
    TH_OK(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(out, n), *ref = tu_floats(n);
    vkattn_additive_dtypes rt = ty;
    rt.scores = F32;
    TH_OK(ctx, vkattn_reference_additive(&p, &rt, typed(&q), typed(&k),
                                               has_scale ? typed(&sc) : NULL, ref));
    char what[160];
    snprintf(what, sizeof what, "additive %ux%ux%ux%u q %s k %s scale %s scores %s", b, tq, tv,
             dim, tn(ty.q), tn(ty.k), tn(ty.scale), tn(ty.scores));
    compare(what, got, ref, n, half_of(ty.scores), BOUND);
    free(got);
    free(ref);
    vkattn_tensor_destroy(out);
    free_operand(&q);
    free_operand(&k);
    if (has_scale)
        free_operand(&sc);
}

static void additive_row(vkattn_context *ctx)
{
    for (int c = 0; c < 16; c++) {
        vkattn_additive_dtypes ty = {type_bit(c & 1), type_bit((c >> 1) & 1),
                                     type_bit((c >> 2) & 1), type_bit((c >> 3) & 1)};
        additive_case(ctx, 1 + c % 2, 3 + c, 5 + 2 * c, 1 + 3 * c, c % 3 != 0, ty);
    }
    for (int i = 0; i < 10; i++) {
        vkattn_additive_dtypes ty = {random_type(), random_type(), random_type(), random_type()};
        additive_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 40), tu_rand_range(1, 40),
                      tu_rand_range(1, 70), tu_rand_range(0, 1), ty);
    }
    th_assert_validation_clean();
}

/* -------------------------------------------------------------------- heads */

static void heads_case(vkattn_context *ctx, uint32_t b, uint32_t t, uint32_t h, uint32_t d,
                       bool split, vkattn_io_dtypes ty)
{
    const vkattn_heads_params p = {.batch = b, .seq = t, .heads = h, .head_dim = d};
    const size_t n = (size_t)b * t * h * d;
    operand in = make_operand(ctx, n, ty.in, -100, 100);
    vkattn_tensor *out = tensor_of(ctx, n, ty.out);
    vkattn_heads_io io = {.in = in.t, .out = out};
    TH_OK(ctx, split ? vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &p, &io) : vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(out, n), *ref = tu_floats(n);
    const vkattn_io_dtypes rt = {.in = ty.in, .out = F32};
    TH_OK(ctx, split ? vkattn_reference_heads_split(&p, &rt, typed(&in), ref)
                     : vkattn_reference_heads_merge(&p, &rt, typed(&in), ref));
    char what[128];
    snprintf(what, sizeof what, "heads %s %ux%ux%ux%u in %s out %s", split ? "split" : "merge", b,
             t, h, d, tn(ty.in), tn(ty.out));
    /* rounding only into a 16-bit out of another type */
    compare(what, got, ref, n, ty.in != ty.out ? half_of(ty.out) : NULL, 0.0);
    free(got);
    free(ref);
    vkattn_tensor_destroy(out);
    free_operand(&in);
}

static void heads_row(vkattn_context *ctx)
{
    for (int c = 0; c < 8; c++) {
        vkattn_io_dtypes ty = {type_bit(c & 1), type_bit((c >> 1) & 1)};
        heads_case(ctx, 1 + c % 2, 3 + c, 1 + c % 3, 1 + 2 * c, c & 4, ty);
    }
    for (int i = 0; i < 12; i++) {
        vkattn_io_dtypes ty = {random_type(), random_type()};
        heads_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 20), tu_rand_range(1, 5),
                   tu_rand_range(1, 33), tu_rand_range(0, 1), ty);
    }
    th_assert_validation_clean();
}

/* ------------------------------------------------------------------ dropout */

static void dropout_case(vkattn_context *ctx, uint32_t b, uint32_t h, uint32_t tq, uint32_t tv,
                         float rate, bool training, bool in_place, vkattn_io_dtypes ty)
{
    vkattn_dropout_op_params p = {.batch = b, .heads = h, .tq = tq, .tv = tv,
                                  .dropout = {.rate = rate, .training = training,
                                              .seed = tu_rand_u32() | (uint64_t)tu_rand_u32() << 32,
                                              .offset = tu_rand_range(0, 1000)}};
    if (in_place)
        ty.out = ty.in;
    const size_t n = (size_t)b * h * tq * tv;
    operand in = make_operand(ctx, n, ty.in, 0.5f, 3); /* nonzero: a kept element is nonzero */
    vkattn_tensor *out = in_place ? in.t : tensor_of(ctx, n, ty.out);
    vkattn_dropout_io io = {.in = in.t, .out = out};
    TH_OK(ctx, vkattn_dropout_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(out, n), *ref = tu_floats(n);
    uint8_t *keep = tu_alloc(n);
    const vkattn_io_dtypes rt = {.in = ty.in, .out = F32};
    TH_OK(ctx, vkattn_reference_dropout(&p, &rt, typed(&in), ref));
    TH_OK(ctx, vkattn_reference_dropout_mask(&p, keep));
    char what[160];
    snprintf(what, sizeof what, "dropout %ux%ux%ux%u rate %g%s in %s out %s%s", b, h, tq, tv,
             (double)rate, training ? "" : " (not training)", tn(ty.in), tn(ty.out),
             in_place ? " in place" : "");
    /* the f32 op's Philox mask: exact zeros where dropped, nonzero where kept */
    for (size_t i = 0; i < n; i++)
        if ((got[i] != 0.0f) != (keep[i] != 0))
            fail_msg("%s: element %zu: got %.9g but the keep mask says %d", what, i,
                     (double)got[i], keep[i]);
    compare(what, got, ref, n, half_of(ty.out), 0.0);
    free(got);
    free(ref);
    free(keep);
    if (!in_place)
        vkattn_tensor_destroy(out);
    free_operand(&in);
}

static void dropout_row(vkattn_context *ctx)
{
    for (int c = 0; c < 4; c++) {
        vkattn_io_dtypes ty = {type_bit(c & 1), type_bit((c >> 1) & 1)};
        dropout_case(ctx, 1, 1 + c, 3 + c, 5 + 2 * c, 0.3f, true, false, ty);
        dropout_case(ctx, 2, 1, 1, 1 + c, 0.5f, true, c == 3, ty);
        dropout_case(ctx, 1, 2, 3, 7, 0.25f, false, false, ty); /* a copy */
    }
    for (int i = 0; i < 10; i++) {
        vkattn_io_dtypes ty = {random_type(), random_type()};
        dropout_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 3), tu_rand_range(1, 20),
                     tu_rand_range(1, 90), tu_rand_float(0.05f, 0.9f), true, i % 3 == 0, ty);
    }
    th_assert_validation_clean();
}

/* test_NAME: NAME_row once per 16-bit type */
#define PER_ROW(name)                                                                          \
    static void test_##name(void **state)                                                      \
    {                                                                                          \
        for (int r = 0; r < N_HALVES; r++) {                                                   \
            row = &halves[r];                                                                  \
            name##_row(TH_CTX(state));                                                         \
        }                                                                                      \
    }
PER_ROW(softmax)
PER_ROW(additive)
PER_ROW(heads)
PER_ROW(dropout)

/* ---------------------------------------------------------------- bad input */

static void expect_message(vkattn_context *ctx, const char *a, const char *b, const char *c)
{
    const char *msg = vkattn_context_last_error(ctx);
    if (!strstr(msg, a) || !strstr(msg, b) || !strstr(msg, c))
        fail_msg("message \"%s\" lacks \"%s\", \"%s\" or \"%s\"", msg, a, b, c);
}

static void bad_inputs_row(vkattn_context *ctx)
{
    vkattn_tensor *h = tensor_of(ctx, 64, row->dtype), *f = tensor_of(ctx, 64, F32);
    vkattn_tensor *out = tensor_of(ctx, 64, row->dtype);
    vkattn_softmax_params sp = {.batch = 2, .tq = 4, .tv = 4, .mask = {.has_value_mask = true}};
    vkattn_softmax_io sio = {.scores = f, .value_mask = h, .out = out};
    assert_int_equal(vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &sp, &sio), VKATTN_ERROR_INVALID_ARGUMENT);
    expect_message(ctx, "io->value_mask", row->name, "f32");
    assert_int_equal(vkattn_softmax_record(ctx, VKATTN_PREPARE, &sp, &sio), VKATTN_ERROR_INVALID_ARGUMENT);
    sp.mask = (vkattn_mask_params){.has_mask = true};
    sio = (vkattn_softmax_io){.scores = f, .mask = h, .out = out};
    assert_int_equal(vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &sp, &sio), VKATTN_ERROR_INVALID_ARGUMENT);
    expect_message(ctx, "io->mask", row->name, "f32");
    /* 16-bit tensors that are too small are still too small */
    vkattn_tensor *small = tensor_of(ctx, 15, row->dtype);
    sp.mask = (vkattn_mask_params){0};
    sio = (vkattn_softmax_io){.scores = small, .out = out};
    assert_int_equal(vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &sp, &sio), VKATTN_ERROR_INVALID_ARGUMENT);
    expect_message(ctx, "io->scores", "15", "32");
    /* 16-bit through prepare (dry recording) */
    sio.scores = h;
    TH_OK(ctx, vkattn_softmax_record(ctx, VKATTN_PREPARE, &sp, &sio));
    vkattn_heads_params hp = {.batch = 1, .seq = 4, .heads = 2, .head_dim = 8};
    vkattn_heads_io hio = {.in = h, .out = h};
    assert_int_equal(vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &hp, &hio), VKATTN_ERROR_INVALID_ARGUMENT);
    expect_message(ctx, "io->in", "io->out", "in place");

    /* the typed references */
    const vkattn_io_dtypes bad = {.in = (vkattn_dtype)5, .out = F32};
    float x[8] = {0}, y[8];
    vkattn_dropout_op_params dp = {.batch = 1, .tq = 2, .tv = 4,
                                   .dropout = {.rate = 0.5f, .training = true}};
    assert_int_equal(vkattn_reference_dropout(&dp, &bad, x, y),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    const vkattn_io_dtypes mixed = {.in = row->dtype, .out = F32};
    assert_int_equal(vkattn_reference_dropout(&dp, &mixed, x, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_softmax_dtypes st = {.out = (vkattn_dtype)2};
    vkattn_softmax_params sp1 = {.batch = 1, .tq = 2, .tv = 4};
    assert_int_equal(vkattn_reference_softmax(&sp1, &st, x, NULL, NULL, NULL, y),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_tensor_destroy(h);
    vkattn_tensor_destroy(f);
    vkattn_tensor_destroy(out);
    vkattn_tensor_destroy(small);
    th_assert_validation_clean();
}
PER_ROW(bad_inputs)

/* The typed reference with a 16-bit output is the f32 one rounded once (to
 * nearest: within half a spacing). */
static void test_reference_rounding(void **state)
{
    (void)state;
    vkattn_softmax_params p = {.batch = 1, .heads = 2, .tq = 3, .tv = 37};
    const size_t n = 2 * 3 * 37;
    float *s = tu_floats(n), *r32 = tu_floats(n);
    uint16_t *r16 = tu_alloc(n * sizeof *r16);
    tu_fill_uniform(s, n, -3, 3);
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, NULL, r32), VKATTN_SUCCESS);
    for (int h = 0; h < N_HALVES; h++) {
        const vkattn_softmax_dtypes t16 = {.out = halves[h].dtype};
        assert_int_equal(vkattn_reference_softmax(&p, &t16, s, NULL, NULL, NULL, r16),
                         VKATTN_SUCCESS);
        for (size_t i = 0; i < n; i++)
            assert_true(fabs(halves[h].value(r16[i]) - r32[i]) <=
                        0.5 * halves[h].spacing(r32[i]) + 1e-7);
    }
    free(s);
    free(r32);
    free(r16);
}

/* A context on an app's device: vkattn enables no 16-bit storage there, and
 * the limits are the device's, so 16-bit tensors are read as packed words by the
 * 5-binding kernels (softmax.comp) rather than the 4-binding ones. */
static ad_app app;
static vkattn_context *own;

static int setup_app(void **state)
{
    *state = NULL;
    if (th_setup(state) != 0 || !*state)
        return 0; /* skipped, as th_setup's tests are */
    own = *state;
    ad_open(own, false, &app);
    vkattn_context_info info;
    TH_OK(app.ctx, vkattn_context_get_info(app.ctx, &info));
    assert_false(info.storage_buffer_16bit);
    *state = app.ctx;
    return 0;
}

static int teardown_app(void **state)
{
    if (!own)
        return 0;
    ad_close(&app);
    *state = own;
    own = NULL;
    return th_teardown(state);
}

/* ------------------------------------------------------------ late failures */

/* The app's allocator: vkAllocateMemory per request, failing the fail_at-th
 * request (1-based) after arming; counts requests. */
typedef struct fault_allocator {
    uint32_t count, fail_at;
    bool failed;
} fault_allocator;

static vkattn_result fa_allocate(void *user, const vkattn_allocation_request *req,
                                 vkattn_allocation *out)
{
    fault_allocator *fa = user;
    if (fa->fail_at && ++fa->count == fa->fail_at) {
        fa->failed = true;
        return VKATTN_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req->size,
                               .memoryTypeIndex = req->memory_type_index};
    if (vkAllocateMemory(req->device, &ai, NULL, &out->memory) != VK_SUCCESS)
        return VKATTN_ERROR_OUT_OF_DEVICE_MEMORY;
    out->offset = 0;
    out->mapped = NULL;
    out->user_data = req->device;
    if (req->host_visible)
        assert_int_equal(vkMapMemory(req->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped),
                         VK_SUCCESS);
    return VKATTN_SUCCESS;
}

static void fa_free(void *user, const vkattn_allocation *a)
{
    (void)user;
    vkFreeMemory((VkDevice)a->user_data, a->memory, NULL);
}

typedef enum staged_op { STAGED_ADDITIVE, STAGED_HEADS, STAGED_N } staged_op;

/* Records `op` with tensors of the row's type on a fresh context (so its scratch must
 * grow), the allocator failing its fail_at-th request from the record on (0:
 * none). Returns the requests the record made, its result in *r and the
 * commands it recorded in *commands. */
static uint32_t staged_record(vkattn_context *own, staged_op op, uint32_t fail_at,
                              vkattn_result *r, unsigned *commands)
{
    fault_allocator fa = {0};
    const ad_options o = {.allocator = {.user = &fa, .allocate = fa_allocate, .free = fa_free}};
    ad_app app;
    assert_true(ad_open_with(own, &o, &app));
    vkattn_context *ctx = app.ctx;
    const uint32_t b = 2, t = 5, h = 3, d = 7;
    const size_t n = (size_t)b * t * h * d;
    vkattn_tensor *x = tensor_of(ctx, n, row->dtype), *y = tensor_of(ctx, n, row->dtype);
    vkattn_tensor *z = tensor_of(ctx, n, F32);
    /* additive: q (b, t, d) and k (b, t h, d) 16-bit, scores (b, t, t h) f32;
     * heads: in (b, t, h d) and out (b, h, t, d) 16-bit */
    VkCommandBuffer cmd = ad_begin(&app, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    fa.fail_at = fail_at ? fail_at : UINT32_MAX;
    const unsigned before = ad_stats.commands;
    if (op == STAGED_ADDITIVE) {
        const vkattn_additive_params p = {.batch = b, .tq = t, .tv = t * h, .dim = d};
        const vkattn_additive_io io = {.q = x, .k = y, .scores = z};
        *r = vkattn_additive_record(ctx, cmd, &p, &io);
    } else {
        const vkattn_heads_params p = {.batch = b, .seq = t, .heads = h, .head_dim = d};
        const vkattn_heads_io io = {.in = x, .out = y};
        *r = vkattn_heads_split_record(ctx, cmd, &p, &io);
    }
    *commands = ad_stats.commands - before;
    const uint32_t asked = fa.count;
    assert_true(!fail_at || fa.failed);
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    vkFreeCommandBuffers(app.device, app.pool, 1, &cmd);
    vkattn_tensor_destroy(x);
    vkattn_tensor_destroy(y);
    vkattn_tensor_destroy(z);
    ad_close(&app);
    return asked;
}

static void late_failure_records_nothing_row(vkattn_context *ctx)
{
    static const char *const names[STAGED_N] = {"additive", "heads split"};
    for (int op = 0; op < STAGED_N; op++) {
        vkattn_result r;
        unsigned commands;
        const uint32_t asked = staged_record(ctx, (staged_op)op, 0, &r, &commands);
        TH_OK(ctx, r);
        printf("# %s, %s staged: %u allocations, %u commands\n", names[op], row->name, asked,
               commands);
        assert_true(asked >= 2); /* the two staged inputs' scratch */
        assert_true(commands >= 3);
        for (uint32_t n = 1; n <= asked; n++) {
            staged_record(ctx, (staged_op)op, n, &r, &commands);
            if (r != VKATTN_ERROR_OUT_OF_DEVICE_MEMORY || commands != 0)
                fail_msg("%s %s, allocation %u failed: %s with %u commands recorded", row->name,
                         names[op], n, vkattn_result_name(r), commands);
        }
    }
}
PER_ROW(late_failure_records_nothing)

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_softmax, test_additive, test_heads, test_dropout, test_bad_inputs,
        test_reference_rounding)};
    int failed = TH_RUN_WITH_MOBILE("16-bit ops", tests);
    failed += cmocka_run_group_tests_name("16-bit ops, app device (no 16-bit storage)", tests,
                                          setup_app, teardown_app);
    const struct CMUnitTest late[] = {cmocka_unit_test(test_late_failure_records_nothing)};
    return failed + cmocka_run_group_tests_name("16-bit ops, late failures", late, th_setup,
                                                th_teardown);
}
