/* attnbench bench decode: attention of Tq new queries against a KV cache
 * already holding --tv keys per sequence (vkattn/decode.h). The cache is
 * filled during setup (the app's K/V tensors, then
 * vkattn_kv_cache_set_lengths), so only the decode call is timed. Checked
 * against vkattn_reference_sdpa_decode. --kv-int8: an int8 cache, filled
 * by one append of the same K/V (an int8 cache takes no app tensors),
 * checked against the reference on its storage dequantized here from the
 * documented layout (vkattn/kv_cache.h). */
#include "bounds.h"
#include "common.h"
#include "ops.h"
#include "sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vkattn/half.h>

typedef struct dec_state {
    vkattn_context *ctx;
    vkattn_sdpa_decode_params p;
    vkattn_kv_cache *cache;
    uint32_t *lengths; /* (B), all tv */
    ab_buf q, k, v, vmask, out;
    vkattn_dtype dtype; /* --dtype: q, out and the cache (k and v) */
    bool i8;   /* --kv-int8: an int8 cache */
} dec_state;

static void dec_destroy(void *state)
{
    dec_state *s = state;
    if (!s)
        return;
    vkattn_kv_cache_destroy(s->cache); /* before the app tensors it holds */
    ab_buf *bufs[] = {&s->q, &s->k, &s->v, &s->vmask, &s->out};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ab_buf_free(bufs[i]);
    free(s->lengths);
    free(s);
}

/* The sizes with decode's own defaults (one new query against 512 cached
 * keys) and *g the K/V heads. Their usage errors need no device: bench
 * checks them (dec_check_args) before a context is made. */
static int dec_dims(const ab_args *a, ab_dims *d, uint32_t *g)
{
    ab_args b = *a;
    if (!(b.given & AB_F_TQ))
        b.given |= AB_F_TQ, b.tq = 1;
    if (!(b.given & AB_F_TV))
        b.given |= AB_F_TV, b.tv = 512;
    int st = ab_attention_dims("decode", &b, 8, d);
    if (st)
        return st;
    *g = (a->given & AB_F_KV_HEADS) ? a->kv_heads : d->heads;
    if (!*g || d->heads % *g) {
        fprintf(stderr, "attnbench: decode: --kv-heads must be >= 1 and divide --heads\n");
        return ATTNBENCH_EXIT_USAGE;
    }
    if (a->kv_int8 && (d->dk % 4 || d->dv % 4)) {
        fprintf(stderr, "attnbench: decode: --kv-int8 needs --dk and --dv multiples of 4\n");
        return ATTNBENCH_EXIT_USAGE;
    }
    if (d->tq > VKATTN_DECODE_MAX_TQ) {
        fprintf(stderr, "attnbench: decode: --tq must be at most %u\n", VKATTN_DECODE_MAX_TQ);
        return ATTNBENCH_EXIT_USAGE;
    }
    return ATTNBENCH_EXIT_OK;
}

static int dec_check_args(const ab_args *a)
{
    ab_dims d;
    uint32_t g;
    int st = dec_dims(a, &d, &g);
    if (st)
        return st;
    /* the arrays must be countable (sizes.h); the value mask (B, L) is smaller */
    const ab_factor B = {"--batch", d.batch}, H = {"--heads", d.heads}, G = {"--kv-heads", g},
                    Tq = {"--tq", d.tq}, L = {"--tv", d.tv}, Dk = {"--dk", d.dk},
                    Dv = {"--dv", d.dv};
    const bool fit = AB_FITS("decode", "Q", B, H, Tq, Dk) && AB_FITS("decode", "K", B, G, L, Dk) &&
                     AB_FITS("decode", "V", B, G, L, Dv) &&
                     AB_FITS("decode", "the output", B, H, Tq, Dv);
    return fit ? ATTNBENCH_EXIT_OK : ATTNBENCH_EXIT_USAGE;
}

