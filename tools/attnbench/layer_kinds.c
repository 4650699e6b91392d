/* The table of layer kinds (layer_kind.h) and its look-ups. */
#include "layer_kind.h"

#include <string.h>

const ab_layer_kind_info *const ab_layer_kinds[AB_LAYER_KINDS] = {
    [AB_LAYER_ATTENTION] = &ab_layer_kind_attention, [AB_LAYER_ADDITIVE] = &ab_layer_kind_additive,
    [AB_LAYER_BAHDANAU] = &ab_layer_kind_bahdanau,   [AB_LAYER_MHA] = &ab_layer_kind_mha,
    [AB_LAYER_GQA] = &ab_layer_kind_gqa,
};

const ab_layer_kind_info *ab_layer_kind_of(ab_layer_kind kind) { return ab_layer_kinds[kind]; }

const ab_layer_kind_info *ab_layer_kind_by_keras_name(const char *name)
{
    for (int i = 0; i < AB_LAYER_KINDS; i++) {
        const ab_layer_kind_info *k = ab_layer_kinds[i];
        if (!strcmp(name, k->keras_name) || (k->keras_alias && !strcmp(name, k->keras_alias)))
            return k;
    }
    return NULL;
}

ab_weight_slot ab_weight_slot_of(const char *name, bool present, uint32_t rank, uint32_t d0,
                                 uint32_t d1, uint32_t d2)
{
    ab_weight_slot s = {.name = name, .rank = rank, .dims = {d0, d1, d2}};
    s.n = present ? 1 : 0;
    for (uint32_t i = 0; i < rank; i++)
        s.n *= s.dims[i];
    return s;
}
