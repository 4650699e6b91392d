/* CPU reference of the masked softmax's gradient with respect to its scores,
 * and the one-row kernel vkattn_reference_sdpa_backward shares. Double
 * throughout. */
#include "vkattn/reference_backward.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/error.h"
#include "reference/backward_internal.h"

bool vka_ref_row_live(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i, double *tmp,
                      unsigned char *allowed)
{
    /* The forward's own row kernel on zero scores, with the zero policy: the
     * logits are then the bias alone, and a policy row comes out all zeros
     * while a live one sums to 1 over its allowed keys (NaN counts as live). */
    vkattn_mask_params zero_policy = *m->p;
    zero_policy.masked_row = VKATTN_MASKED_ROW_ZERO;
    vka_ref_mask mz = *m;
    mz.p = &zero_policy;
    for (uint32_t j = 0; j < m->tv; j++)
        tmp[j] = 0.0;
    vka_ref_softmax_row(&mz, b, h, i, tmp, allowed);
    for (uint32_t j = 0; j < m->tv; j++)
        if (tmp[j] != 0.0)
            return true;
    return false;
}

void vka_ref_softmax_row_backward(const double *w, double *g, const unsigned char *allowed,
                                  bool live, uint32_t tv)
{
    double dot = 0.0;
    for (uint32_t j = 0; j < tv; j++)
        if (allowed[j])
            dot += w[j] * g[j];
    for (uint32_t j = 0; j < tv; j++)
        g[j] = live && allowed[j] ? w[j] * (g[j] - dot) : 0.0;
}

vkattn_result vkattn_reference_softmax_backward(const vkattn_softmax_params *p,
                                                const float *weights, const float *grad_out,
                                                const float *bias, const float *value_mask,
                                                const float *mask, float *grad_scores)
{
    vkattn_result r;
    const char *names[] = {"weights", "grad_out", "grad_scores"};
    const void *arrays[] = {weights, grad_out, grad_scores};
    vka_ref_mask m;
    if ((r = vka_ref_softmax_check(__func__, p, names, arrays, 3, bias, value_mask, mask, &m)))
        return r;
    const uint32_t heads = m.heads;
    double *w, *g;
    unsigned char *allowed, *unused;
    if ((r = vka_ref_alloc_row(__func__, p->tv, &w, &allowed)))
        return r;
    if ((r = vka_ref_alloc_row(__func__, p->tv, &g, &unused))) {
        free(w);
        return r;
    }
    const double scale = vka_default_f32(p->scale, 1.0f);
    size_t base = 0;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t i = 0; i < p->tq; i++, base += p->tv) {
                const bool live = vka_ref_row_live(&m, b, h, i, w, allowed);
                for (uint32_t j = 0; j < p->tv; j++) {
                    w[j] = weights[base + j];
                    g[j] = grad_out[base + j];
                }
                vka_ref_softmax_row_backward(w, g, allowed, live, p->tv);
                for (uint32_t j = 0; j < p->tv; j++)
                    grad_scores[base + j] = (float)(scale * g[j]);
            }
    free(w);
    free(g);
    return VKATTN_SUCCESS;
}
