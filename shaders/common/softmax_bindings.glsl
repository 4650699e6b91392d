// The 5 bindings of the softmax, softmax_sg and softmax_split variants
// (shaders/variants.txt; one storage buffer per operand) and the accessors
// softmax_body.glsl reads them through. f16 scores and bias are read as
// halves packed two per word (SCORES_TYPE, BIAS_TYPE f16; needs no 16-bit
// storage); the output is f32. Devices with fewer than 5 storage buffers per
// stage run softmax_packed (softmax_bindings_packed.glsl) instead.

layout(std430, binding = 0) readonly buffer ScoreBuf { float scores[]; }; // unused IN_PLACE
layout(std430, binding = 0) readonly buffer ScoreBufW { uint scores_w[]; };
layout(std430, binding = 1) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 1) readonly buffer BiasBufW { uint bias_w[]; };
layout(std430, binding = 2) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 3) readonly buffer MaskBuf { float mask_in[]; };
// Not writeonly: the IN_PLACE variant reads the scores from here. Each element
// is read and then written by the same invocation, so no barrier is needed.
layout(std430, binding = 4) buffer OutBuf { float outv[]; };
#if defined(SOFTMAX_SPLIT) && SOFTMAX_SPLIT
// (max, sum) of each chunk of each row; phase 1 reads what phase 0 wrote
layout(std430, binding = 5) buffer PartBuf { vec2 part[]; };
#endif

#define VKA_SCORE(i) VKA_LDW(SCORES_TYPE, scores, scores_w, i)
#define VKA_BIAS(i) VKA_LDW(BIAS_TYPE, bias_in, bias_w, i)
#define VKA_VMASK(i) vmask_in[i]
#define VKA_MASK(i) mask_in[i]
#define VKA_OUT_LOAD(i) outv[i]
#define VKA_OUT_STORE(i, v) outv[i] = (v)
