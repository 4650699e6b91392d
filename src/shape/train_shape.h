/* The hyper-parameter checks of the training ops (vkattn/optim.h,
 * vkattn/loss.h), shared by the GPU ops and their CPU references so that the
 * two agree on what is valid. Pure C, no Vulkan header; ctx may be NULL. */
#ifndef VKA_SHAPE_TRAIN_SHAPE_H
#define VKA_SHAPE_TRAIN_SHAPE_H

#include "vkattn/result.h"
#include "vkattn/train_params.h"

struct vkattn_context;

/* PyTorch's rules: a known algorithm; lr, weight_decay, momentum, eps >= 0;
 * betas in [0, 1) (Adam/AdamW); dampening finite; nesterov only with
 * momentum > 0 and dampening 0 (SGD); NaN fails everywhere. */
vkattn_result vka_optim_check_params(struct vkattn_context *ctx, const char *fn,
                                     const vkattn_optim_params *p);

/* SGD with momentum and Adam keep state; this many floats per parameter. */
uint32_t vka_optim_state_per_element(const vkattn_optim_params *p);

/* count >= 1; loss_scale finite (0 = 1). */
vkattn_result vka_mse_check_params(struct vkattn_context *ctx, const char *fn,
                                   const vkattn_mse_params *p);

#endif /* VKA_SHAPE_TRAIN_SHAPE_H */
