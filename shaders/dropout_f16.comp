#version 450
// Inverted dropout on devices with storageBuffer16BitAccess: in and out are
// each f16 (float16_t) or f32 by a specialization constant (each binding is
// declared with both element types). The product is f32, as in dropout.comp,
// so the kept elements and their f32 values are the f32 kernel's; an f16 out
// is that value converted once. The kernel: common/dropout_body.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#include "dropout_iface.h"

// specialization constants: ids and meanings in dropout_iface.h
layout(local_size_x_id = VKA_DROPOUT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_DROPOUT_SPEC_IN_PLACE) const bool IN_PLACE = false;
layout(constant_id = VKA_DROPOUT_SPEC_IN_F16) const bool IN_F16 = false;
layout(constant_id = VKA_DROPOUT_SPEC_OUT_F16) const bool OUT_F16 = false;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 0) readonly buffer InBuf16 { float16_t src16[]; };
layout(std430, binding = 1) buffer OutBuf { float dst[]; };
layout(std430, binding = 1) buffer OutBuf16 { float16_t dst16[]; };

layout(push_constant) uniform Push { VKA_DROPOUT_PUSH } p;

// in place, in and out are one tensor of one type (OUT_F16)
float load(uint idx)
{
    if (IN_PLACE)
        return OUT_F16 ? float(dst16[idx]) : dst[idx];
    return IN_F16 ? float(src16[idx]) : src[idx];
}
#define VKA_STORE(i, v)                                                        \
    if (OUT_F16)                                                               \
        dst16[i] = float16_t(v);                                               \
    else                                                                       \
        dst[i] = (v)

#include "dropout_body.glsl"