static int dec_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    dec_state *s = calloc(1, sizeof *s);
    if (!s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "decode");
    *state = s;
    s->ctx = ctx;
    ab_dims d;
    uint32_t g;
    int st = dec_dims(a, &d, &g);
    if (st)
        return st;
    bool vm = a->mask_ratio > 0;
    s->p = (vkattn_sdpa_decode_params){
        .batch = d.batch, .heads = d.heads, .tq = d.tq, .kv_heads = g,
        .capacity = d.tv, .dk = d.dk, .dv = d.dv,
        .has_value_mask = vm,
        .dropout = {.rate = (float)a->dropout, .training = a->dropout > 0, .seed = a->seed},
        .sliding_window = a->window,
        .num_splits = a->splits,
    };
    ab_rng rng = {a->seed};
    /* --dtype f16|bf16: a cache, q and out of that type (the value mask stays f32) */
    const vkattn_dtype dt = s->dtype = a->dtype;
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->q, -1, 1, dt, d.batch, d.heads, d.tq, d.dk)},
        {AB_INPUT(&s->k, -1, 1, dt, d.batch, g, d.tv, d.dk)},
        {AB_INPUT(&s->v, -1, 1, dt, d.batch, g, d.tv, d.dv)},
        {AB_MASK(&s->vmask, a->mask_ratio, d.batch, d.tv), .absent = !vm},
        {AB_OUTPUT(&s->out, dt, d.batch, d.heads, d.tq, d.dv)},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "decode", a, "decode: creating tensors");
    s->i8 = a->kv_int8;
    vkattn_kv_cache_desc cd = {.batch = d.batch, .kv_heads = g, .capacity = d.tv,
                               .key_dim = d.dk, .value_dim = d.dv,
                               .keys = s->i8 ? NULL : s->k.t, .values = s->i8 ? NULL : s->v.t,
                               .dtype = s->i8 ? VKATTN_DTYPE_I8 : dt};
    if ((r = vkattn_kv_cache_create(ctx, &cd, &s->cache)))
        return ab_setup_refused(ctx, r, "decode", a, "decode: creating the KV cache");
    s->lengths = malloc(sizeof *s->lengths * d.batch);
    if (!s->lengths)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "decode");
    for (uint32_t i = 0; i < d.batch; i++)
        s->lengths[i] = d.tv;
    const vkattn_kv_append_io fill = {.k = s->k.t, .v = s->v.t};
    if (s->i8 && (r = vkattn_kv_cache_append_record(s->cache, VKATTN_RUN_NOW, &fill)))
        return ab_report(ctx, r, "decode: filling the int8 KV cache");
    if (!s->i8 && (r = vkattn_kv_cache_set_lengths(s->cache, s->lengths)))
        return ab_report(ctx, r, "decode: setting the cache lengths");
    *info = (ab_op_info){.batch = d.batch, .heads = d.heads, .kv_heads = g, .tq = d.tq,
                         .tv = d.tv, .dk = d.dk, .dv = d.dv};
    info->flops = 2.0 * d.batch * d.heads * d.tq * d.tv * ((double)d.dk + d.dv);
    /* the cache rows read once per K/V head (shared by its query heads), q,
     * the value mask (f32) and out; an int8 row is its width plus a 4-byte
     * scale */
    const double rows = (double)d.batch * g * d.tv, el = dt != VKATTN_DTYPE_F32 ? 2.0 : 4.0;
    info->bytes = (s->i8 ? rows * ((double)d.dk + d.dv + 8.0) : el * rows * ((double)d.dk + d.dv)) +
                  el * ((double)s->q.n + (double)s->out.n) + 4.0 * (double)s->vmask.n;
    info->output = s->out.t, info->output_count = s->out.n;
    return ATTNBENCH_EXIT_OK;
}

static vkattn_sdpa_decode_io dec_io(dec_state *s)
{
    return (vkattn_sdpa_decode_io){.q = s->q.t, .cache = s->cache, .value_mask = s->vmask.t,
                                   .out = s->out.t};
}

static vkattn_result dec_record(void *state, VkCommandBuffer cmd)
{
    dec_state *s = state;
    vkattn_sdpa_decode_io io = dec_io(s);
    return vkattn_sdpa_decode_record(s->ctx, cmd, &s->p, &io);
}

static vkattn_result dec_prepare(void *state)
{
    dec_state *s = state;
    vkattn_sdpa_decode_io io = dec_io(s);
    return vkattn_sdpa_decode_record(s->ctx, VKATTN_PREPARE, &s->p, &io);
}

