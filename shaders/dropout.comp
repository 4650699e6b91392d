#version 450
// Inverted dropout of f32 tensors; the kernel: common/dropout_body.glsl.
// Devices with 16-bit storage run dropout_f16.comp for f16 tensors.
#extension GL_GOOGLE_include_directive : require
#include "dropout_iface.h"

// specialization constants: ids and meanings in dropout_iface.h
layout(local_size_x_id = VKA_DROPOUT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
// IN_PLACE: the host binds the dummy at binding 0 and the shader reads `dst`
// itself, so no buffer is bound twice in one dispatch.
layout(constant_id = VKA_DROPOUT_SPEC_IN_PLACE) const bool IN_PLACE = false;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 1) buffer OutBuf { float dst[]; };

layout(push_constant) uniform Push { VKA_DROPOUT_PUSH } p;

float load(uint idx) { return IN_PLACE ? dst[idx] : src[idx]; }
#define VKA_STORE(i, v) dst[i] = (v)

#include "dropout_body.glsl"
