#version 450
// One optimizer step on a parameter tensor, elementwise in f32, with
// PyTorch's formulas (include/vkattn/optim.h). The step tensor
// step = [t, beta1^t, beta2^t] lives on the device: ALGO_ADVANCE (one
// invocation, its own dispatch) moves it to the current step, then the
// update reads it, so one recorded command buffer replays step after step.
// beta^t is kept as a running product rather than pow(beta, t): 1 - beta^t
// then stays exact at t = 1 and within about u / (1 - beta) after, where
// GLSL's pow (through log2 near 1) may lose far more.
#extension GL_GOOGLE_include_directive : require
#include "optim_iface.h"

// specialization constants: ids and meanings in optim_iface.h
layout(local_size_x_id = VKA_OPTIM_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_OPTIM_SPEC_ALGO) const uint ALGO = VKA_OPTIM_ALGO_SGD;
layout(constant_id = VKA_OPTIM_SPEC_MOMENTUM) const bool MOMENTUM = false;
layout(constant_id = VKA_OPTIM_SPEC_NESTEROV) const bool NESTEROV = false;

layout(std430, binding = 0) buffer ParamBuf { float param[]; };
layout(std430, binding = 1) readonly buffer GradBuf { float grad[]; };
// SGD: the momentum buffer [0, count); Adam: exp_avg [0, count), exp_avg_sq [count, 2 count)
layout(std430, binding = 2) buffer StateBuf { float state[]; };
layout(std430, binding = 3) buffer StepBuf { float step[]; };

layout(push_constant) uniform Push { VKA_OPTIM_PUSH } p;

void advance()
{
    if (gl_GlobalInvocationID.x != 0u)
        return;
    const float t = step[0] + 1.0;
    step[0] = t;
    step[1] = t == 1.0 ? p.beta1 : step[1] * p.beta1;
    step[2] = t == 1.0 ? p.beta2 : step[2] * p.beta2;
}

void sgd(uint i, bool first)
{
    float g = grad[i];
    if (p.weight_decay != 0.0)
        g += p.weight_decay * param[i];
    if (MOMENTUM) {
        // PyTorch: the first step copies the gradient into the buffer
        const float b = first ? g : p.momentum * state[i] + (1.0 - p.dampening) * g;
        state[i] = b;
        g = NESTEROV ? g + p.momentum * b : b;
    }
    param[i] -= p.lr * g;
}

void adam(uint i, float bc1, float sqrt_bc2)
{
    float x = param[i];
    float g = grad[i];
    if (ALGO == VKA_OPTIM_ALGO_ADAMW)
        x *= 1.0 - p.lr * p.weight_decay;
    else if (p.weight_decay != 0.0)
        g += p.weight_decay * x;
    const float m = p.beta1 * state[i] + (1.0 - p.beta1) * g;
    const float v = p.beta2 * state[i + p.count] + (1.0 - p.beta2) * g * g;
    state[i] = m;
    state[i + p.count] = v;
    const float denom = sqrt(v) / sqrt_bc2 + p.eps;
    param[i] = x - (p.lr / bc1) * (m / denom);
}

void main()
{
    if (ALGO == VKA_OPTIM_ALGO_ADVANCE) {
        advance();
        return;
    }
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    if (ALGO == VKA_OPTIM_ALGO_SGD) {
        const bool first = MOMENTUM && step[0] == 1.0;
        for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride)
            sgd(i, first);
        return;
    }
    const float bc1 = 1.0 - step[1];
    const float sqrt_bc2 = sqrt(1.0 - step[2]);
    for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride)
        adam(i, bc1, sqrt_bc2);
}
