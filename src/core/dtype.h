/* What each element type is (vkattn/dtype.h): one row per vkattn_dtype in
 * core/dtype.c, read wherever code would otherwise ask "is it f16?" (element
 * size, 16-bit storage, names, the reference's rounding, host conversion).
 * A new type is a new row here, a new GLSL storage path in the shaders, and
 * the ops that accept it. No Vulkan. */
#ifndef VKA_CORE_DTYPE_H
#define VKA_CORE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkattn/dtype.h"
#include "vkattn/result.h"

struct vkattn_context;

/* The tensor types, for messages: "must be " VKA_DTYPE_TENSOR_LIST. */
#define VKA_DTYPE_TENSOR_LIST "VKATTN_DTYPE_F32, VKATTN_DTYPE_F16 or VKATTN_DTYPE_BF16"
typedef struct vka_dtype_info {
    const char *name;      /* "f32": messages, case files */
    const char *a_name;    /* "an f32", "a bf16": "x is %s tensor" */
    const char *enum_name; /* "VKATTN_DTYPE_F32" */
    uint32_t size;         /* bytes per element */
    const char *glsl;      /* GLSL storage type of one element ("float16_t") */
    /* 16-bit elements: their own GLSL type needs storageBuffer16BitAccess;
     * without it the shaders read words of two (the packed paths), and a
     * tensor's offset must be word aligned */
    bool is_16bit;
    /* read and written through the kernels' float16_t views where the device
     * has 16-bit storage (f16); a 16-bit type without it (bf16) always runs
     * packed or staged (vka_path16_of, ops/half_stage.h) */
    bool f16_view;
    /* a tensor and CPU-reference type (i8 is a KV cache's only) */
    bool tensor;
    /* a layer's desc->dtype (f32, f16, bf16) */
    bool layer;
    /* a KV cache's desc->dtype (i8: the cache's only, as !tensor) */
    bool cache;
    /* the kernels' *_TYPE specialization constant for an operand of this
     * type: VKA_ELEM_* of shaders/common/elem_iface.h (f32 0, f16 1, bf16 2:
     * the packed paths only, see f16_view). i8 rows have none (0:
     * kv_append reads them through its own DST_I8 switch) */
    uint32_t spec_code;
    /* CPU reference: element i exactly, and v stored as element i rounded
     * once to nearest even (NULL where !tensor) */
    double (*load)(const void *x, size_t i);
    void (*store)(void *x, size_t i, double v);
    /* host f32 <-> storage for n elements; NULL: the storage is f32 */
    void (*from_f32)(void *dst, const float *src, size_t n);
    void (*to_f32)(float *dst, const void *src, size_t n);
} vka_dtype_info;

/* t's row, or NULL for a value outside the enum. */
const vka_dtype_info *vka_dtype_info_of(vkattn_dtype t);

/* t's row if t is a tensor type, else NULL: the checks' one test. */
const vka_dtype_info *vka_dtype_tensor(vkattn_dtype t);

/* What a desc->dtype is for: a layer or a KV cache (the table's columns). */
typedef enum vka_dtype_use { VKA_DTYPE_USE_LAYER, VKA_DTYPE_USE_CACHE } vka_dtype_use;

/* desc->dtype of a layer or KV cache (fn names the caller): success for a
 * type of that use; UNSUPPORTED for a tensor type it does not take (yet),
 * INVALID_ARGUMENT for any other value, both naming desc->dtype and listing
 * the types it takes (from the table, so a new row changes the message). */
vkattn_result vka_dtype_check_desc(struct vkattn_context *ctx, const char *fn, vkattn_dtype t,
                                   vka_dtype_use use);

/* Bytes per element (4 for a value outside the enum, so sizes stay safe to
 * compute before the check that refuses it). */
uint32_t vka_dtype_size(vkattn_dtype t);

/* t's spec_code: the value of a kernel's *_TYPE constant for an operand of
 * type t (0, f32's, outside the enum). */
uint32_t vka_dtype_spec_code(vkattn_dtype t);

/* "f32", "f16", "i8", "bf16"; "unknown" outside the enum. */
const char *vka_dtype_name(vkattn_dtype t);
/* The name with its article ("an f16", "a bf16"; "an unknown"). */
const char *vka_dtype_a_name(vkattn_dtype t);

#endif /* VKA_CORE_DTYPE_H */
