#version 450
// sink_rows.comp with out f16 or f32 (spec constant VKA_SINK_SPEC_OUT_TYPE),
// for devices with 16-bit storage: each f16 element widened exactly, scaled
// in f32 and rounded once, as through f32 scratch (ops/half_stage.h) but
// without its two passes. A row is one invocation's.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "sink_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_SINK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_SINK_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer SinkBuf { float sinks[]; };
layout(std430, binding = 1) buffer OutBuf { float out_o[]; };
layout(std430, binding = 1) buffer OutBuf16 { float16_t out16[]; };
layout(std430, binding = 2) buffer LseBuf { uint lse_u[]; };

layout(push_constant) uniform Push { VKA_SINK_PUSH } p;

#define SR_SCALE(i, f)                                                         \
    if (VKA_IS_F16(OUT_TYPE))                                                  \
        out16[i] = float16_t(float(out16[i]) * (f));                           \
    else                                                                       \
        out_o[i] *= (f)
#include "sink_rows_body.glsl"
