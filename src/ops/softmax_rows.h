/* What the masked softmax and its backward (softmax.c, softmax_backward.c)
 * share, so that both accept the same calls and lay rows out alike: the rules
 * of vkattn_softmax_params and the grid of workgroups over the rows. */
#ifndef VKA_OPS_SOFTMAX_ROWS_H
#define VKA_OPS_SOFTMAX_ROWS_H

#include <stdint.h>

#include <stdbool.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"
#include "vkattn/op_params.h"
#include "shape/softmax_plan.h"

/* One call's rows, resolved once for the forward and the backward: the plan
 * (shape/softmax_plan.h: heads, total = B * H * Tq * Tv, scale, window), and
 * the broadcast strides of bias and mask (core/broadcast.h;
 * vka_softmax_check_mask_operands fills them). */
typedef struct vka_softmax_dims {
    vka_softmax_shape plan;
    uint64_t bias_s[3], mask_s[3];
} vka_softmax_dims;

/* d->plan by vka_softmax_shape_plan (the references' checks and messages),
 * then DEVICE_LIMIT above max_total (the kernel's indexing); messages call
 * the tensor `what` ("scores", "weights"). */
vkattn_result vka_softmax_plan(vkattn_context *ctx, const char *caller,
                               const vkattn_softmax_params *p, const char *what,
                               uint64_t max_total, vka_softmax_dims *d);

/* groups = the workgroups for `rows` rows at rows_per_group each, spread over
 * x and y: B*H*Tq rows can exceed the 65535 a device must allow along one
 * axis. The shaders' row index (gy * gx + x) * rows_per_group + seg is a
 * uint32: DEVICE_LIMIT where it would not fit or y would exceed its limit. */
vkattn_result vka_softmax_spread_groups(vkattn_context *ctx, const char *caller, uint64_t rows,
                                        uint32_t rows_per_group, uint32_t groups[3]);

/* The call's bias, value mask and mask: each present iff its params flag is
 * set, with at least the elements its broadcast shape needs (d's bias_s and
 * mask_s receive the broadcast strides), and never the
 * written tensor `out` (`out_what`; only `in_place_what` may be written in
 * place). The bias may be f16 or bf16 where bias_f16; the masks are f32 only (an f16
 * mask is INVALID_ARGUMENT naming it). */
vkattn_result vka_softmax_check_mask_operands(vkattn_context *ctx, const char *caller,
                                              const vkattn_softmax_params *p,
                                              vka_softmax_dims *d, const vkattn_tensor *bias,
                                              const vkattn_tensor *value_mask,
                                              const vkattn_tensor *mask, const vkattn_tensor *out,
                                              const char *out_what, const char *in_place_what,
                                              bool bias_f16);

#endif /* VKA_OPS_SOFTMAX_ROWS_H */
