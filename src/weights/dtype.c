/* safetensors dtypes: element sizes, and F16 / BF16 to float. Both halves
 * convert exactly (every half and bfloat16 value is a float), so these are
 * bit manipulations, not arithmetic that could round. */
#include "weights/weights_internal.h"

#include <string.h>

uint32_t vka_weights_dtype_size(const char *name, vkattn_weights_dtype *dtype)
{
    static const struct { const char *name; uint32_t size; vkattn_weights_dtype dtype; } all[] = {
        {"F32", 4, VKATTN_WEIGHTS_DTYPE_F32},       {"F16", 2, VKATTN_WEIGHTS_DTYPE_F16},
        {"BF16", 2, VKATTN_WEIGHTS_DTYPE_BF16},     {"F64", 8, VKATTN_WEIGHTS_DTYPE_OTHER},
        {"I64", 8, VKATTN_WEIGHTS_DTYPE_OTHER},     {"U64", 8, VKATTN_WEIGHTS_DTYPE_OTHER},
        {"I32", 4, VKATTN_WEIGHTS_DTYPE_OTHER},     {"U32", 4, VKATTN_WEIGHTS_DTYPE_OTHER},
        {"I16", 2, VKATTN_WEIGHTS_DTYPE_OTHER},     {"U16", 2, VKATTN_WEIGHTS_DTYPE_OTHER},
        {"I8", 1, VKATTN_WEIGHTS_DTYPE_OTHER},      {"U8", 1, VKATTN_WEIGHTS_DTYPE_OTHER},
        {"BOOL", 1, VKATTN_WEIGHTS_DTYPE_OTHER},    {"F8_E4M3", 1, VKATTN_WEIGHTS_DTYPE_OTHER},
        {"F8_E5M2", 1, VKATTN_WEIGHTS_DTYPE_OTHER},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(name, all[i].name)) {
            *dtype = all[i].dtype;
            return all[i].size;
        }
    return 0;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float vka_weights_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) /* inf, NaN (payload kept) */
        return from_bits(sign | 0x7f800000u | (man << 13));
    if (exp != 0)
        return from_bits(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0)
        return from_bits(sign);
    /* subnormal: normalize; value man * 2^-24 */
    uint32_t e = 113;
    while (!(man & 0x400u)) {
        man <<= 1;
        e--;
    }
    return from_bits(sign | (e << 23) | ((man & 0x3ffu) << 13));
}

float vka_weights_bf16_to_f32(uint16_t h) { return from_bits((uint32_t)h << 16); }

void vka_weights_decode(vkattn_weights_dtype dtype, const uint8_t *b, size_t n, float *out)
{
    switch (dtype) {
    case VKATTN_WEIGHTS_DTYPE_F32:
        for (size_t i = 0; i < n; i++, b += 4)
            out[i] = from_bits((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                               (uint32_t)b[3] << 24);
        break;
    case VKATTN_WEIGHTS_DTYPE_F16:
        for (size_t i = 0; i < n; i++, b += 2)
            out[i] = vka_weights_f16_to_f32((uint16_t)(b[0] | b[1] << 8));
        break;
    case VKATTN_WEIGHTS_DTYPE_BF16:
        for (size_t i = 0; i < n; i++, b += 2)
            out[i] = vka_weights_bf16_to_f32((uint16_t)(b[0] | b[1] << 8));
        break;
    case VKATTN_WEIGHTS_DTYPE_OTHER:
        break;
    }
}
