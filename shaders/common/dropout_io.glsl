// The bindings, specialization constants and accessors of the dropout
// variants (shaders/variants.txt) that dropout_body.glsl reads through:
// DROPOUT_F16_STORAGE 0, f32 tensors (dropout); 1, on devices with
// storageBuffer16BitAccess (dropout_f16): in and out are each f16
// (float16_t) or f32 by a specialization constant (each binding is declared
// with both element types). The product is f32 either way, so the kept
// elements and their f32 values are the f32 kernel's; an f16 out is that
// value converted once.

#include "dropout_iface.h"
#include "elem_type.glsl"

// specialization constants: ids and meanings in dropout_iface.h
layout(local_size_x_id = VKA_DROPOUT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
#if DROPOUT_F16_STORAGE
layout(constant_id = VKA_DROPOUT_SPEC_IN_PLACE) const bool IN_PLACE = false;
layout(constant_id = VKA_DROPOUT_SPEC_IN_TYPE) const uint IN_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_DROPOUT_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 0) readonly buffer InBuf16 { float16_t src16[]; };
layout(std430, binding = 1) buffer OutBuf { float dst[]; };
layout(std430, binding = 1) buffer OutBuf16 { float16_t dst16[]; };

layout(push_constant) uniform Push { VKA_DROPOUT_PUSH } p;

// in place, in and out are one tensor of one type (OUT_TYPE)
float load(uint idx)
{
    if (IN_PLACE)
        return VKA_LD(OUT_TYPE, dst, dst16, idx);
    return VKA_LD(IN_TYPE, src, src16, idx);
}
#define VKA_STORE(i, v) VKA_ST(OUT_TYPE, dst, dst16, i, v)
#else
// IN_PLACE: the host binds the dummy at binding 0 and the shader reads `dst`
// itself, so no buffer is bound twice in one dispatch.
layout(constant_id = VKA_DROPOUT_SPEC_IN_PLACE) const bool IN_PLACE = false;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 1) buffer OutBuf { float dst[]; };

layout(push_constant) uniform Push { VKA_DROPOUT_PUSH } p;

float load(uint idx) { return IN_PLACE ? dst[idx] : src[idx]; }
#define VKA_STORE(i, v) dst[i] = (v)
#endif
