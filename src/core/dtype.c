/* The element types' table (core/dtype.h). */
#include "core/dtype.h"

#include "core/bf16.h"
#include "core/error.h"
#include "core/half.h"
#include "vkattn/half.h"

#include <stdio.h>

static double load_f32(const void *x, size_t i) { return (double)((const float *)x)[i]; }
static void store_f32(void *x, size_t i, double v) { ((float *)x)[i] = (float)v; }

static double load_f16(const void *x, size_t i)
{
    return (double)vka_f16_to_f32(((const uint16_t *)x)[i]);
}
/* once from double: no detour through f32, which could round twice */
static void store_f16(void *x, size_t i, double v) { ((uint16_t *)x)[i] = vka_f16_from_double(v); }
static void f16_from_f32(void *dst, const float *src, size_t n)
{
    vkattn_f32_to_f16_array(dst, src, n);
}
static void f16_to_f32(float *dst, const void *src, size_t n)
{
    vkattn_f16_to_f32_array(dst, src, n);
}

static double load_bf16(const void *x, size_t i)
{
    return (double)vka_bf16_to_f32(((const uint16_t *)x)[i]);
}
static void store_bf16(void *x, size_t i, double v)
{
    ((uint16_t *)x)[i] = vka_bf16_from_double(v);
}
static void bf16_from_f32(void *dst, const float *src, size_t n)
{
    vka_f32_to_bf16_array(dst, src, n);
}
static void bf16_to_f32(float *dst, const void *src, size_t n)
{
    vka_bf16_to_f32_array(dst, src, n);
}

/* indexed by vkattn_dtype */
static const vka_dtype_info table[] = {
    [VKATTN_DTYPE_F32] = {.name = "f32", .a_name = "an f32", .enum_name = "VKATTN_DTYPE_F32",
                          .size = 4, .glsl = "float", .tensor = true, .layer = true,
                          .cache = true, .spec_code = 0, .load = load_f32, .store = store_f32},
    [VKATTN_DTYPE_F16] = {.name = "f16", .a_name = "an f16", .enum_name = "VKATTN_DTYPE_F16",
                          .size = 2, .glsl = "float16_t", .is_16bit = true, .f16_view = true,
                          .tensor = true, .layer = true, .cache = true, .spec_code = 1,
                          .load = load_f16, .store = store_f16, .from_f32 = f16_from_f32,
                          .to_f32 = f16_to_f32},
    /* int8 rows with an f32 scale each, only inside a KV cache (ops/kv_cache.c) */
    [VKATTN_DTYPE_I8] = {.name = "i8", .a_name = "an i8", .enum_name = "VKATTN_DTYPE_I8",
                         .size = 1, .glsl = "int8_t", .cache = true},
    /* bit patterns in 16-bit words (GLSL has no bfloat16 storage type) */
    [VKATTN_DTYPE_BF16] = {.name = "bf16", .a_name = "a bf16", .enum_name = "VKATTN_DTYPE_BF16",
                           .size = 2, .glsl = "uint16_t", .is_16bit = true, .tensor = true,
                           .layer = true, .cache = true, .spec_code = 2, .load = load_bf16, .store = store_bf16,
                           .from_f32 = bf16_from_f32, .to_f32 = bf16_to_f32},
};

const vka_dtype_info *vka_dtype_info_of(vkattn_dtype t)
{
    const unsigned i = (unsigned)t;
    return i < sizeof table / sizeof table[0] && table[i].name ? &table[i] : NULL;
}

const vka_dtype_info *vka_dtype_tensor(vkattn_dtype t)
{
    const vka_dtype_info *d = vka_dtype_info_of(t);
    return d && d->tensor ? d : NULL;
}

uint32_t vka_dtype_size(vkattn_dtype t)
{
    const vka_dtype_info *d = vka_dtype_info_of(t);
    return d ? d->size : 4;
}

uint32_t vka_dtype_spec_code(vkattn_dtype t)
{
    const vka_dtype_info *d = vka_dtype_info_of(t);
    return d ? d->spec_code : 0;
}

const char *vka_dtype_name(vkattn_dtype t)
{
    const vka_dtype_info *d = vka_dtype_info_of(t);
    return d ? d->name : "unknown";
}

const char *vka_dtype_a_name(vkattn_dtype t)
{
    const vka_dtype_info *d = vka_dtype_info_of(t);
    return d ? d->a_name : "an unknown";
}

static bool used_for(const vka_dtype_info *d, vka_dtype_use use)
{
    return use == VKA_DTYPE_USE_CACHE ? d->cache : d->layer;
}

/* "VKATTN_DTYPE_F32, VKATTN_DTYPE_F16 or VKATTN_DTYPE_I8": the table's types
 * of `use`, in enum order. */
static const char *types_for(vka_dtype_use use, char *buf, size_t size)
{
    const size_t rows = sizeof table / sizeof table[0];
    size_t n = 0, left = 0;
    for (size_t i = 0; i < rows; i++)
        left += table[i].name && used_for(&table[i], use);
    buf[0] = '\0';
    for (size_t i = 0; i < rows; i++) {
        if (!table[i].name || !used_for(&table[i], use))
            continue;
        left--;
        const char *sep = n == 0 ? "" : left == 0 ? " or " : ", ";
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", sep, table[i].enum_name);
    }
    return buf;
}

vkattn_result vka_dtype_check_desc(struct vkattn_context *ctx, const char *fn, vkattn_dtype t,
                                   vka_dtype_use use)
{
    const vka_dtype_info *d = vka_dtype_info_of(t);
    if (d && used_for(d, use))
        return VKATTN_SUCCESS;
    char list[128];
    types_for(use, list, sizeof list);
    if (d && d->tensor)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: desc->dtype is %s; %s %s are not supported yet (must be %s)", fn,
                        d->enum_name, d->name, use == VKA_DTYPE_USE_CACHE ? "KV caches" : "layers",
                        list);
    return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc->dtype is %d; must be %s", fn,
                    (int)t, list);
}
