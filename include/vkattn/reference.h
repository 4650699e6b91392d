/* vkattn/reference.h - the CPU reference of every op: the truth the GPU is tested against.
 *
 * Each function computes what the matching GPU op computes (vkattn/matmul.h,
 * softmax.h, additive.h, heads.h, dropout.h, sdpa.h), from
 * the same parameter struct (vkattn/op_params.h), on host arrays, with double
 * accumulation. Use them to check vkattn on your own data, or to see exactly
 * what an op means: docs/SEMANTICS.md is the prose, these are the executable form.
 * Dropout draws from the Philox stream of vkattn/philox.h, so masks agree with
 * the GPU bit for bit; elsewhere expect the GPU within f32 rounding.
 *
 * Call sequence: fill a params struct (zero fields are defaults), call, read the
 * output. There is no context, no Vulkan and no state.
 *
 * Common contract of every function below:
 * - Arrays are f32 unless `types` says f16 (below), row-major, last index
 *   fastest, sizes in elements. The caller owns every array; nothing is
 *   retained after the call returns.
 * - Inputs are read only; outputs must not overlap inputs unless a function
 *   says so. A pointer marked "read only when <flag>" is ignored (may be NULL)
 *   when the flag is false.
 * - Results: VKATTN_SUCCESS; VKATTN_ERROR_INVALID_ARGUMENT for a NULL params or
 *   required array, a required size of 0, a non-finite scale, an out-of-range
 *   enum or dropout rate (NaN included), or inconsistent params;
 *   VKATTN_ERROR_SIZE_OVERFLOW when a tensor's size or an index overflows the
 *   address space; VKATTN_ERROR_OUT_OF_HOST_MEMORY when a row of scratch cannot
 *   be allocated (softmax, SDPA). On failure nothing is written and
 *   vkattn_last_error() names the function and the argument. Nothing aborts.
 * - Masks are f32, nonzero (NaN included) = may attend, 0 = masked (Keras polarity).
 * - Thread safety: pure; any thread, concurrently, on distinct output arrays.
 */
#ifndef VKATTN_REFERENCE_H
#define VKATTN_REFERENCE_H

#include <stdint.h>

