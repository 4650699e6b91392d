/* The head preparation of the multi-head layers' references, one head row at
 * a time, in double: QK-norm (RMS-norm over the head's features with a
 * learned scale) then the rotary embedding (docs/SEMANTICS.md, "QK-norm and
 * rotary embeddings"). Pure arithmetic, no library state: the unit test
 * compiles it in (internal symbols are hidden in the library). */
#ifndef VKA_REFERENCE_ROPE_H
#define VKA_REFERENCE_ROPE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/op_params.h"

/* What one head row goes through; rope's defaults resolved (vka_mha_dims). */
typedef struct vka_ref_head_prep {
    uint32_t dim;      /* the head width */
    bool norm;         /* QK-norm with w (dim) and eps */
    const float *w;
    double eps;
    bool rope;         /* the rotary embedding with params */
    vkattn_rope_params params;
} vka_ref_head_prep;

/* The angle pair i turns by at position p:
 * (p / scaling_factor) * max_wavelength ^ (-2i / rotary_dim). */
double vka_ref_rope_angle(const vkattn_rope_params *params, double p, uint32_t i);

/* The two features pair i turns together (HALF: i and i + rotary_dim/2;
 * INTERLEAVED: 2i and 2i + 1). */
void vka_ref_rope_pair(const vkattn_rope_params *params, uint32_t i, uint32_t *a, uint32_t *b);

/* y (dim) = rope(norm(x)) at position p; y may be x. */
void vka_ref_head_prep_row(const vka_ref_head_prep *hp, double p, const double *x, double *y);

/* The backward of vka_ref_head_prep_row at input x: dx (dim) = the
 * gradient of x from dy's (dx may be dy); with norm, dw (dim) += the
 * gradient of w (this row's part). The rotation's backward is the inverse
 * rotation; the norm's is dx = s (du - x s^2 mean(du x)), s = 1/sqrt(mean(x^2)
 * + eps), du = dn * w. */
void vka_ref_head_prep_row_backward(const vka_ref_head_prep *hp, double p, const double *x,
                                    const double *dy, double *dx, double *dw);

#endif /* VKA_REFERENCE_ROPE_H */
