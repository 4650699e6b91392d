// The 3 bindings of the softmax_packed variant (shaders/variants.txt), for
// devices with 4 storage buffers per stage (the Vulkan minimum): bias, value
// mask and explicit mask are copied by the host into one pack buffer
// (src/vk/pack.h) and read at the element offsets p.bias_off, p.vmask_off,
// p.mask_off. f16 scores are read as halves packed two per word
// (SCORES_TYPE f16); the pack and the output are f32. The kernel:
// softmax_body.glsl.

layout(std430, binding = 0) readonly buffer ScoreBuf { float scores[]; }; // unused IN_PLACE
layout(std430, binding = 0) readonly buffer ScoreBufW { uint scores_w[]; };
layout(std430, binding = 1) readonly buffer SideBuf { float side[]; };
// Not writeonly: the IN_PLACE variant reads the scores from here.
layout(std430, binding = 2) buffer OutBuf { float outv[]; };

#define VKA_SCORE(i) VKA_LDW(SCORES_TYPE, scores, scores_w, i)
#define VKA_BIAS(i) side[i]
#define VKA_VMASK(i) side[i]
#define VKA_MASK(i) side[i]
#define VKA_OUT_LOAD(i) outv[i]
#define VKA_OUT_STORE(i, v) outv[i] = (v)
