#version 450
// Batched matmul with f16 or f32 operands, each chosen by a specialization
// constant, on devices with storageBuffer16BitAccess: f16 buffers are read and
// written as float16_t (each binding is declared with both element types).
// Sums are f32; the body is common/matmul_body.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
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
layout(constant_id = VKA_MATMUL_SPEC_A_F16) const bool A_F16 = false;
layout(constant_id = VKA_MATMUL_SPEC_B_F16) const bool B_F16 = false;
layout(constant_id = VKA_MATMUL_SPEC_BIAS_F16) const bool BIAS_F16 = false;
layout(constant_id = VKA_MATMUL_SPEC_C_F16) const bool C_F16 = false;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 0) readonly buffer ABuf16 { float16_t a16[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 1) readonly buffer BBuf16 { float16_t b16[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 2) readonly buffer BiasBuf16 { float16_t bias16[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };
layout(std430, binding = 3) buffer CBuf16 { float16_t c16[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

const bool PAIRS = false;
float ld_a(uint i) { return A_F16 ? float(a16[i]) : a[i]; }
float ld_b(uint i) { return B_F16 ? float(b16[i]) : b[i]; }
float ld_bias(uint i) { return BIAS_F16 ? float(bias16[i]) : bias[i]; }
float ld_c(uint i) { return C_F16 ? float(c16[i]) : c[i]; }
void st_c(uint i, float v)
{
    if (C_F16)
        c16[i] = float16_t(v);
    else
        c[i] = v;
}
void st_c2(uint i, float v0, float v1, bool both) {}

#include "matmul_body.glsl"
