// The bindings, specialization constants and accessors of the matmul
// variants (shaders/variants.txt) that matmul_body.glsl reads through, by
// MATMUL_IO:
// 0 (matmul): f32 tensors.
// 1 (matmul_f16): f16 or f32 operands, each chosen by a specialization
//   constant, on devices with storageBuffer16BitAccess: f16 buffers are read
//   and written as float16_t (each binding is declared with both types).
//   Never bf16 (the host's vka_path16_of sends a bf16 operand to 2).
// 2 (matmul_f16_packed): the same with f16 or bf16 operands, for devices
//   without 16-bit storage and for any call with a bf16 operand: 16-bit
//   buffers are uint words of two elements (elem_type.glsl's VKA_LDW). A
//   16-bit C is written a word at a time by the invocation that owns both
//   of its columns (PAIRS), so no two invocations share a word; the host sends C
//   layouts with an odd row start, and long K, through an f32 scratch
//   (src/ops/matmul.c).
// Sums are f32 in all three.

#include "matmul_iface.h"
#include "elem_type.glsl"

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
#if MATMUL_IO == 1
layout(constant_id = VKA_MATMUL_SPEC_A_TYPE) const uint A_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_B_TYPE) const uint B_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_BIAS_TYPE) const uint BIAS_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_C_TYPE) const uint C_TYPE = VKA_ELEM_F32;

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
float ld_a(uint i) { return VKA_LD(A_TYPE, a, a16, i); }
float ld_b(uint i) { return VKA_LD(B_TYPE, b, b16, i); }
float ld_bias(uint i) { return VKA_LD(BIAS_TYPE, bias, bias16, i); }
float ld_c(uint i) { return VKA_LD(C_TYPE, c, c16, i); }
void st_c(uint i, float v)
{
    VKA_ST(C_TYPE, c, c16, i, v);
}
void st_c2(uint i, float v0, float v1, bool both) {}
#elif MATMUL_IO == 2
layout(constant_id = VKA_MATMUL_SPEC_A_TYPE) const uint A_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_B_TYPE) const uint B_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_BIAS_TYPE) const uint BIAS_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_C_TYPE) const uint C_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 0) readonly buffer ABufW { uint a_w[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 1) readonly buffer BBufW { uint b_w[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 2) readonly buffer BiasBufW { uint bias_w[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };
layout(std430, binding = 3) buffer CBufW { uint c_w[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

const bool PAIRS = VKA_IS_16(C_TYPE);

float ld_a(uint i) { return VKA_LDW(A_TYPE, a, a_w, i); }
float ld_b(uint i) { return VKA_LDW(B_TYPE, b, b_w, i); }
float ld_bias(uint i) { return VKA_LDW(BIAS_TYPE, bias, bias_w, i); }
float ld_c(uint i) { return VKA_LDW(C_TYPE, c, c_w, i); }
void st_c(uint i, float v) { c[i] = v; }
void st_c2(uint i, float v0, float v1, bool both)
{
    // without `both`, the high half is not an output of this call: keep its bits
    uint w = VKA_PACK2(C_TYPE, vec2(v0, v1));
    if (!both)
        w = (c_w[i >> 1] & 0xffff0000u) | (w & 0xffffu);
    c_w[i >> 1] = w;
}
#else

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
#endif
