// The 5 bindings of the softmax_f16 variant (shaders/variants.txt), for
// devices with storageBuffer16BitAccess: scores, bias and out are each f16
// (float16_t) or f32 by a specialization constant (each binding is declared
// with both element types); masks are f32. All arithmetic is f32; an f16 out
// is each f32 weight converted once. The kernel: softmax_body.glsl.

layout(std430, binding = 0) readonly buffer ScoreBuf { float scores[]; }; // unused IN_PLACE
layout(std430, binding = 0) readonly buffer ScoreBuf16 { float16_t scores16[]; };
layout(std430, binding = 1) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 1) readonly buffer BiasBuf16 { float16_t bias16[]; };
layout(std430, binding = 2) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 3) readonly buffer MaskBuf { float mask_in[]; };
// Not writeonly: the IN_PLACE variant reads the scores from here. Each element
// is read and then written by the same invocation, so no barrier is needed.
layout(std430, binding = 4) buffer OutBuf { float outv[]; };
layout(std430, binding = 4) buffer OutBuf16 { float16_t out16[]; };

#define VKA_SCORE(i) VKA_LD(SCORES_TYPE, scores, scores16, i)
#define VKA_BIAS(i) VKA_LD(BIAS_TYPE, bias_in, bias16, i)
#define VKA_VMASK(i) vmask_in[i]
#define VKA_MASK(i) mask_in[i]
#define VKA_OUT_LOAD(i) VKA_LD(OUT_TYPE, outv, out16, i)
#define VKA_OUT_STORE(i, v) VKA_ST(OUT_TYPE, outv, out16, i, v)
