/* attnbench bench sdpa --backward: the SDPA backward (vkattn/sdpa_backward.h)
 * on random inputs of the flags' shape. Setup runs the forward once (the
 * fused one with its LSE when the backward takes the fused path); the timed
 * call is the backward alone; --check compares dQ, dK, dV with
 * vkattn_reference_sdpa_backward. Flops: 2.5 x the forward's matmul flops
 * (the backward's dV, dP, dQ, dK matmuls plus the recomputed scores).
 * --fp16 / --dtype bf16: Q, K, V, dO, the forward's out and the gradients are
 * of it (the host twins hold the 16-bit values, which the reference reads; the
 * value mask and the LSE stay f32). */
#include "common.h"
#include "ops.h"
#include "sizes.h"

#include <stdlib.h>

#include <vkattn/reference_backward.h>
#include <vkattn/sdpa.h>
#include <vkattn/sdpa_backward.h>

struct ab_sdpa_bwd {
    vkattn_context *ctx;
    vkattn_sdpa_params p;
    ab_buf q, k, v, vmask, out, lse, g, dq, dk, dv;
};

void ab_sdpa_backward_destroy(ab_sdpa_bwd *s)
{
    if (!s)
        return;
    ab_buf *bufs[] = {&s->q, &s->k, &s->v, &s->vmask, &s->out, &s->lse, &s->g,
                      &s->dq, &s->dk, &s->dv};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ab_buf_free(bufs[i]);
    free(s);
}

static vkattn_sdpa_backward_io io_of(ab_sdpa_bwd *s)
{
    return (vkattn_sdpa_backward_io){.q = s->q.t, .k = s->k.t, .v = s->v.t,
                                     .value_mask = s->vmask.t, .out = s->out.t, .lse = s->lse.t,
                                     .grad_out = s->g.t, .grad_q = s->dq.t, .grad_k = s->dk.t,
                                     .grad_v = s->dv.t};
}

vkattn_result ab_sdpa_backward_record(void *state, VkCommandBuffer cmd)
{
    ab_sdpa_bwd *s = state;
    vkattn_sdpa_backward_io io = io_of(s);
    return vkattn_sdpa_backward_record(s->ctx, cmd, &s->p, &io);
}

vkattn_result ab_sdpa_backward_prepare(ab_sdpa_bwd *s)
{
    vkattn_sdpa_backward_io io = io_of(s);
    return vkattn_sdpa_backward_record(s->ctx, VKATTN_PREPARE, &s->p, &io);
}

int ab_sdpa_backward_setup(vkattn_context *ctx, const vkattn_sdpa_params *fwd, const ab_args *a,
                           ab_sdpa_bwd **out, ab_op_info *info)
{
    ab_sdpa_bwd *s = calloc(1, sizeof *s);
    if (!s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "sdpa --backward");
    *out = s;
    s->ctx = ctx;
    s->p = *fwd;
    s->p.return_weights = false;
    const vkattn_sdpa_params *p = &s->p;
    ab_rng rng = {a->seed};
    const uint32_t B = p->batch, H = p->heads, Tq = p->tq, Tv = p->tv, Dk = p->dk, Dv = p->dv;
    /* the fused backward needs the fused forward's out and LSE */
    const bool fused = p->path != VKATTN_SDPA_UNFUSED;
    const vkattn_dtype dt = a->dtype; /* the data tensors' */
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->q, -1, 1, dt, B, H, Tq, Dk)},
        {AB_INPUT(&s->k, -1, 1, dt, B, H, Tv, Dk)},
        {AB_INPUT(&s->v, -1, 1, dt, B, H, Tv, Dv)},
        {AB_MASK(&s->vmask, a->mask_ratio, B, Tv), .absent = !(a->mask_ratio > 0)},
        {AB_INPUT(&s->g, -1, 1, dt, B, H, Tq, Dv)},
        {AB_OUTPUT(&s->out, dt, B, H, Tq, Dv), .absent = !fused},
        {AB_OUTPUT(&s->lse, VKATTN_DTYPE_F32, B, H, Tq), .absent = !fused},
        {AB_OUTPUT(&s->dq, dt, B, H, Tq, Dk)},
        {AB_OUTPUT(&s->dk, dt, B, H, Tv, Dk)},
        {AB_OUTPUT(&s->dv, dt, B, H, Tv, Dv)},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "sdpa", a, "sdpa --backward: creating tensors");
    if (fused) {
        vkattn_sdpa_params fp = *p;
        fp.path = VKATTN_SDPA_FUSED;
        vkattn_sdpa_io fio = {.q = s->q.t, .k = s->k.t, .v = s->v.t, .value_mask = s->vmask.t,
                              .out = s->out.t, .lse = s->lse.t};
        if ((r = vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &fp, &fio)))
            return ab_report(ctx, r, "sdpa --backward: the fused forward");
    }
    info->path = fused ? "fused" : "unfused";
    if (p->path == VKATTN_SDPA_AUTO) {
        uint64_t floats;
        uint32_t count;
        if (vkattn_sdpa_backward_workspace_size(ctx, p, true, false, &floats, &count) ==
            VKATTN_SUCCESS)
            info->path = count == 2 ? "unfused" : "fused";
    }
    const double fwd_flops = 2.0 * p->batch * p->heads * p->tq * p->tv * ((double)p->dk + p->dv);
    info->flops = 2.5 * fwd_flops;
    const double data = (double)(s->q.n + s->k.n + s->v.n + s->out.n + s->g.n + s->dq.n +
                                 s->dk.n + s->dv.n);
    info->bytes =
        (dt != VKATTN_DTYPE_F32 ? 2.0 : 4.0) * data + 4.0 * (double)(s->vmask.n + s->lse.n);
    return ATTNBENCH_EXIT_OK;
}

int ab_sdpa_backward_check(vkattn_context *ctx, ab_sdpa_bwd *s, double *err)
{
    float *rq = ab_floats(s->dq.n), *rk = ab_floats(s->dk.n), *rv = ab_floats(s->dv.n);
    int st = ATTNBENCH_EXIT_CHECK;
    if (rq && rk && rv) {
        vkattn_result r = vkattn_reference_sdpa_backward(&s->p, s->q.host, s->k.host, s->v.host,
                                                         NULL, s->vmask.host, NULL, s->g.host, rq,
                                                         rk, rv);
        st = r ? ab_report(NULL, r, "sdpa backward reference")
               : ab_check_outputs(ctx, ab_sdpa_backward_record, s,
                                  (ab_buf *[]){&s->dq, &s->dk, &s->dv}, (float *[]){rq, rk, rv},
                                  3, err);
    }
    free(rq), free(rk), free(rv);
    return st;
}
