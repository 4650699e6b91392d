/* Epsilon and rotary-embedding checks shared by the layers and the head ops
 * (open_model_check.h). Written so that NaN fails too. */
#include "shape/open_model_check.h"

#include "core/check.h"
#include "core/error.h"

vkattn_result vka_check_norm_epsilon(struct vkattn_context *ctx, const char *caller,
                                     const char *name, float eps, float *out)
{
    if (!(eps >= 0.0f && eps <= 1.0f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is %g; must be in [0, 1] (0 = 1e-6)", caller, name, (double)eps);
    *out = eps > 0.0f ? eps : 1e-6f;
    return VKATTN_SUCCESS;
}

vkattn_result vka_resolve_rope(struct vkattn_context *ctx, const char *caller, const char *owner,
                               const vkattn_rope_params *in, uint32_t dim, const char *dim_name,
                               vkattn_rope_params *out)
{
    vkattn_rope_params rope = *in;
    if (rope.max_wavelength == 0.0f)
        rope.max_wavelength = 10000.0f;
    if (rope.scaling_factor == 0.0f)
        rope.scaling_factor = 1.0f;
    rope.rotary_dim = vka_default_u32(rope.rotary_dim, dim);
    if (!(rope.max_wavelength > 1.0f && rope.max_wavelength <= 3.0e38f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s->rope.max_wavelength is %g; must be finite and > 1 (0 = 10000)",
                        caller, owner, (double)in->max_wavelength);
    if (!(rope.scaling_factor > 0.0f && rope.scaling_factor <= 3.0e38f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s->rope.scaling_factor is %g; must be finite and > 0 (0 = 1)",
                        caller, owner, (double)in->scaling_factor);
    if (rope.rotary_dim % 2 || rope.rotary_dim > dim)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s->rope.rotary_dim is %u; must be even and <= %s (%u) (0 = %s)",
                        caller, owner, rope.rotary_dim, dim_name, dim, dim_name);
    if (rope.layout != VKATTN_ROPE_HALF && rope.layout != VKATTN_ROPE_INTERLEAVED)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s->rope.layout is %d; must be VKATTN_ROPE_HALF or "
                        "VKATTN_ROPE_INTERLEAVED",
                        caller, owner, (int)rope.layout);
    *out = rope;
    return VKATTN_SUCCESS;
}
