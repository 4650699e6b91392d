// The bindings of the softmax_backward variants (shaders/variants.txt) and
// the accessors softmax_backward_body.glsl reads them through:
// SOFTMAX_BACKWARD_PACKED 0, one storage buffer per operand (6 bindings);
// 1, for devices with fewer than 6 per stage: the side inputs (bias, value
// mask, mask) packed behind one binding (src/vk/pack.h), 4 bindings.

#if SOFTMAX_BACKWARD_PACKED
layout(std430, binding = 0) readonly buffer WBuf { float w_in[]; };
layout(std430, binding = 1) readonly buffer DWBuf { float dw_in[]; }; // unused IN_PLACE
layout(std430, binding = 2) readonly buffer SideBuf { float side[]; };
layout(std430, binding = 3) buffer OutBuf { float outv[]; };

#define VKA_W(i) w_in[i]
#define VKA_DW(i) dw_in[i]
#define VKA_BIAS(i) side[i]
#define VKA_VMASK(i) side[i]
#define VKA_MASK(i) side[i]
#define VKA_OUT outv
#else
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
#endif
