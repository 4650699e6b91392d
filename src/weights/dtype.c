/* safetensors dtypes: element sizes, and F16 / BF16 to float. Both convert
 * exactly (every half and bfloat16 value is a float), by the library's one
 * conversion of each (core/half.h, core/bf16.h). */
#include "weights/weights_internal.h"

#include "core/bf16.h"
#include "core/half.h"

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
            out[i] = vka_f16_to_f32((uint16_t)(b[0] | b[1] << 8));
        break;
    case VKATTN_WEIGHTS_DTYPE_BF16:
        for (size_t i = 0; i < n; i++, b += 2)
            out[i] = vka_bf16_to_f32((uint16_t)(b[0] | b[1] << 8));
        break;
    case VKATTN_WEIGHTS_DTYPE_OTHER:
        break;
    }
}
