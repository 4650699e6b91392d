/* How scratch that only grows is resized, one rule for the context's
 * workspace (vk/scratch.c) and the layers' scratch (layers/layer_util.c). */
#ifndef VKA_CORE_GROWTH_H
#define VKA_CORE_GROWTH_H

#include <stdint.h>

/* The new capacity for `need` elements when `have` are allocated (need >
 * have): doubled, so the retired buffers add up to less than the current
 * one, but never past `limit` (the binding limit) unless need itself is. */
static inline uint64_t vka_grow_capacity(uint64_t have, uint64_t need, uint64_t limit)
{
    const uint64_t doubled = have > UINT64_MAX / 2 ? UINT64_MAX : have * 2;
    const uint64_t grown = doubled < limit ? doubled : limit;
    return grown > need ? grown : need;
}

#endif /* VKA_CORE_GROWTH_H */
