/* SDPA's few-row calls on the decode kernel (ops/sdpa_few_rows.h). */
#include "ops/sdpa_few_rows.h"

#include "core/dtype.h"
#include "ops/kv_cache.h"
#include "vk/tensor.h"

/* The decode call that serves SDPA's few-row call k: K and V viewed as a full
 * cache of capacity Tv. flat: Q (B, H, Tq, dk) is (B, H * Tq, 1, dk) with
 * H * Tq / Hkv query heads per K/V head; one row per head sees every key. */
static vkattn_sdpa_decode_params decode_params(vka_sdpa_rows_kernel k, const vkattn_sdpa_params *p,
                                               const vka_sdpa_shape *s)
{
    const bool flat = k == VKA_SDPA_ROWS_DECODE_FLAT;
    return (vkattn_sdpa_decode_params){
        .batch = s->batch, .heads = flat ? s->heads * s->tq : s->heads, .tq = flat ? 1 : s->tq,
        .kv_heads = s->kv_heads, .capacity = s->tv, .dk = s->dk, .dv = s->dv, .scale = p->scale,
        .has_value_mask = p->mask.has_value_mask,
        .sliding_window = flat ? 0 : p->sliding_window, /* flat: no window (the plan's rule) */
        .softcap = p->softcap, .has_sinks = p->has_sinks,
    };
}

vka_sdpa_rows_kernel vka_sdpa_few_rows_kernel(const vkattn_context *ctx,
                                              const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                              const vkattn_sdpa_io *io, vka_decode_call *dc)
{
    const vka_sdpa_rows_kernel k = vka_sdpa_rows_kernel_for(p, s);
    /* decode writes no lse, types K and V by the cache's one dtype, and
     * reads 16-bit rows as whole words (a 16-bit cache's widths are even); its
     * partials live in the library workspace, which a caller passing its own
     * (vkattn/sdpa.h: concurrent recordings) does not want touched */
    if (k == VKA_SDPA_ROWS_FUSED || !io || io->lse || io->workspace || !io->k || !io->v ||
        io->k->dtype != io->v->dtype ||
        (vka_dtype_info_of(io->k->dtype)->is_16bit && (s->dk % 2 || s->dv % 2)))
        return VKA_SDPA_ROWS_FUSED;
    /* a limit of decode's own (its partials, grid, shared memory) leaves the
     * call to the fused kernel, which AUTO already chose: never a failure */
    const vkattn_sdpa_decode_params dp = decode_params(k, p, s);
    return vka_decode_fits(ctx, &dp, io->k->dtype, dc) ? k : VKA_SDPA_ROWS_FUSED;
}

vkattn_result vka_sdpa_few_rows_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                       vka_sdpa_rows_kernel k, const vkattn_sdpa_params *p,
                                       const vka_sdpa_shape *s, const vka_decode_call *dc,
                                       const vkattn_sdpa_io *io)
{
    struct vkattn_kv_cache view = {
        .ctx = ctx,
        .desc = {.batch = s->batch, .kv_heads = s->kv_heads, .capacity = s->tv,
                 .key_dim = s->dk, .value_dim = s->dv, .dtype = io->k->dtype},
        .keys = io->k, .values = io->v, /* lengths NULL: every sequence full */
    };
    const vkattn_sdpa_decode_params dp = decode_params(k, p, s);
    const vkattn_sdpa_decode_io dio = {.q = io->q, .cache = &view, .value_mask = io->value_mask,
                                       .out = io->out, .sinks = io->sinks};
    return vka_decode_record_planned(ctx, cmd, caller, &dp, dc, &dio);
}
