/* Shared pieces of the CPU reference: argument checks that report through
 * vka_fail, overflow-checked element counts, and the masked softmax of one row
 * (used by both vkattn_reference_softmax and vkattn_reference_sdpa so the two
 * cannot drift apart). No Vulkan header may be included here. */
#ifndef VKA_REFERENCE_INTERNAL_H
#define VKA_REFERENCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkattn/dtype.h"
#include "vkattn/op_params.h"
#include "vkattn/reference.h"
#include "vkattn/result.h"
#include "shape/sdpa_plan.h"

/* Fails with INVALID_ARGUMENT "fn: name is 0; must be >= 1" when v is 0. */
vkattn_result vka_ref_require_dim(const char *fn, const char *name, uint32_t v);

/* Fails with INVALID_ARGUMENT "fn: name is NULL" when p is NULL. */
vkattn_result vka_ref_require_ptr(const char *fn, const char *name, const void *p);

/* Fails with INVALID_ARGUMENT "fn: name is NULL but flag is set" when set && !p. */
vkattn_result vka_ref_require_flagged(const char *fn, const char *name, const char *flag,
                                      bool set, const void *p);

/* Fails with INVALID_ARGUMENT "fn: name is nan; must be finite" for NaN or inf. */
vkattn_result vka_ref_require_finite(const char *fn, const char *name, float v);

/* *out = product of n dims, checked to be addressable in bytes of float so that
 * size_t index arithmetic on the array is safe; out may be NULL when only the
 * check matters. Fails with SIZE_OVERFLOW naming `what` otherwise. */
vkattn_result vka_ref_count(const char *fn, const char *what, const uint64_t *dims, int n,
                            size_t *out);

/* The additive scoring op's params and operands (forward and backward share
 * them): sizes, scales, q, k, the scale vector iff has_scale_vector, and the
 * score-shaped array named `scores_name`. */
vkattn_result vka_ref_additive_check(const char *fn, const vkattn_additive_params *p,
                                     const void *q, const void *k, const void *scale_vec,
                                     const void *scores, const char *scores_name);

/* The call's plan (shape/sdpa_plan.h: the GPU op's checks and defaults, so
 * the reference accepts exactly what the op does), and every operand
 * addressable on this host as an array of elt_size-byte elements. */
vkattn_result vka_ref_sdpa_plan(const char *fn, const vkattn_sdpa_params *p, size_t elt_size,
                                vka_sdpa_shape *s);

/* The logit scale of SDPA and decode in double: `scale`, or 0 = 1/sqrt(dk)
 * exactly (the kernels multiply by its f32 rounding, vka_sdpa_shape.scale;
 * the reference keeps the exact value). */
double vka_ref_attention_scale(float scale, uint32_t dk);


/* One row of tv doubles plus tv bytes of scratch, in one allocation the caller
 * frees with free(*row). Fails with SIZE_OVERFLOW or OUT_OF_HOST_MEMORY. */
vkattn_result vka_ref_alloc_row(const char *fn, uint32_t tv, double **row,
                                unsigned char **allowed);

/* The scale/bias/mask operands of one (B, H, Tq, Tv) logit tensor. */
typedef struct vka_ref_mask {
    const vkattn_mask_params *p;
    uint32_t batch, heads, tq, tv;
    const float *bias, *value_mask, *mask;
    uint32_t window; /* sliding window, 0 = none (vkattn_sdpa_params) */
} vka_ref_mask;

/* Checks that each operand the flags ask for is non-NULL, and that the
 * broadcast shapes are addressable (the enums: the op's plan, run first). */
vkattn_result vka_ref_check_mask(const char *fn, const vka_ref_mask *m);

/* The masked softmax's params and operands (forward and backward share
 * them): the op's plan (shape/softmax_plan.h, its messages), the n arrays
 * named `names` (each required), the
 * (B, H, Tq, Tv) count named after the first, then the masks (heads
 * defaulted) into *m. */
vkattn_result vka_ref_softmax_check(const char *fn, const vkattn_softmax_params *p,
                                    const char *const *names, const void *const *arrays, int n,
                                    const void *bias, const float *value_mask, const float *mask,
                                    vka_ref_mask *m);

/* One row (b, h, i) of logits: row[j] holds score * scale on entry, and the
 * softmax weights on return (masks, bias and the masked-row policy applied).
 * allowed is scratch of tv bytes. */
void vka_ref_softmax_row(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i,
                         double *row, unsigned char *allowed);

/* The same with an optional attention sink (vkattn_sdpa_params.has_sinks):
 * *sink (NULL = none) joins the max and the denominator; a row with no live
 * key gets weights 0 whatever the masked-row policy. Returns the sink's own
 * weight exp(sink - m) / denominator (1 on such a row, 0 without a sink). */
double vka_ref_softmax_row_sink(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i,
                                double *row, unsigned char *allowed, const double *sink);

/* Logit soft-capping in place: row[j] = softcap * tanh(row[j] / softcap);
 * softcap 0 leaves the row as it is. */
void vka_ref_softcap_row(double softcap, double *row, uint32_t tv);

/* vkattn_reference_sdpa and its backward with the sinks (H) (NULL iff
 * !p->has_sinks; grad_sinks (H) written, summed over the batch and rows):
 * the public functions are these with NULL, and the layer references call
 * these. fn names the public caller in errors. */
vkattn_result vka_ref_sdpa(const char *fn, const vkattn_sdpa_params *p,
                           const vkattn_sdpa_dtypes *types, const void *q, const void *k,
                           const void *v, const float *bias, const float *value_mask,
                           const float *mask, const float *sinks, void *out, float *weights);
vkattn_result vka_ref_sdpa_backward(const char *fn, const vkattn_sdpa_params *p, const float *q,
                                    const float *k, const float *v, const float *bias,
                                    const float *value_mask, const float *mask,
                                    const float *sinks, const float *grad_out, float *grad_q,
                                    float *grad_k, float *grad_v, float *grad_sinks);

#endif /* VKA_REFERENCE_INTERNAL_H */
