#version 450
// The lengths buffer of a KV cache (one uint per sequence, then the overflow
// flag): advance each sequence by its appended row count after
// kv_append.comp, or reset one or all sequences. An append that does not fit
// leaves its length alone and sets the flag. One workgroup.
#extension GL_GOOGLE_include_directive : require
#include "kv_iface.h"

// specialization constants: ids and meanings in kv_iface.h
layout(local_size_x_id = VKA_KV_LENGTHS_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer LenBuf { uint lengths[]; };
layout(std430, binding = 1) readonly buffer CountBuf { float counts[]; };

layout(push_constant) uniform Push { VKA_KV_LENGTHS_PUSH } p;

uint count_of(uint b)
{
    if (p.has_counts == 0u)
        return p.tnew;
    const float c = counts[b];
    return c >= 1.0 ? min(uint(min(c, float(p.tnew))), p.tnew) : 0u;
}

void main()
{
    for (uint b = gl_LocalInvocationID.x; b < p.batch; b += gl_WorkGroupSize.x) {
        if (p.mode == VKA_KV_LENGTHS_MODE_RESET) {
            if (p.seq == VKA_KV_LENGTHS_ALL || p.seq == b)
                lengths[b] = 0u;
            continue;
        }
        const uint len = lengths[b], n = count_of(b);
        if (len > p.capacity || n > p.capacity - len)
            atomicOr(lengths[p.batch], 1u);
        else
            lengths[b] = len + n;
    }
    if (p.mode == VKA_KV_LENGTHS_MODE_RESET && p.seq == VKA_KV_LENGTHS_ALL &&
        gl_LocalInvocationID.x == 0u)
        lengths[p.batch] = 0u;
}
