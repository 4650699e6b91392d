/* The checks of the open-model fields that the layers' descs
 * (shape/mha_shape.c) and the public head ops (shape/head_op_plan.c) share,
 * so both refuse with the same words. Pure C, no Vulkan; ctx may be NULL. */
#ifndef VKA_SHAPE_OPEN_MODEL_CHECK_H
#define VKA_SHAPE_OPEN_MODEL_CHECK_H

#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

/* eps (field `name`, e.g. "desc->qk_norm_epsilon") in [0, 1], NaN refused;
 * *out = eps, or 1e-6 for 0. */
vkattn_result vka_check_norm_epsilon(struct vkattn_context *ctx, const char *caller,
                                     const char *name, float eps, float *out);

/* *out = in (the field `owner`->rope) with its defaults resolved against the
 * head width `dim` (named dim_name): max_wavelength finite > 1, scaling
 * finite > 0, rotary_dim even and <= dim, a known layout. */
vkattn_result vka_resolve_rope(struct vkattn_context *ctx, const char *caller, const char *owner,
                               const vkattn_rope_params *in, uint32_t dim, const char *dim_name,
                               vkattn_rope_params *out);

#endif /* VKA_SHAPE_OPEN_MODEL_CHECK_H */
