#version 450
// Batched matmul on f32 tensors; the body is common/matmul_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "matmul_iface.h"

// specialization constants: ids and meanings in matmul_iface.h
layout(constant_id = VKA_MATMUL_SPEC_BM) const uint BM = 64;
layout(constant_id = VKA_MATMUL_SPEC_BN) const uint BN = 64;
layout(constant_id = VKA_MATMUL_SPEC_BK) const uint BK = 16;
layout(constant_id = VKA_MATMUL_SPEC_TM) const uint TM = 4;
layout(constant_id = VKA_MATMUL_SPEC_TN) const uint TN = 4;
layout(constant_id = VKA_MATMUL_SPEC_TRANS_A) const bool TRANS_A = false;
layout(constant_id = VKA_MATMUL_SPEC_TRANS_B) const bool TRANS_B = false;
layout(constant_id = VKA_MATMUL_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
// invocations = (BM / TM) * (BN / TN), set by the host
layout(local_size_x_id = VKA_MATMUL_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

const bool PAIRS = false;
float ld_a(uint i) { return a[i]; }
float ld_b(uint i) { return b[i]; }
float ld_bias(uint i) { return bias[i]; }
float ld_c(uint i) { return c[i]; }
void st_c(uint i, float v) { c[i] = v; }
void st_c2(uint i, float v0, float v1, bool both) {}

#include "matmul_body.glsl"
