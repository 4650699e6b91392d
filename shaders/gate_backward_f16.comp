#version 450
// gate_backward.comp with the kept forward's x and g each f16 or f32 (dy and
// the gradient stay f32), for devices with 16-bit storage: an f16 x or g is
// widened exactly, so the gradients are the f32 path's.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "gate_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_GATE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_GATE_SPEC_OUT_DG) const bool OUT_DG = false;
layout(constant_id = VKA_GATE_SPEC_X_TYPE) const uint X_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_GATE_SPEC_G_TYPE) const uint G_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 1) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer XBuf16 { float16_t x16[]; };
layout(std430, binding = 2) readonly buffer GBuf { float g[]; };
layout(std430, binding = 2) readonly buffer GBuf16 { float16_t g16[]; };
layout(std430, binding = 3) writeonly buffer OutBuf { float d_out[]; };

layout(push_constant) uniform Push { VKA_GATE_PUSH } p;

#define VKA_X(i) VKA_LD(X_TYPE, x, x16, i)
#define VKA_G(i) VKA_LD(G_TYPE, g, g16, i)
#include "gate_backward_body.glsl"
