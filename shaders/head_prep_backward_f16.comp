#version 450
// head_prep_backward.comp with the forward's heads x and the norm weight w
// each f16 or f32 (spec constants VKA_HEAD_PREP_BWD_SPEC_X_TYPE, _W_TYPE), for
// devices with 16-bit storage: widened exactly, so the gradients are the f32
// kernel's on those values, without an f32 copy of them.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "head_prep_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_HEAD_PREP_BWD_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_HEAD_PREP_BWD_SPEC_X_TYPE) const uint X_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_HEAD_PREP_BWD_SPEC_W_TYPE) const uint W_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 0) readonly buffer XBuf16 { float16_t x16[]; };
layout(std430, binding = 1) buffer GBuf { float g[]; };
layout(std430, binding = 2) readonly buffer WBuf { float w[]; };
layout(std430, binding = 2) readonly buffer WBuf16 { float16_t w16[]; };
layout(std430, binding = 3) writeonly buffer DwBuf { float dw[]; };

layout(push_constant) uniform Push { VKA_HEAD_PREP_BWD_PUSH } p;

#define HB_X(i) VKA_LD(X_TYPE, x, x16, i)
#define HB_W(i) VKA_LD(W_TYPE, w, w16, i)
#include "head_prep_backward_body.glsl"
