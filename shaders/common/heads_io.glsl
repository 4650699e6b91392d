// The bindings, specialization constants and accessors of the heads
// variants (shaders/variants.txt) that heads_body.glsl reads through:
// HEADS_F16_STORAGE 0, f32 tensors (heads); 1, on devices with
// storageBuffer16BitAccess (heads_f16): in and out are each f16 (float16_t)
// or f32 by a specialization constant (each binding is declared with both
// element types); an f32 -> f16 copy rounds once.

#include "heads_iface.h"
#include "elem_type.glsl"

// specialization constants: ids and meanings in heads_iface.h
layout(constant_id = VKA_HEADS_SPEC_SPLIT) const bool SPLIT = true;
layout(local_size_x_id = VKA_HEADS_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
#if HEADS_F16_STORAGE
layout(constant_id = VKA_HEADS_SPEC_IN_TYPE) const uint IN_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_HEADS_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 0) readonly buffer InBuf16 { float16_t src16[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float dst[]; };
layout(std430, binding = 1) writeonly buffer OutBuf16 { float16_t dst16[]; };

layout(push_constant) uniform Push { VKA_HEADS_PUSH } p;

#define VKA_LOAD(i) VKA_LD(IN_TYPE, src, src16, i)
#define VKA_STORE(i, v) VKA_ST(OUT_TYPE, dst, dst16, i, v)
#else

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float dst[]; };

layout(push_constant) uniform Push { VKA_HEADS_PUSH } p;

#define VKA_LOAD(i) src[i]
#define VKA_STORE(i, v) dst[i] = (v)
#endif
