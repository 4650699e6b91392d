// Operand element types. A kernel whose operand X may be f32 or 16-bit declares
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
// even) is a branch of the packed macros (VKA_LDW, VKA_LDW4, VKA_UNPACK4,
// VKA_PACK2, VKA_PACK4) and of half_convert.comp. The 16-bit storage macros
// VKA_LD/VKA_LD4/VKA_ST read a float16_t view and are f16 only: the host
// never runs a bf16 operand there (vka_path16, ops/half_stage.h, sends it
// packed or staged). A kernel that takes bf16 natively under 16-bit storage
// would need a uint16_t view; those declaring float16_t/f16vec4 views are
// binary_f16_body, dropout_io, flash_backward_io, flash_backward_stats_io,
// flash_body with FLASH_F16_STORAGE, grad_reduce_body, heads_io, matmul_io
// MATMUL_IO=1, softmax_bindings_f16, gate_backward_f16, head_prep_f16,
// head_prep_backward_f16, sink_rows_f16. Also f16 only:
// - the coopmat kernels: fragments are float16_t (coopmat_frag's emulated
//   fragment widens f16 pairs itself; matmul_coopmat_io's load8 and
//   flash_coopmat_body's store_p8 / flash_backward_coopmat_body's HALF_PAIR
//   stage f16 tiles; flash_coopmat2_steps, matmul_coopmat2_nv, peak_coopmat_nv).
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

// packed: element i of an array of 16-bit elements is half (i & 1) of word
// i >> 1, low half first.
// bf16: the high 16 bits of an f32, so a load is exact; a store rounds to
// nearest even and keeps a NaN a quiet NaN (as core/bf16.c, the reference).
vec2 bf16x2(uint w) { return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u)); }
uint bf16_bits(float v)
{
    const uint u = floatBitsToUint(v);
    if (isnan(v))
        return (u >> 16) | 0x40u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
uint pack_bf16x2(vec2 v) { return bf16_bits(v.x) | (bf16_bits(v.y) << 16); }

// a word's two elements of 16-bit type T, and two values rounded into one word
vec2 unpack16x2(uint T, uint w) { return T == VKA_ELEM_BF16 ? bf16x2(w) : unpackHalf2x16(w); }
uint pack16x2(uint T, vec2 v) { return T == VKA_ELEM_BF16 ? pack_bf16x2(v) : packHalf2x16(v); }

float half_at(uint word, uint i)
{
    const vec2 v = unpackHalf2x16(word);
    return (i & 1u) != 0u ? v.y : v.x;
}
float elem16_at(uint T, uint word, uint i)
{
    const vec2 v = unpack16x2(T, word);
    return (i & 1u) != 0u ? v.y : v.x;
}

#define VKA_IS_16(T) ((T) != VKA_ELEM_F32)
#define VKA_LDW(T, f, w, i) (VKA_IS_16(T) ? elem16_at(T, (w)[(i) >> 1u], i) : (f)[i])
#define VKA_LDW4(T, f, w, i) (VKA_IS_16(T) ? VKA_UNPACK4(T, (w)[i]) : (f)[i])
// Where a path is 16-bit only (T is f16 or bf16 there): four elements from two
// words; two (four) elements rounded once into one word (two).
#define VKA_UNPACK4(T, w2) vec4(unpack16x2(T, (w2).x), unpack16x2(T, (w2).y))
#define VKA_PACK2(T, v) pack16x2(T, v)
#define VKA_PACK4(T, v) uvec2(pack16x2(T, (v).xy), pack16x2(T, (v).zw))

#endif // VKA_ELEM_TYPE_GLSL
