#version 450
// Sums of strided slices, for gradients of broadcast operands: a bias row
// added to every row of every matrix, a weight matrix shared by the batch, a
// scale vector shared by every (query, key) pair. Each invocation owns output
// elements (a grid-stride loop lets the host cap the group count) and sums
// its slices in a fixed order: no atomics, the same result on every run.
#extension GL_GOOGLE_include_directive : require
#include "grad_reduce_iface.h"

// specialization constants: ids and meanings in grad_reduce_iface.h
layout(local_size_x_id = VKA_GRAD_REDUCE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer InBuf { float x[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_GRAD_REDUCE_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = p.begin + gl_GlobalInvocationID.x; e < p.end; e += stride) {
        const uint c = e % p.cols;
        const uint r = (e / p.cols) % p.rows;
        const uint g = e / (p.cols * p.rows);
        const uint base = g * p.in_g + r * p.in_row + c;
        float acc = 0.0;
        for (uint i = 0; i < p.n1; i++)
            for (uint j = 0; j < p.n2; j++)
                for (uint l = 0; l < p.n3; l++)
                    acc += x[base + i * p.s1 + j * p.s2 + l * p.s3];
        y[g * p.out_g + r * p.out_row + c] = p.alpha * acc;
    }
}
