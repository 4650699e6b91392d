/* The entry points every kind spells alike (vkattn_<name>_create, _record,
 * vkattn_reference_<name>, _weights_load ...), written once for each
 * layer_kind_<name>.c to instantiate: `member` is the kind's member of the
 * layer_kind.h unions, `name` the library's name of the layer. */
#ifndef ATTNBENCH_LAYER_KIND_CALLS_H
#define ATTNBENCH_LAYER_KIND_CALLS_H

#include "common.h" /* ab_round_values, for use_dtype */
#include "layer_any.h"

#define AB_LAYER_KIND_CALLS(member, name)                                                         \
    static vkattn_result new_layer(vkattn_context *ctx, ab_layer_any *l)                          \
    {                                                                                             \
        return vkattn_##name##_create(ctx, &l->desc.member, &l->handle.member);                   \
    }                                                                                             \
    static vkattn_result set_weights(ab_layer_any *l)                                             \
    {                                                                                             \
        return vkattn_##name##_set_weights(l->handle.member, &l->w.member);                       \
    }                                                                                             \
    static void destroy(ab_layer_any *l) { vkattn_##name##_destroy(l->handle.member); }          \
    static vkattn_result record(const ab_layer_any *l, VkCommandBuffer cmd,                       \
                                const vkattn_layer_call *call, const vkattn_layer_io *io)         \
    {                                                                                             \
        return vkattn_##name##_record(l->handle.member, cmd, call, io);                           \
    }                                                                                             \
    static vkattn_result reference(const ab_layer_any *l, const vkattn_layer_call *call,          \
                                   const vkattn_layer_host_io *io)                                \
    {                                                                                             \
        return vkattn_reference_##name(&l->desc.member, &l->w.member, call, io);                  \
    }                                                                                             \
    static vkattn_result weights_load(vkattn_weights_file *f, const ab_layer_desc *d,             \
                                      const vkattn_weights_load_desc *load, ab_layer_weights *w)  \
    {                                                                                             \
        return vkattn_##name##_weights_load(f, &d->member, load, &w->member);                     \
    }

/* A kind's names and every entry but weights_free: what AB_LAYER_KIND_CALLS
 * defined and what each kind file defines under the hook's own name
 * (parse_params, weight_slots, backward_record, reference_backward, use_dtype,
 * bench_desc, bench_weights, bench_flops). */
#define AB_LAYER_KIND_ENTRIES(kind_, keras_name_, keras_alias_, bench_name_)                      \
    .kind = kind_, .keras_name = keras_name_, .keras_alias = keras_alias_,                        \
    .bench_name = bench_name_, .new_layer = new_layer, .set_weights = set_weights,                \
    .destroy = destroy, .record = record, .reference = reference, .weights_load = weights_load,   \
    .parse_params = parse_params, .weight_slots = weight_slots,                                   \
    .backward_record = backward_record, .reference_backward = reference_backward,                \
    .use_dtype = use_dtype, .bench_desc = bench_desc, .bench_weights = bench_weights,                \
    .bench_flops = bench_flops

#endif
