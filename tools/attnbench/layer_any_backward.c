/* The layer gradients of ab_layer_any (layer_any.h) through its kind's
 * descriptor: the GPU backward (vkattn/layer_backward.h) and its CPU
 * reference, with the weight gradients as numbered slots so bench and check
 * share one loop. */
#include "layer_any.h"

uint32_t ab_layer_any_weight_slots(const ab_layer_any *l, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    return ab_layer_kind_of(l->kind)->weight_slots(&l->desc, s);
}

vkattn_result ab_layer_any_backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                           vkattn_tensor *const gw[AB_LAYER_WEIGHTS])
{
    if (!cmd) /* a real command buffer: prepare and run have their own calls */
        return VKATTN_ERROR_INVALID_ARGUMENT;
    return ab_layer_kind_of(l->kind)->backward_record(l, cmd, call, io, g, gw);
}

vkattn_result ab_layer_any_backward_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                            const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                            vkattn_tensor *const gw[AB_LAYER_WEIGHTS])
{
    return ab_layer_kind_of(l->kind)->backward_record(l, VKATTN_PREPARE, call, io, g, gw);
}

vkattn_result ab_layer_any_backward_run(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                        vkattn_tensor *const gw[AB_LAYER_WEIGHTS])
{
    return ab_layer_kind_of(l->kind)->backward_record(l, VKATTN_RUN_NOW, call, io, g, gw);
}

vkattn_result ab_layer_any_reference_backward(const ab_layer_any *l,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io,
                                              const float *grad_output,
                                              const vkattn_layer_host_grads *g,
                                              float *const gw[AB_LAYER_WEIGHTS])
{
    return ab_layer_kind_of(l->kind)->reference_backward(l, call, io, grad_output, g, gw);
}
