// The masked softmax's backward kernel, shared by shaders/softmax_backward.comp
// (one binding per operand) and shaders/softmax_backward_packed.comp (bias,
// value mask and explicit mask packed behind one binding, for devices with 4
// storage buffers per stage). Include after #version, the bindings, and:
//   VKA_W(i) VKA_DW(i)  the forward's weights and dL/dW (VKA_DW unused IN_PLACE)
//   VKA_BIAS(i) VKA_VMASK(i) VKA_MASK(i)  element i of each side input
//   VKA_OUT  the output array
//
// Per row (b, h, i) of (B, H, Tq, Tv), as vkattn_reference_softmax_backward:
//   dS_j = scale * W_j * (dW_j - sum_k W_k dW_k)   over the allowed keys,
//   exactly 0 for masked keys and for rows the forward filled by its
//   masked-row policy (no key allowed, or every allowed key's bias -inf).
// Masks are needed only to tell those rows apart: under the uniform policy
// their weights are 1/Tv, like a real row of equal logits.
//
// Layout: WG / G rows per workgroup, G invocations per row (lanes), each lane
// walks keys lane, lane + G, ... twice: the dot product and liveness of the
// row, reduced through shared memory; then the output. Each output element is
// read (in place) and written by the same invocation. No subgroup operations.

#include "mask.glsl"
#include "softmax_backward_iface.h"

layout(constant_id = VKA_SMB_SPEC_WG) const uint WG = 64;
layout(constant_id = VKA_SMB_SPEC_G) const uint G = 1;
layout(constant_id = VKA_SMB_SPEC_IN_PLACE) const bool IN_PLACE = false;
layout(constant_id = VKA_SMB_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_SMB_SPEC_HAS_VMASK) const bool HAS_VMASK = false;
layout(constant_id = VKA_SMB_SPEC_HAS_MASK) const bool HAS_MASK = false;
layout(local_size_x_id = VKA_SMB_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(push_constant) uniform Push { VKA_SMB_PUSH } p;

shared float red_dot[WG];
shared uint red_live[WG];

const uint NEG_INF_BITS = 0xFF800000u;

float grad_w(uint idx)
{
    return IN_PLACE ? VKA_OUT[idx] : VKA_DW(idx);
}

// Whether the masks allow key j of row (b, h, i).
bool allowed(uint b, uint h, uint i, uint j, uint begin, uint limit)
{
    bool ok = j >= begin && j < limit;
    if (HAS_VMASK)
        ok = ok && vka_mask_allows(VKA_VMASK(p.vmask_off + b * p.tv + min(j, p.tv - 1u)));
    if (HAS_MASK)
        ok = ok && vka_mask_allows(VKA_MASK(p.mask_off +
                                            vka_bcast_row(uvec3(p.mask_b, p.mask_h, p.mask_i),
                                                          b, h, i) + min(j, p.tv - 1u)));
    return ok;
}

void main()
{
    const uint lane = gl_LocalInvocationID.x % G;
    const uint seg = gl_LocalInvocationID.x / G;
    const uint row = ((gl_WorkGroupID.y * p.groups_x) + gl_WorkGroupID.x) * (WG / G) + seg;
    const bool row_ok = row < p.rows;
    const uint i = row_ok ? row % p.tq : 0u;
    const uint bh = row_ok ? row / p.tq : 0u;
    const uint h = bh % p.heads, b = bh / p.heads;
    const uint base = row * p.tv;
    const uint begin = vka_key_begin(p.causal, p.window, i, p.tq, p.tv);
    const uint limit = row_ok ? vka_key_end(p.causal, p.window, i, p.tq, p.tv) : 0u;
    const uint bias_row = vka_bcast_row(uvec3(p.bias_b, p.bias_h, p.bias_i), b, h, i);

    float dot = 0.0;
    bool live = false;
    for (uint j = lane; j < limit; j += G) {
        if (!allowed(b, h, i, j, begin, limit))
            continue;
        if (!HAS_BIAS || floatBitsToUint(VKA_BIAS(p.bias_off + bias_row + j)) != NEG_INF_BITS)
            live = true;
        dot += VKA_W(base + j) * grad_w(base + j);
    }
    red_dot[gl_LocalInvocationID.x] = dot;
    red_live[gl_LocalInvocationID.x] = live ? 1u : 0u;
    // Tree reduction within each row's G lanes (G a power of two).
    for (uint s = G / 2u; s > 0u; s /= 2u) {
        barrier();
        if (lane < s) {
            red_dot[gl_LocalInvocationID.x] += red_dot[gl_LocalInvocationID.x + s];
            red_live[gl_LocalInvocationID.x] |= red_live[gl_LocalInvocationID.x + s];
        }
    }
    barrier();
    if (!row_ok)
        return;
    dot = red_dot[seg * G];
    live = red_live[seg * G] != 0u;
    for (uint j = lane; j < p.tv; j += G) {
        float g = 0.0;
        if (live && allowed(b, h, i, j, begin, limit))
            g = p.scale * VKA_W(base + j) * (grad_w(base + j) - dot);
        VKA_OUT[base + j] = g;
    }
}
