#version 450
// Mean squared error of pred against target, and optionally its gradient
// grad = grad_factor * (pred - target). One workgroup walks the whole tensor:
// invocation k sums the elements k, k + 128, ... with Kahan compensation,
// then a tree in shared memory adds the 128 partial sums. No atomics, so the
// loss is deterministic; one workgroup is slow on a GPU for huge tensors, but
// a loss is small next to the model that produced it.
#extension GL_GOOGLE_include_directive : require
#include "mse_iface.h"

layout(local_size_x = VKA_MSE_THREADS, local_size_y = 1, local_size_z = 1) in;
// specialization constants: ids and meanings in mse_iface.h
layout(constant_id = VKA_MSE_SPEC_GRAD) const bool GRAD = false;

layout(std430, binding = 0) readonly buffer PredBuf { float pred[]; };
layout(std430, binding = 1) readonly buffer TargetBuf { float target[]; };
layout(std430, binding = 2) writeonly buffer LossBuf { float loss[]; };
layout(std430, binding = 3) writeonly buffer GradBuf { float grad[]; };

layout(push_constant) uniform Push { VKA_MSE_PUSH } p;

shared float partial[VKA_MSE_THREADS];

void main()
{
    const uint k = gl_LocalInvocationID.x;
    precise float sum = 0.0;
    precise float carry = 0.0; // Kahan: the low bits the sum lost
    for (uint i = k; i < p.count; i += VKA_MSE_THREADS) {
        const float d = pred[i] - target[i];
        if (GRAD)
            grad[i] = p.grad_factor * d;
        precise float y = d * d - carry;
        precise float s = sum + y;
        carry = (s - sum) - y;
        sum = s;
    }
    partial[k] = sum;
    barrier();
    for (uint half_n = VKA_MSE_THREADS / 2u; half_n > 0u; half_n /= 2u) {
        if (k < half_n)
            partial[k] += partial[k + half_n];
        barrier();
    }
    if (k == 0u)
        loss[0] = partial[0] * p.inv_count;
}
