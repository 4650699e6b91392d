#version 450
// Masked softmax, one storage buffer per operand (5 bindings). The kernel and
// its algorithm: shaders/common/softmax_body.glsl. Devices with fewer than 5
// storage buffers per stage run shaders/softmax_packed.comp instead.
#extension GL_GOOGLE_include_directive : require

layout(std430, binding = 0) readonly buffer ScoreBuf { float scores[]; }; // unused IN_PLACE
layout(std430, binding = 1) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 2) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 3) readonly buffer MaskBuf { float mask_in[]; };
// Not writeonly: the IN_PLACE variant reads the scores from here. Each element
// is read and then written by the same invocation, so no barrier is needed.
layout(std430, binding = 4) buffer OutBuf { float outv[]; };

#define VKA_SCORE(i) scores[i]
#define VKA_BIAS(i) bias_in[i]
#define VKA_VMASK(i) vmask_in[i]
#define VKA_MASK(i) mask_in[i]
#define VKA_OUT outv
#include "softmax_body.glsl"
