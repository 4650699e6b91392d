#version 450
// Appends new K or V rows (B, Hkv, tnew, width) to a cache (B, Hkv, capacity,
// width) at each sequence's current length, read from the lengths buffer on
// the device. Sequence b takes count_b = counts[b] rows (clamped to
// [0, tnew], NaN as 0) or tnew without counts; when length + count_b exceeds
// the capacity, nothing of sequence b is written (kv_lengths.comp records the
// overflow). So no write can land past the capacity. The lengths advance in a
// second dispatch (kv_lengths.comp), after every copy has read them.
// Element types: the new rows and the cache may each be f32, f16 or bf16
// (16-bit: words of two elements); values convert on the way (elem_type.glsl's
// VKA_PACK2 rounds to nearest even). A 16-bit cache has an even width, so its
// rows are whole words, and each
// invocation copies a pair of elements into one word: no two invocations
// write halves of the same word.
// An int8 cache (DST_I8): one invocation per row quantizes it symmetrically,
// scale = max|x| / 127 and q = clamp(roundEven(x / scale), -127, 127) (a zero
// row: scale 0, q 0), and writes width / 4 words of four int8 (element e in
// byte e % 4) and the fp32 scale at scale_off + row (vkattn/kv_cache.h).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "kv_iface.h"
#include "elem_type.glsl"

// specialization constants: ids and meanings in kv_iface.h
layout(local_size_x_id = VKA_KV_APPEND_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_KV_APPEND_SPEC_SRC_TYPE) const uint SRC_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_KV_APPEND_SPEC_DST_TYPE) const uint DST_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_KV_APPEND_SPEC_DST_I8) const bool DST_I8 = false;

layout(std430, binding = 0) readonly buffer LenBuf { uint lengths[]; };
layout(std430, binding = 1) readonly buffer CountBuf { float counts[]; };
layout(std430, binding = 2) readonly buffer SrcBuf { float src[]; };
layout(std430, binding = 3) writeonly buffer DstBuf { float dst[]; };
layout(std430, binding = 2) readonly buffer SrcBufW { uint src_w[]; };
layout(std430, binding = 3) writeonly buffer DstBufW { uint dst_w[]; };

layout(push_constant) uniform Push { VKA_KV_APPEND_PUSH } p;

uint count_of(uint b)
{
    if (p.has_counts == 0u)
        return p.tnew;
    const float c = counts[b];
    return c >= 1.0 ? min(uint(min(c, float(p.tnew))), p.tnew) : 0u;
}

float src_at(uint i)
{
    return VKA_LDW(SRC_TYPE, src, src_w, i);
}

// Row `row` of the new rows, quantized into cache row `at`.
void append_i8(uint row, uint at)
{
    const uint src0 = row * p.width, w4 = p.width / 4u;
    float mx = 0.0;
    for (uint e = 0u; e < p.width; e++)
        mx = max(mx, abs(src_at(src0 + e)));
    const float scale = mx / 127.0;
    for (uint e4 = 0u; e4 < w4; e4++) {
        uint word = 0u;
        [[unroll]] for (uint c = 0u; c < 4u; c++) {
            const float x = src_at(src0 + e4 * 4u + c);
            const int q = scale > 0.0 ? int(clamp(roundEven(x / scale), -127.0, 127.0)) : 0;
            word |= uint(q & 0xff) << (8u * c);
        }
        dst_w[at * w4 + e4] = word;
    }
    dst[p.scale_off + at] = scale;
}

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    if (DST_I8) { // p.total counts rows
        for (uint row = gl_GlobalInvocationID.x; row < p.total; row += stride) {
            const uint t = row % p.tnew, bh = row / p.tnew, b = bh / p.kv_heads;
            const uint len = lengths[b], n = count_of(b);
            if (t >= n || len > p.capacity || n > p.capacity - len)
                continue;
            append_i8(row, bh * p.capacity + len + t);
        }
        return;
    }
    const uint step = VKA_IS_16(DST_TYPE) ? 2u : 1u; // elements per invocation and iteration
    for (uint idx = gl_GlobalInvocationID.x * step; idx < p.total; idx += stride * step) {
        const uint e = idx % p.width, row = idx / p.width;
        const uint t = row % p.tnew, bh = row / p.tnew, b = bh / p.kv_heads;
        const uint len = lengths[b], n = count_of(b);
        if (t >= n || len > p.capacity || n > p.capacity - len)
            continue;
        const uint at = (bh * p.capacity + len + t) * p.width + e;
        if (VKA_IS_16(DST_TYPE)) // e and the width are even: the pair is one word of this row
            dst_w[at >> 1u] = VKA_PACK2(DST_TYPE, vec2(src_at(idx), src_at(idx + 1u)));
        else
            dst[at] = src_at(idx);
    }
}
