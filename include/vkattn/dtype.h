/* vkattn/dtype.h - element types of tensors and host arrays.
 *
 * No Vulkan: shared by vkattn/tensor.h (device tensors) and vkattn/reference.h
 * (the CPU reference on host arrays). f16 is IEEE 754 binary16; on the host an
 * f16 array is an array of uint16_t bit patterns (vkattn/half.h converts).
 * bf16 is bfloat16 (binary32's sign, exponent and top 7 fraction bits); on the
 * host a bf16 array is likewise an array of uint16_t bit patterns.
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
    /* bfloat16. Conversions (tensor upload, download and fill, the CPU
     * reference's stores) round to nearest even, from f32 and from double
     * alike (once: a double never goes through f32); a NaN stays a quiet NaN
     * of the same sign; past the largest finite value (about 3.39e38) RNE
     * gives +-inf; subnormals are kept. An app gets bf16 into a tensor by
     * uploading f32 values (vkattn_tensor_upload converts, as for f16) or
     * bit patterns with vkattn_tensor_upload_raw. Tensors, the CPU reference
     * on typed host arrays, the KV cache and the ops that say so in their
     * headers take bf16 (docs/SEMANTICS.md, "bfloat16"); the other ops and
     * every layer refuse it (VKATTN_ERROR_UNSUPPORTED or
     * VKATTN_ERROR_INVALID_ARGUMENT, naming the operand or desc->dtype). */
    VKATTN_DTYPE_BF16 = 3,
} vkattn_dtype;

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_DTYPE_H */
