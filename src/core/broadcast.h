/* The layout of a (B|1, H|1, Tq|1, Tv) operand (an attention mask or bias)
 * stored with the broadcast axes of a vkattn_broadcast, one copy for every op
 * that reads one. shaders/common/mask.glsl addresses it with these strides.
 * Pure C. */
#ifndef VKA_CORE_BROADCAST_H
#define VKA_CORE_BROADCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/check.h"
#include "vkattn/op_params.h"

/* *out = the elements stored; false when the count overflows 64 bits. */
static inline bool vka_bcast_count(vkattn_broadcast bc, uint32_t batch, uint32_t heads,
                                   uint32_t tq, uint32_t tv, uint64_t *out)
{
    const uint64_t dims[4] = {bc.batch ? 1 : batch, bc.heads ? 1 : heads, bc.rows ? 1 : tq, tv};
    return vka_product_u64(dims, 4, out);
}

/* Element strides along b, h and i (the key stride is 1); 0 on a broadcast
 * axis. They fit whenever the count does. */
static inline void vka_bcast_strides(vkattn_broadcast bc, uint32_t heads, uint32_t tq,
                                     uint32_t tv, uint64_t out[3])
{
    const uint64_t rows = bc.rows ? 1 : tq, hs = bc.heads ? 1 : heads;
    out[2] = bc.rows ? 0 : tv;
    out[1] = bc.heads ? 0 : rows * tv;
    out[0] = bc.batch ? 0 : hs * rows * tv;
}

#endif /* VKA_CORE_BROADCAST_H */
