#version 450
// QK-norm then the rotary embedding, in place on (B, heads, seq, dim) query
// or key heads (docs/SEMANTICS.md, "QK-norm and rotary embeddings"). One
// invocation per row: the row is read twice (its mean square, then each pair
// once), so a pair is turned from its own normalized values before either is
// written. head_prep_f16.comp reads and writes f16 heads as they are; the
// kernel: common/head_prep_body.glsl.
// Angles are fp32, pos * inv_freq[i] with inv_freq from the host (rounded
// from double), reduced to about [-pi, pi] before cos and sin, whose
// precision Vulkan bounds only there.
#extension GL_GOOGLE_include_directive : require
#include "head_prep_iface.h"

layout(local_size_x_id = VKA_HEAD_PREP_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer WBuf { float w[]; };          // (dim) use_norm
layout(std430, binding = 2) readonly buffer PosBuf { float pos[]; };      // POS_TENSOR
layout(std430, binding = 2) readonly buffer LenBuf { uint lengths[]; };   // POS_LENGTHS
layout(std430, binding = 3) readonly buffer FreqBuf { float inv_freq[]; }; // (rotary_dim/2)

layout(push_constant) uniform Push { VKA_HEAD_PREP_PUSH } p;

#define HP_X(i) x[i]
#define HP_SET(i, v) x[i] = (v)
#define HP_W(i) w[i]
#include "head_prep_body.glsl"
