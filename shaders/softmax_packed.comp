#version 450
// Masked softmax for devices with 4 storage buffers per stage (the Vulkan
// minimum): bias, value mask and explicit mask are copied by the host into
// one pack buffer (src/vk/pack.h) and read at the element offsets
// p.bias_off, p.vmask_off, p.mask_off. 3 bindings. The kernel and its
// algorithm: shaders/common/softmax_body.glsl.
#extension GL_GOOGLE_include_directive : require

layout(std430, binding = 0) readonly buffer ScoreBuf { float scores[]; }; // unused IN_PLACE
layout(std430, binding = 1) readonly buffer SideBuf { float side[]; };
// Not writeonly: the IN_PLACE variant reads the scores from here.
layout(std430, binding = 2) buffer OutBuf { float outv[]; };

#define VKA_SCORE(i) scores[i]
#define VKA_BIAS(i) side[i]
#define VKA_VMASK(i) side[i]
#define VKA_MASK(i) side[i]
#define VKA_OUT outv
#include "softmax_body.glsl"
