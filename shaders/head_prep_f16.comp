#version 450
// head_prep.comp with the heads x and the norm weight w each f16 or f32 (spec
// constants VKA_HEAD_PREP_SPEC_X_TYPE, _W_TYPE), for devices with 16-bit
// storage: f16 values are widened exactly, the arithmetic is f32 and each f16
// element written is rounded once, as through f32 scratch (ops/half_stage.h)
// but without its passes. A row is one invocation's, so no two invocations
// write one element.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "head_prep_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_HEAD_PREP_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_HEAD_PREP_SPEC_X_TYPE) const uint X_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_HEAD_PREP_SPEC_W_TYPE) const uint W_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 0) buffer XBuf16 { float16_t x16[]; };
layout(std430, binding = 1) readonly buffer WBuf { float w[]; };
layout(std430, binding = 1) readonly buffer WBuf16 { float16_t w16[]; };
layout(std430, binding = 2) readonly buffer PosBuf { float pos[]; };
layout(std430, binding = 2) readonly buffer LenBuf { uint lengths[]; };
layout(std430, binding = 3) readonly buffer FreqBuf { float inv_freq[]; };

layout(push_constant) uniform Push { VKA_HEAD_PREP_PUSH } p;

#define HP_X(i) VKA_LD(X_TYPE, x, x16, i)
#define HP_SET(i, v) VKA_ST(X_TYPE, x, x16, i, v)
#define HP_W(i) VKA_LD(W_TYPE, w, w16, i)
#include "head_prep_body.glsl"
