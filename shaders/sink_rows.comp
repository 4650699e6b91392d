#version 450
// Attention sinks after the fused kernel: row r = (b, h, i) of out (f32) and
// (where p.update_lse) its log-sum-exp lse (natural log, -inf as its bit pattern for a row with
// nothing allowed) become those of a softmax whose denominator also holds
// exp(sink_h):
//   out_r *= 1 / (1 + exp(sink_h - lse_r)),  lse_r = log(exp(lse_r) + exp(sink_h)).
// Exact for dropout too (it scales the kept weights by one factor). The
// chained path scales its softmax weights the same way (width Tv, the lse
// kept: it is the fused kernel's, run for it). A row
// with nothing allowed keeps out 0 (the host forces the zero policy) and gets
// lse = sink_h. Both are written with no inf argument to exp (the compiler
// may assume none): d = sink - lse enters as -|d|. A NaN lse or sink
// propagates to the row. sink_rows_f16.comp: an f16 out scaled as it is; the
// kernel: common/sink_rows_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "sink_iface.h"

layout(local_size_x_id = VKA_SINK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer SinkBuf { float sinks[]; };
layout(std430, binding = 1) buffer OutBuf { float out_o[]; };
layout(std430, binding = 2) buffer LseBuf { uint lse_u[]; };

layout(push_constant) uniform Push { VKA_SINK_PUSH } p;

#define SR_SCALE(i, f) out_o[i] *= (f)
#include "sink_rows_body.glsl"
