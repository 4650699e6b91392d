#version 450
// Masked softmax backward, one storage buffer per operand (6 bindings). The
// kernel: shaders/common/softmax_backward_body.glsl. Devices with fewer than
// 6 storage buffers per stage run shaders/softmax_backward_packed.comp.
#extension GL_GOOGLE_include_directive : require

layout(std430, binding = 0) readonly buffer WBuf { float w_in[]; };
layout(std430, binding = 1) readonly buffer DWBuf { float dw_in[]; }; // unused IN_PLACE
layout(std430, binding = 2) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 3) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 4) readonly buffer MaskBuf { float mask_in[]; };
// Not writeonly: the IN_PLACE variant reads dL/dW from here.
layout(std430, binding = 5) buffer OutBuf { float outv[]; };

#define VKA_W(i) w_in[i]
#define VKA_DW(i) dw_in[i]
#define VKA_BIAS(i) bias_in[i]
#define VKA_VMASK(i) vmask_in[i]
#define VKA_MASK(i) mask_in[i]
#define VKA_OUT outv
#include "softmax_backward_body.glsl"
