// The bindings, push constants and row loads of the fused SDPA backward's
// pass 1 (flash_backward_stats_body.glsl, CPU tuning, and
// flash_backward_stats_gpu_body.glsl, GPU tuning): dO and out as floats or
// vec4s, or in the _f16 variants (FB_F16, 16-bit storage) each f16 or f32,
// widened exactly through elem_type.glsl; the LSE bits in, the stats out.
// Include after flash_backward_iface.h.
#include "elem_type.glsl"

layout(std430, binding = 0) readonly buffer DOBuf { float do_in[]; };
layout(std430, binding = 1) readonly buffer OBuf { float o_in[]; };
layout(std430, binding = 0) readonly buffer DOBuf4 { vec4 do4_in[]; };
layout(std430, binding = 1) readonly buffer OBuf4 { vec4 o4_in[]; };
#ifdef FB_F16
layout(constant_id = VKA_FB_SPEC_O_TYPE) const uint O_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FB_SPEC_DO_TYPE) const uint DO_TYPE = VKA_ELEM_F32;
layout(std430, binding = 0) readonly buffer DOBuf16 { float16_t do16_in[]; };
layout(std430, binding = 0) readonly buffer DOBuf16x4 { f16vec4 do16x4_in[]; };
layout(std430, binding = 1) readonly buffer OBuf16 { float16_t o16_in[]; };
layout(std430, binding = 1) readonly buffer OBuf16x4 { f16vec4 o16x4_in[]; };
#define FB_O(i) VKA_LD(O_TYPE, o_in, o16_in, i)
#define FB_O4(i) VKA_LD4(O_TYPE, o4_in, o16x4_in, i)
#define FB_DO(i) VKA_LD(DO_TYPE, do_in, do16_in, i)
#define FB_DO4(i) VKA_LD4(DO_TYPE, do4_in, do16x4_in, i)
#else
#define FB_O(i) o_in[i]
#define FB_O4(i) o4_in[i]
#define FB_DO(i) do_in[i]
#define FB_DO4(i) do4_in[i]
#endif
layout(std430, binding = 2) readonly buffer LseBuf { uint lse_u[]; };
layout(std430, binding = 3) writeonly buffer StatsBuf { vec2 stats[]; };

layout(push_constant) uniform Push { VKA_FB_PUSH } p;

const float LOG2E = 1.4426950408889634;
const float DEAD = 3.0e38; // finite: no inf is relied on
const uint NEG_INF_BITS = 0xFF800000u;
