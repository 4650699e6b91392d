// Sums of strided slices, for gradients of broadcast operands: a bias row
// added to every row of every matrix, a weight matrix shared by the batch, a
// scale vector shared by every (query, key) pair. Each invocation owns output
// elements (a grid-stride loop lets the host cap the group count) and sums
// its slices in a fixed order: no atomics, the same result on every run.
//
// Switch GRAD_REDUCE_F16 (shaders/variants.txt: grad_reduce, grad_reduce_f16;
// src/ops/grad_reduce.c picks): 1 declares x and y also as float16_t views,
// chosen by the spec constants IN_TYPE and OUT_TYPE (16-bit storage): an f16
// input widened exactly, the sum in f32 as with f32 tensors, an f16 output
// rounded once, so the values of the f32 kernel between f32 copies
// (ops/half_stage.h) without their conversion passes.
#include "grad_reduce_iface.h"

// specialization constants: ids and meanings in grad_reduce_iface.h
layout(local_size_x_id = VKA_GRAD_REDUCE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer InBuf { float x[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_GRAD_REDUCE_PUSH } p;

#if GRAD_REDUCE_F16
#include "elem_type.glsl"
layout(constant_id = VKA_GRAD_REDUCE_SPEC_IN_TYPE) const uint IN_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_GRAD_REDUCE_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;
layout(std430, binding = 0) readonly buffer InBuf16 { float16_t x16[]; };
layout(std430, binding = 1) writeonly buffer OutBuf16 { float16_t y16[]; };
#define GR_LOAD(i) VKA_LD(IN_TYPE, x, x16, i)
#define GR_STORE(i, v) VKA_ST(OUT_TYPE, y, y16, i, v)
#else
#define GR_LOAD(i) x[i]
#define GR_STORE(i, v) y[i] = (v)
#endif

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
                    acc += GR_LOAD(base + i * p.s1 + j * p.s2 + l * p.s3);
        const float v = p.alpha * acc;
        GR_STORE(g * p.out_g + r * p.out_row + c, v);
    }
}
