/* The multi-head layers' references: QK-norm and the rotary embedding on
 * whole (B, heads, T, dim) head tensors, their positions checked (the row
 * arithmetic: reference/rope.h). */
#ifndef VKA_REFERENCE_HEAD_PREP_H
#define VKA_REFERENCE_HEAD_PREP_H

#include <stdint.h>

#include "shape/mha_shape.h"
#include "vkattn/layer_call.h"

/* io->query_positions (B, Tq) and io->key_positions (B, Tv): only with
 * desc->use_rope, each a non-negative integer (INVALID_ARGUMENT naming the
 * field and the element otherwise). */
vkattn_result vka_ref_mha_check_positions(const char *fn, const vka_mha_dims *d,
                                          const vka_mha_call *c, const vkattn_layer_host_io *io);

/* Whether d prepares heads at all (use_qk_norm or use_rope). */
bool vka_ref_mha_has_head_prep(const vka_mha_dims *d);

/* x (B, heads, T, d->key_dim), in place: row (b, h, t) at positions[b * T + t]
 * (NULL: at t); norm_w is query_norm or key_norm. The f32 one rounds
 * each prepared row once, as the GPU layer stores it. */
vkattn_result vka_ref_mha_head_prep_f32(const char *fn, const vka_mha_dims *d,
                                        const float *norm_w, uint32_t batch, uint32_t heads,
                                        uint32_t seq, const float *positions, float *x);
void vka_ref_mha_head_prep_f64(const vka_mha_dims *d, const float *norm_w, uint32_t batch,
                               uint32_t heads, uint32_t seq, const float *positions, double *x);

/* The backward of vka_ref_mha_head_prep_f64 at its input x: dx in place
 * (from the prepared heads' gradient to the input's); dw (key_dim) += the
 * norm weight's gradient summed over every row. */
void vka_ref_mha_head_prep_backward_f64(const vka_mha_dims *d, const float *norm_w,
                                        uint32_t batch, uint32_t heads, uint32_t seq,
                                        const float *positions, const double *x, double *dx,
                                        double *dw);

#endif /* VKA_REFERENCE_HEAD_PREP_H */
