/* The call rules of the single-head layers and the op params a call implies,
 * shared by the GPU layers and their CPU references. */
#include "shape/layer_shape.h"

#include <math.h>
#include <stddef.h>

#include "core/error.h"

vkattn_result vka_layer_check_scalar(struct vkattn_context *ctx, const char *fn, const char *name,
                                     float v)
{
    if (!isfinite(v))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is %g; must be finite", fn,
                        name, (double)v);
    return VKATTN_SUCCESS;
}

vkattn_result vka_layer_check_call(struct vkattn_context *ctx, const char *fn,
                                   const vkattn_layer_call *call)
{
    if (!call)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: call is NULL", fn);
    const char *zero = !call->batch ? "batch" : !call->tq ? "tq" : !call->tv ? "tv" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: call->%s is 0; must be >= 1", fn,
                        zero);
    if (call->causal != VKATTN_CAUSAL_NONE && call->causal != VKATTN_CAUSAL_TOP_LEFT &&
        call->causal != VKATTN_CAUSAL_BOTTOM_RIGHT)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: call->causal is %d; must be a vkattn_causal value", fn,
                        (int)call->causal);
    if (call->path != VKATTN_SDPA_AUTO && call->path != VKATTN_SDPA_FUSED &&
        call->path != VKATTN_SDPA_UNFUSED)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: call->path is %d; must be a vkattn_sdpa_path value", fn,
                        (int)call->path);
    return VKATTN_SUCCESS;
}

vkattn_mask_params vka_layer_mask_params(const vkattn_layer_call *call, vkattn_masked_row row,
                                         bool has_value_mask,
                                         const vkattn_broadcast *attention_mask)
{
    return (vkattn_mask_params){
        .causal = call->causal,
        .masked_row = row,
        .has_value_mask = has_value_mask,
        .has_mask = attention_mask != NULL,
        .mask_broadcast = attention_mask ? *attention_mask : (vkattn_broadcast){0},
    };
}

vkattn_dropout_op_params vka_layer_dropout_params(const vkattn_layer_call *call, float rate,
                                                  uint32_t heads)
{
    return (vkattn_dropout_op_params){
        .batch = call->batch, .heads = heads, .tq = call->tq, .tv = call->tv,
        .dropout = {.rate = rate, .training = call->training, .seed = call->seed,
                    .offset = call->offset},
    };
}
