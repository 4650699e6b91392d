/* vkattn/dtype.h - element types of tensors and host arrays.
 *
 * No Vulkan: shared by vkattn/tensor.h (device tensors) and vkattn/reference.h
 * (the CPU reference on host arrays). f16 is IEEE 754 binary16; on the host an
 * f16 array is an array of uint16_t bit patterns (vkattn/half.h converts).
 */
#ifndef VKATTN_DTYPE_H
#define VKATTN_DTYPE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vkattn_dtype {
    VKATTN_DTYPE_F32 = 0, /* the default of every zero-initialised desc */
    VKATTN_DTYPE_F16 = 1,
    /* int8 with one fp32 scale per row: valid only for
     * vkattn_kv_cache_desc.dtype (vkattn/kv_cache.h); tensors, layers and
     * the CPU reference refuse it (VKATTN_ERROR_INVALID_ARGUMENT) */
    VKATTN_DTYPE_I8 = 2,
} vkattn_dtype;

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_DTYPE_H */
