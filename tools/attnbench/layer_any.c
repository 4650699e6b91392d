/* ab_layer_any (layer_any.h) through its kind's descriptor (layer_kind.h). */
#include "layer_any.h"

vkattn_result ab_layer_any_new(vkattn_context *ctx, ab_layer_any *l)
{
    return ab_layer_kind_of(l->kind)->new_layer(ctx, l);
}

vkattn_result ab_layer_any_set_weights(ab_layer_any *l)
{
    return ab_layer_kind_of(l->kind)->set_weights(l);
}

vkattn_result ab_layer_any_create(vkattn_context *ctx, ab_layer_any *l)
{
    vkattn_result r = ab_layer_any_new(ctx, l);
    return r != VKATTN_SUCCESS ? r : ab_layer_any_set_weights(l);
}

void ab_layer_any_destroy(ab_layer_any *l)
{
    ab_layer_kind_of(l->kind)->destroy(l);
    l->handle = (ab_layer_handle){0};
}

vkattn_result ab_layer_any_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    return ab_layer_kind_of(l->kind)->record(l, cmd, call, io);
}

vkattn_result ab_layer_any_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io)
{
    return ab_layer_any_record(l, VKATTN_PREPARE, call, io);
}

vkattn_result ab_layer_any_run(const ab_layer_any *l, const vkattn_layer_call *call,
                               const vkattn_layer_io *io)
{
    return ab_layer_any_record(l, VKATTN_RUN_NOW, call, io);
}

vkattn_result ab_layer_any_reference(const ab_layer_any *l, const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io)
{
    return ab_layer_kind_of(l->kind)->reference(l, call, io);
}
