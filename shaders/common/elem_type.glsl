// Operand element types. A kernel whose operand X may be f32 or f16 declares
//   layout(constant_id = VKA_<K>_SPEC_X_TYPE) const uint X_TYPE = VKA_ELEM_F32;
// and reads and writes X through these macros, one pair per storage path:
//   16-bit storage: X's binding is aliased by a float16_t (f16vec4) view h;
//   packed (no 16-bit storage): by a view w of uint words holding two 16-bit
//     elements each (uvec2 for four), low half first.
// f is the f32 view. A load is the element exactly, as a float (vec4). The
// packed readers and writers are defined here once; kernels do not widen or
// round a packed operand themselves, except as listed below.
//
// bf16 (code 2 in elem_iface.h: load = bits << 16, store = round to nearest
// even) is a branch in this file's packed macros (VKA_LDW, VKA_LDW4,
// VKA_UNPACK4, VKA_PACK2, VKA_PACK4). Outside this file it still touches:
// - the 16-bit storage path: VKA_LD/VKA_ST read a float16_t view, so every
//   kernel declaring float16_t/f16vec4 views (binary_f16_body, dropout_io,
//   flash_backward_io, flash_backward_stats_io, flash_body with
//   FLASH_F16_STORAGE, grad_reduce_body, heads_io, matmul_io MATMUL_IO=1,
//   softmax_bindings_f16, gate_backward_f16, head_prep_f16,
//   head_prep_backward_f16, sink_rows_f16) needs a uint16_t view instead (or
//   runs packed), and VKA_LD/VKA_LD4/VKA_ST a bf16 branch here;
// - the coopmat kernels: fragments are float16_t (coopmat_frag's emulated
//   fragment widens f16 pairs itself; matmul_coopmat_io's load8 and
//   flash_coopmat_body's store_p8 / flash_backward_coopmat_body's HALF_PAIR
//   stage f16 tiles; flash_coopmat2_steps, matmul_coopmat2_nv, peak_coopmat_nv);
// - half_convert.comp, an f32 <-> f16 conversion whose TO_TYPE gives the
//   direction only: a bf16 side needs a second constant.
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

// packed: element i of an array of halves is half (i & 1) of word i >> 1
float half_at(uint word, uint i)
{
    const vec2 v = unpackHalf2x16(word);
    return (i & 1u) != 0u ? v.y : v.x;
}
vec4 halves4(uvec2 w) { return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y)); }

#define VKA_LDW(T, f, w, i) (VKA_IS_F16(T) ? half_at((w)[(i) >> 1u], i) : (f)[i])
#define VKA_LDW4(T, f, w, i) (VKA_IS_F16(T) ? halves4((w)[i]) : (f)[i])
// Where a path is 16-bit only (T is f16 there): four elements from two words;
// two (four) elements rounded once, as packHalf2x16 rounds, into one word (two).
#define VKA_UNPACK4(T, w2) halves4(w2)
#define VKA_PACK2(T, v) packHalf2x16(v)
#define VKA_PACK4(T, v) uvec2(packHalf2x16((v).xy), packHalf2x16((v).zw))

#endif // VKA_ELEM_TYPE_GLSL
