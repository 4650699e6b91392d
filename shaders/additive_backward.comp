#version 450
// Gradients of additive (tanh) scoring, S[b,i,j] = outer * sum_d s_d *
// tanh(inner * (q[b,i,d] + k[b,j,d])), one pass per spec constant PASS
// (additive_backward_iface.h). Each invocation owns output elements and loops
// over the other axis in a fixed order: no atomics (float atomics are not
// portable to Vulkan 1.1), deterministic results. Consecutive invocations own
// consecutive d, so the loads of the other operand are contiguous and dS is
// uniform across a row. Four bindings, so no packed variant is needed. The
// host may split [0, total) over dispatches for a watchdog budget.
#extension GL_GOOGLE_include_directive : require
#include "additive_backward_iface.h"

// specialization constants: ids and meanings in additive_backward_iface.h
layout(local_size_x_id = VKA_ADDITIVE_BWD_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_ADDITIVE_BWD_SPEC_PASS) const uint PASS = 0;

layout(std430, binding = 0) readonly buffer OwnBuf { float own[]; }; // s in PASS_SCALE
layout(std430, binding = 1) readonly buffer OtherBuf { float other[]; };
layout(std430, binding = 2) readonly buffer GradBuf { float ds[]; };
layout(std430, binding = 3) buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_ADDITIVE_BWD_PUSH } p;

#include "tanh_robust.glsl"

// 1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-2|x|): no cancellation where
// tanh rounds to 1, and exp cannot overflow.
float sech2(float x)
{
    float e = exp(-2.0 * abs(x));
    float d = 1.0 + e;
    return 4.0 * e / (d * d);
}

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = p.begin + gl_GlobalInvocationID.x; e < p.end; e += stride) {
        if (PASS == VKA_ADDITIVE_BWD_PASS_SCALE) {
            y[e] *= own[e % p.dim];
            continue;
        }
        const uint d = e % p.dim;
        const uint row = e / p.dim; // b * n_own + o
        const uint b = row / p.n_own, o = row % p.n_own;
        const float xo = own[e];
        const uint other0 = b * p.n_other * p.dim + d;
        const uint ds0 = b * p.n_own * p.n_other + o * p.ds_own;
        float acc = 0.0;
        for (uint x = 0; x < p.n_other; x++) {
            const float u = p.inner * (xo + other[other0 + x * p.dim]);
            const float g = ds[ds0 + x * p.ds_other];
            acc = fma(g, PASS == VKA_ADDITIVE_BWD_PASS_SECH2 ? sech2(u) : tanh_robust(u), acc);
        }
        y[e] = p.factor * acc;
    }
}
