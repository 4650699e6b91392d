#version 450
// Head split and merge of f32 tensors; the kernel: common/heads_body.glsl.
// Devices with 16-bit storage run heads_f16.comp for f16 tensors.
#extension GL_GOOGLE_include_directive : require
#include "heads_iface.h"

// specialization constants: ids and meanings in heads_iface.h
layout(constant_id = VKA_HEADS_SPEC_SPLIT) const bool SPLIT = true;
layout(local_size_x_id = VKA_HEADS_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float dst[]; };

layout(push_constant) uniform Push { VKA_HEADS_PUSH } p;

#define VKA_LOAD(i) src[i]
#define VKA_STORE(i, v) dst[i] = (v)

#include "heads_body.glsl"
