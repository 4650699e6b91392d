// The interface of the cooperative-matrix matmuls (matmul_coopmat_body.glsl,
// matmul_coopmat2_nv.comp): specialization constants, workgroup, bindings and
// push constants (matmul_iface.h's numbers, src/ops/matmul.c sets them), and
// the tile shapes derived from them. One copy, so the host can swap one
// kernel's module for another's. Include after coopmat_ext.glsl.
#include "matmul_iface.h"
#include "elem_type.glsl"

layout(constant_id = VKA_COOPMAT_SPEC_BM) const uint BM = 128;
layout(constant_id = VKA_COOPMAT_SPEC_BN) const uint BN = 128;
layout(constant_id = VKA_COOPMAT_SPEC_BK) const uint BK = 32;
layout(constant_id = VKA_COOPMAT_SPEC_WARPS_M) const uint WARPS_M = 4;
layout(constant_id = VKA_COOPMAT_SPEC_WARPS_N) const uint WARPS_N = 2;
#if COOPMAT_HW
layout(constant_id = VKA_COOPMAT_SPEC_SUBGROUP) const uint SG = 32;
#else
const uint SG = 32; // the emulation's warps (coopmat_frag.glsl)
#endif
layout(constant_id = VKA_COOPMAT_SPEC_TRANS_A) const bool TRANS_A = false;
layout(constant_id = VKA_COOPMAT_SPEC_TRANS_B) const bool TRANS_B = false;
layout(constant_id = VKA_COOPMAT_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_COOPMAT_SPEC_BIAS_TYPE) const uint BIAS_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_COOPMAT_SPEC_C_TYPE) const uint C_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_COOPMAT_SPEC_VEC_A) const bool VEC_A = false;
layout(constant_id = VKA_COOPMAT_SPEC_VEC_B) const bool VEC_B = false;
// invocations = WARPS_M * WARPS_N * SG, set by the host
layout(local_size_x_id = VKA_COOPMAT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ABufW { uint a_w[]; };
layout(std430, binding = 0) readonly buffer ABufW4 { uvec4 a_w4[]; };
layout(std430, binding = 1) readonly buffer BBufW { uint b_w[]; };
layout(std430, binding = 1) readonly buffer BBufW4 { uvec4 b_w4[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 2) readonly buffer BiasBufW { uint bias_w[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };
layout(std430, binding = 3) buffer CBufW { uint c_w[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

const uint THREADS = WARPS_M * WARPS_N * SG;
const uint FM = BM / (WARPS_M * 16), FN = BN / (WARPS_N * 16);
// Shared tiles in stored orientation, rows padded by 8 halves (16 bytes: the
// fragment loads' alignment, and rows off each other's banks), two buffers
// each; held as uvec4s (eight halves), so a staged group is one store and
// the fragment loads count offsets and strides in uvec4s.
const uint A_ROWS = TRANS_A ? BK : BM, A_COLS = TRANS_A ? BM : BK;
const uint B_ROWS = TRANS_B ? BN : BK, B_COLS = TRANS_B ? BK : BN;
const uint A_LD = A_COLS / 8 + 1, B_LD = B_COLS / 8 + 1; // in uvec4s
const uint A_SIZE = A_ROWS * A_LD, B_SIZE = B_ROWS * B_LD;
// groups of eight stored halves per tile, and per invocation
const uint QA = A_ROWS * A_COLS / 8, QB = B_ROWS * B_COLS / 8;
const uint LA = (QA + THREADS - 1) / THREADS, LB = (QB + THREADS - 1) / THREADS;
