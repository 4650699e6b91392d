// Operand element types. A kernel whose operand X may be f32 or f16 declares
//   layout(constant_id = VKA_<K>_SPEC_X_TYPE) const uint X_TYPE = VKA_ELEM_F32;
// and reads and writes X through these macros, one pair per storage path:
//   16-bit storage: X's binding is aliased by a float16_t (f16vec4) view h;
//   packed (no 16-bit storage): by a view w of uint words holding two halves
//     each (uvec2 for four), widened by the kernel's half_at / halves4.
// f is the f32 view. A load is the element exactly, as a float (vec4).
#ifndef VKA_ELEM_TYPE_GLSL
#define VKA_ELEM_TYPE_GLSL

#include "elem_iface.h"

#define VKA_IS_F16(T) ((T) == VKA_ELEM_F16)

// 16-bit storage
#define VKA_LD(T, f, h, i) (VKA_IS_F16(T) ? float((h)[i]) : (f)[i])
#define VKA_LD4(T, f, h, i) (VKA_IS_F16(T) ? vec4((h)[i]) : (f)[i])
// rounded once to nearest even where f16 (float16_t(), as before)
#define VKA_ST(T, f, h, i, v)                                                  \
    if (VKA_IS_F16(T))                                                         \
        (h)[i] = float16_t(v);                                                 \
    else                                                                       \
        (f)[i] = (v)

// packed: element i is half (i & 1) of word i >> 1
#define VKA_LDW(T, f, w, i) (VKA_IS_F16(T) ? half_at((w)[(i) >> 1u], i) : (f)[i])
#define VKA_LDW4(T, f, w, i) (VKA_IS_F16(T) ? halves4((w)[i]) : (f)[i])

#endif // VKA_ELEM_TYPE_GLSL
