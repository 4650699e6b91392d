/* Shared pieces of the CPU reference backward passes (softmax_backward.c,
 * sdpa_backward.c): which keys and rows of a logit tensor the softmax
 * gradient flows through. No Vulkan header may be included here. */
#ifndef VKA_REFERENCE_BACKWARD_INTERNAL_H
#define VKA_REFERENCE_BACKWARD_INTERNAL_H

#include "reference/ref_internal.h"

/* True when row (b, h, i) has a live key: one the masks allow whose bias is
 * not -inf, so the forward took a real softmax rather than the masked-row
 * policy (scores assumed finite). allowed[j] (tv bytes) is set to whether the
 * masks allow key j; tmp is scratch of tv doubles. */
bool vka_ref_row_live(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i, double *tmp,
                      unsigned char *allowed);

/* The softmax gradient of one row in place: g[j] = dL/dW[j] on entry,
 * dL/dlogit[j] = W[j] (g[j] - sum_k W[k] g[k]) on return, exactly 0 where
 * !allowed[j], all 0 when !live. */
void vka_ref_softmax_row_backward(const double *w, double *g, const unsigned char *allowed,
                                  bool live, uint32_t tv);

#endif /* VKA_REFERENCE_BACKWARD_INTERNAL_H */
