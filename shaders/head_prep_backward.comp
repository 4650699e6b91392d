#version 450
// The QK-norm's backward, in place on the gradient of the normalized heads
// (B, heads, seq, dim) (the rotation already undone by head_prep.comp with
// `inverse`): with s = 1/sqrt(mean(x^2) + eps) of the forward's input row x,
//   dw_row[e] = g[e] * x[e] * s                (summed over rows by grad_reduce)
//   g[e]      = s * g[e] * w[e] - s^3 * mean(g * w * x) * x[e]
// One invocation per row. head_prep_backward_f16.comp reads an f16 x and w as
// they are; the kernel: common/head_prep_backward_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "head_prep_iface.h"

layout(local_size_x_id = VKA_HEAD_PREP_BWD_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) buffer GBuf { float g[]; };
layout(std430, binding = 2) readonly buffer WBuf { float w[]; };
layout(std430, binding = 3) writeonly buffer DwBuf { float dw[]; };

layout(push_constant) uniform Push { VKA_HEAD_PREP_BWD_PUSH } p;

#define HB_X(i) x[i]
#define HB_W(i) w[i]
#include "head_prep_backward_body.glsl"
