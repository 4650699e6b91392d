/* Bahdanau attention with learned projections (seed 001): its CPU
 * reference (desc rules in shape/layer_desc.c):
 *   S[b,i,j] = sum_u v_u * tanh((query @ Wq)[b,i,u] + (key @ Wk)[b,j,u]) + score_bias
 * then the common softmax/dropout/W @ V tail. The reference adds score_bias
 * (in f32, as Keras's Dense does); the GPU layer skips it because softmax is
 * shift-invariant, so the weights and the output do not depend on it. */
#include "reference/layer_ref.h"

#include <stdlib.h>

#include "reference/ref_internal.h"
#include "vkattn/reference.h"

/* out (B, T, U) = x (B, T, D) @ kernel (D, U), the kernel broadcast over the batch */
static vkattn_result project(uint32_t batch, uint32_t t, uint32_t dim, uint32_t units,
                             const float *x, const float *kernel, float *out)
{
    const vkattn_matmul_params mp = {
        .batch = batch, .m = t, .n = units, .k = dim,
        .a = {.batch_stride = (uint64_t)t * dim}, .b = {.batch_stride = 0},
    };
    return vkattn_reference_matmul(&mp, NULL, x, kernel, NULL, out);
}

static vkattn_result bahdanau_scores(const vkattn_bahdanau_weights *w, const vka_layer_widths *wd,
                                     const vkattn_layer_call *call, const float *query,
                                     const float *key, float *qp, float *kp, float *s)
{
    vkattn_result r;
    if ((r = project(call->batch, call->tq, wd->dq, wd->units, query, w->query_kernel, qp)) ||
        (r = project(call->batch, call->tv, wd->dk, wd->units, key, w->key_kernel, kp)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = wd->units,
        .has_scale_vector = true,
    };
    if ((r = vkattn_reference_additive(&ap, NULL, qp, kp, w->score_kernel, s)))
        return r;
    const size_t n = (size_t)call->batch * call->tq * call->tv;
    for (size_t i = 0; i < n; i++)
        s[i] += w->score_bias;
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_bahdanau_check(const char *fn, const vkattn_bahdanau_desc *desc,
                                     const vkattn_bahdanau_weights *w, vka_layer_widths *wd)
{
    vkattn_result r;
    if ((r = vka_bahdanau_check_desc(NULL, fn, desc, wd)) ||
        (r = vka_ref_require_ptr(fn, "w", w)) ||
        (r = vka_ref_require_weights(fn, &vka_bahdanau_weight_table, VKA_WEIGHT_ALWAYS, false, w)))
        return r;
    return vka_layer_check_scalar(NULL, fn, "w->score_bias", w->score_bias);
}

vkattn_result vkattn_reference_bahdanau(const vkattn_bahdanau_desc *desc,
                                        const vkattn_bahdanau_weights *w,
                                        const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io)
{
    vka_layer_widths wd;
    vkattn_result r;
    float *s, *qp = NULL, *kp = NULL;
    if ((r = vka_ref_bahdanau_check(__func__, desc, w, &wd)) ||
        (r = vka_ref_layer_start(__func__, call, io, &wd, &s)))
        return r;
    if ((r = vka_ref_layer_alloc(__func__, "the query projection",
                                 (uint64_t)call->batch * call->tq * wd.units, &qp)) ||
        (r = vka_ref_layer_alloc(__func__, "the key projection",
                                 (uint64_t)call->batch * call->tv * wd.units, &kp)))
        goto done;
    r = bahdanau_scores(w, &wd, call, io->query, io->key ? io->key : io->value, qp, kp, s);
    if (r == VKATTN_SUCCESS)
        r = vka_ref_layer_finish(__func__, call, io, &wd, desc->dropout, s);
done:
    free(s), free(qp), free(kp);
    return r;
}