#include "vkattn/dtype.h"
#include "vkattn/export.h"
#include "vkattn/op_params.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. Every reference below takes, after its params, a pointer to
 * the element types of its arrays (`types` NULL, or a zero field: f32). An f16
 * array holds uint16_t bit patterns (vkattn/dtype.h); f16 inputs are taken as
 * their exact values and the computation is the f32 one (double, except
 * dropout's single f32 multiply); an f16 output gets each result rounded once
 * to nearest even (beyond 65504: +-inf; NaN stays NaN) - what the f16 GPU ops
 * approximate within the bounds their headers state. Masks (value_mask, mask),
 * SDPA's bias and weights stay f32; a softmax bias may be either type. Dropout
 * and heads may mix types (f16 in, f32 out and the reverse); dropout in place
 * needs equal types; for dropout the kept elements are in (as f32) times the
 * f32 scale, in f32, then stored (an f16 out rounds that product once).
 * INVALID_ARGUMENT also for an unknown dtype. */
typedef struct vkattn_matmul_dtypes {
    vkattn_dtype a, b, bias, c;
} vkattn_matmul_dtypes;
typedef struct vkattn_softmax_dtypes {
    vkattn_dtype scores, bias, out;
} vkattn_softmax_dtypes;
typedef struct vkattn_additive_dtypes {
    vkattn_dtype q, k, scale, scores;
} vkattn_additive_dtypes;
/* One input and one output (dropout, heads). */
typedef struct vkattn_io_dtypes {
    vkattn_dtype in, out;
} vkattn_io_dtypes;
/* q, k, v (for decode: the cache) and out of SDPA and decode. */
typedef struct vkattn_sdpa_dtypes {
    vkattn_dtype q, k, v, out;
} vkattn_sdpa_dtypes;

/* C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias), for b < batch, h < heads.
 * A is stored m x k (k x m when transpose_a), B k x n (n x k when transpose_b),
 * C m x n. Matrix (b, h) of X starts at X + b * X.batch_stride + h * X.head_stride.
 * A, B: zero batch or head strides broadcast one matrix. C: zero head_stride
 * means m * ldc, zero batch_stride heads * m * ldc (ldc = its row stride).
 * row_stride 0 = the stored matrix's column count; a nonzero row_stride below
 * that count is INVALID_ARGUMENT. bias: n floats added to every row of C after
 * alpha, read only when has_bias. The C matrices must not overlap each other. */
VKATTN_API vkattn_result vkattn_reference_matmul(const vkattn_matmul_params *p,
                                                 const vkattn_matmul_dtypes *types, const void *a,
                                                 const void *b, const void *bias, void *c);

/* Masked softmax over the last axis of scores (B, H, Tq, Tv) into out (same shape):
 *   logit = score * scale + bias         in double, so +-3e38 logits do not overflow
 *   allowed = value_mask[b,j] && causal(i,j) && mask[b,h,i,j]     (each only if enabled)
 *   out = exp(logit - max) / sum over the allowed keys of the row; masked keys get 0.
 * bias and mask are (B|1, H|1, Tq|1, Tv) as their vkattn_broadcast flags say;
 * value_mask is (B, Tv). Each is read only when its mask.has_* flag is set.
 * Causal top-left allows j <= i; bottom-right allows j <= i + Tv - Tq.
 * A row with no allowed key, or whose allowed logits are all -inf (a -inf bias
 * used as a mask), follows mask.masked_row: all zeros or uniform 1/Tv, never
 * NaN. A NaN among a row's allowed logits makes that row's allowed weights NaN
 * and leaves other rows alone; a +inf logit does the same (inf - inf).
 * out may equal scores (in place); it must not otherwise overlap an input. */
VKATTN_API vkattn_result vkattn_reference_softmax(const vkattn_softmax_params *p,
                                                  const vkattn_softmax_dtypes *types,
                                                  const void *scores, const void *bias,
                                                  const float *value_mask, const float *mask,
                                                  void *out);

/* Additive scores (B, Tq, Tv) from q (B, Tq, dim) and k (B, Tv, dim):
 *   S[b,i,j] = outer_scale * sum_d s_d * tanh(inner_scale * (q[b,i,d] + k[b,j,d]))
 * scale_vec s: dim floats, read only when has_scale_vector (else all ones). */
VKATTN_API vkattn_result vkattn_reference_additive(const vkattn_additive_params *p,
                                                   const vkattn_additive_dtypes *types,
                                                   const void *q, const void *k,
                                                   const void *scale_vec, void *scores);

/* in (B, T, H*d) -> out (B, H, T, d): out[b,h,t,e] = in[b,t,h*d+e]. Cannot run
 * in place: in == out is INVALID_ARGUMENT. */
VKATTN_API vkattn_result vkattn_reference_heads_split(const vkattn_heads_params *p,
                                                      const vkattn_io_dtypes *types,
                                                      const void *in, void *out);

/* The inverse of vkattn_reference_heads_split: in (B, H, T, d) -> out (B, T, H*d). */
VKATTN_API vkattn_result vkattn_reference_heads_merge(const vkattn_heads_params *p,
                                                      const vkattn_io_dtypes *types,
                                                      const void *in, void *out);

/* Inverted dropout of in (B, H, Tq, Tv) into out. When !training or rate == 0,
 * an exact copy. Otherwise element (b, h, i, j) is kept per
 * vkattn_dropout_keep(seed, offset, vkattn_dropout_threshold(rate), b*H + h, i, j)
 * and multiplied, in f32, by the float nearest 1/(1 - rate); dropped elements
 * are exactly 0 (even NaN or inf ones). rate 1 gives all zeros. The rate must be
 * in [0, 1] even when not training. out may equal in. */
VKATTN_API vkattn_result vkattn_reference_dropout(const vkattn_dropout_op_params *p,
                                                  const vkattn_io_dtypes *types, const void *in,
                                                  void *out);

/* The keep mask vkattn_reference_dropout applies: keep (B, H, Tq, Tv) bytes,
 * 1 = kept, 0 = dropped; all 1 when !training or rate == 0. */
VKATTN_API vkattn_result vkattn_reference_dropout_mask(const vkattn_dropout_op_params *p,
                                                       uint8_t *keep);

/* Scaled dot-product attention, one query row at a time:
 *   W = softmax(Q K^T * scale + bias, masks)    as vkattn_reference_softmax, masked
 *                                               rows per mask.masked_row
 *   out = dropout(W) V                          dropout as vkattn_reference_dropout
 *                                               on the (B, H, Tq, Tv) weights
 * q (B, H, Tq, dk), k (B, Hkv, Tv, dk), v (B, Hkv, Tv, dv), out (B, H, Tq, dv)
 * with Hkv = kv_heads; query head h reads K/V head h / (H / Hkv) (grouped-query
 * attention; heads not a multiple of kv_heads is INVALID_ARGUMENT). Scale 0 means
 * 1/sqrt(dk), computed in double. bias, value_mask, mask: as for softmax, with
 * H = heads. Every key enters W V, masked ones with weight 0, so a non-finite
 * value row makes the output NaN even where it is masked.
 * weights: (B, H, Tq, Tv), written only when return_weights (then required),
 * before dropout unless weights_after_dropout. */
VKATTN_API vkattn_result vkattn_reference_sdpa(const vkattn_sdpa_params *p,
                                               const vkattn_sdpa_dtypes *types, const void *q,
                                               const void *k, const void *v, const float *bias,
                                               const float *value_mask, const float *mask,
                                               void *out, float *weights);

/* Decode attention against a KV cache (vkattn_sdpa_decode_params): q (B, H,
 * Tq, dk), k (B, Hkv, capacity, dk), v (B, Hkv, capacity, dv), lengths[B]
 * (each <= capacity), value_mask (B, capacity) iff has_value_mask, out (B, H,
 * Tq, dv). Query i of sequence b sees keys j < lengths[b] - Tq + i + 1 allowed
 * by the value mask; a row with none is zeros. Double accumulation; dropout
 * keep(b * H + h, i, j) as vkattn_reference_sdpa. Only keys a row sees are
 * read. The params are checked as vkattn_sdpa_decode_record checks them
 * (one plan, the same messages), less what only the GPU has: the cache and
 * the kernels' widths and 32-bit indexing. Codes: _INVALID_ARGUMENT (NULL,
 * a zero batch, heads, tq, capacity or dk, tq > 64, kv_heads not dividing
 * heads, a non-finite scale, a bad dropout rate, a length above the
 * capacity), _DEVICE_LIMIT (a sliding window with tq + capacity beyond the
 * kernels' 32-bit window arithmetic, as on the GPU), _SIZE_OVERFLOW,
 * _OUT_OF_HOST_MEMORY. */
VKATTN_API vkattn_result vkattn_reference_sdpa_decode(const vkattn_sdpa_decode_params *p,
                                                      const vkattn_sdpa_dtypes *types,
                                                      const void *q, const void *k, const void *v,
                                                      const uint32_t *lengths,
                                                      const float *value_mask, void *out);

/* The head ops of vkattn/head_op.h on host arrays, in double (one rounding
 * to f32 at the end): the same fields as vkattn_head_op_io, f32 each. x,
 * out (may be x), weight (dim) for the norm ops, positions (batch, seq) or
 * NULL (row t at t) for the rotations, grad_out, grad_x (may be grad_out)
 * and grad_weight (dim, the sum over every row) for RMS_NORM_BACKWARD; the
 * fields an op does not use must be NULL. The params are checked as
 * vkattn_head_op_record checks them (one plan, the same messages). */
typedef struct vkattn_head_op_host_io {
    const float *x;
    float *out;
    const float *weight;
    const float *positions;
    const float *grad_out;
    float *grad_x;
    float *grad_weight;
} vkattn_head_op_host_io;

VKATTN_API vkattn_result vkattn_reference_head_op(const vkattn_head_op_params *p,
                                                  const vkattn_head_op_host_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_REFERENCE_H */