/* An int8 cache's K or V storage (vkattn/kv_cache.h: the rows' words of four
 * int8, then their fp32 scales) dequantized into x (rows * width), q * scale. */
static vkattn_result dequantize(vkattn_tensor *t, size_t rows, uint32_t width, float *x)
{
    const size_t w4 = width / 4, nw = rows * w4 + rows;
    uint32_t *words = malloc(nw * sizeof *words);
    if (!words)
        return VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    vkattn_result r = vkattn_tensor_download_raw(t, words, 0, nw);
    for (size_t row = 0; r == VKATTN_SUCCESS && row < rows; row++) {
        float scale;
        memcpy(&scale, &words[rows * w4 + row], sizeof scale);
        for (uint32_t e = 0; e < width; e++)
            x[row * width + e] = (float)(int8_t)(words[row * w4 + e / 4] >> (8 * (e % 4))) * scale;
    }
    free(words);
    return r;
}

static int dec_check(vkattn_context *ctx, void *state, double *err)
{
    dec_state *s = state;
    /* f16: the reference's out rounded once, as the device may round either
     * way (two ulps allowed); bf16: the unrounded result, which vkattn's own
     * rounding to nearest even stays within half a spacing of */
    const bool narrow = s->dtype == VKATTN_DTYPE_F16;
    float *ref = ab_floats(s->out.n);
    uint16_t *ref16 = narrow ? malloc(sizeof(uint16_t) * s->out.n) : NULL;
    float *kd = s->i8 ? ab_floats(s->k.n) : NULL, *vd = s->i8 ? ab_floats(s->v.n) : NULL;
    if (!ref || (narrow && !ref16) || (s->i8 && (!kd || !vd))) {
        free(ref), free(ref16), free(kd), free(vd);
        return ATTNBENCH_EXIT_CHECK;
    }
    /* the host q, K and V hold the 16-bit tensors' values exactly under
     * --dtype f16|bf16; an int8 cache is checked on its own storage,
     * dequantized */
    const vkattn_kv_cache_desc cd = vkattn_kv_cache_get_desc(s->cache);
    const size_t rows = (size_t)cd.batch * cd.kv_heads * cd.capacity;
    vkattn_result r = VKATTN_SUCCESS;
    if (s->i8 && ((r = dequantize(cd.keys, rows, cd.key_dim, kd)) ||
                  (r = dequantize(cd.values, rows, cd.value_dim, vd))))
        free(kd), free(vd), kd = vd = NULL;
    if (r == VKATTN_SUCCESS)
        r = vkattn_reference_sdpa_decode(&s->p,
                                         &(vkattn_sdpa_dtypes){.out = narrow ? s->dtype
                                                                             : VKATTN_DTYPE_F32},
                                         s->q.host, s->i8 ? kd : s->k.host,
                                         s->i8 ? vd : s->v.host, s->lengths, s->vmask.host,
                                         narrow ? (void *)ref16 : ref);
    free(kd), free(vd);
    for (size_t i = 0; narrow && i < s->out.n; i++)
        ref[i] = ab_half_value(s->dtype, ref16[i]);
    free(ref16);
    int st = r ? ab_report(NULL, r, "decode reference")
               : ab_check_outputs(ctx, dec_record, s, (ab_buf *[]){&s->out}, &ref, 1, err);
    free(ref);
    return st;
}

const ab_op ab_op_decode = {
    .name = "decode",
    .summary = "decode attention: Q (B, H, Tq, dk) against a KV cache of --tv keys per sequence, "
               "--kv-heads K/V heads",
    .flags = AB_F_BATCH | AB_F_HEADS | AB_F_KV_HEADS | AB_F_TQ | AB_F_TV | AB_F_DK | AB_F_DV |
             AB_F_MASK_RATIO | AB_F_DROPOUT | AB_F_FP16 | AB_F_BF16 | AB_F_WINDOW | AB_F_SPLITS |
             AB_F_KV_INT8,
    .bound = AB_BOUND_DECODE,
    .bound_fp16 = AB_BOUND_DECODE_FP16,
    .bound_bf16 = AB_BOUND_DECODE_BF16,
    .setup = dec_setup, .record = dec_record, .prepare = dec_prepare, .check = dec_check,
    .destroy = dec_destroy, .check_args = dec_check_args,
};
