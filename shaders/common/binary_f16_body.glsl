// The binary elementwise kernels' f16 variants (gate_f16.comp, add_f16.comp,
// scale_f16.comp), for devices with storageBuffer16BitAccess: bindings 0 and
// 1 read, 2 written, each f16 (float16_t) or f32 by a specialization
// constant (each declared with both element types). The includer defines
// VKA_BINARY(a, b), the f32 kernel's arithmetic, and VKA_BINARY_A_SCALAR when
// a is one value for every element (scale.comp's s[0]). f16 operands are
// widened exactly, the arithmetic is f32 as in the f32 kernel, an f16 y is
// its result converted once: the values of the f32 path through f32 scratch
// (ops/half_stage.h) without its conversion passes.
#extension GL_EXT_shader_16bit_storage : require
#include "elementwise_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_ELEMENTWISE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_ELEMENTWISE_SPEC_A_TYPE) const uint A_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_ELEMENTWISE_SPEC_B_TYPE) const uint B_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_ELEMENTWISE_SPEC_Y_TYPE) const uint Y_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 0) readonly buffer ABuf16 { float16_t a16[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 1) readonly buffer BBuf16 { float16_t b16[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float y[]; };
layout(std430, binding = 2) writeonly buffer OutBuf16 { float16_t y16[]; };

layout(push_constant) uniform Push { VKA_ELEMENTWISE_PUSH } p;

float load_a(uint idx)
{
#ifdef VKA_BINARY_A_SCALAR
    idx = 0;
#endif
    return VKA_LD(A_TYPE, a, a16, idx);
}

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        const float v = VKA_BINARY(load_a(idx), VKA_LD(B_TYPE, b, b16, idx));
        VKA_ST(Y_TYPE, y, y16, idx, v);
    }
}
