/* vkattn/layer_call.h - what every layer shares as plain data: the per-call options,
 * the host arrays of the CPU references, and their contract.
 *
 * Nothing here uses Vulkan, so the same structs drive the GPU layers
 * (vkattn/attention.h, additive_attention.h, bahdanau.h, mha.h, gqa.h) and
 * their CPU references (vkattn/<layer>_host.h, which each <layer>.h
 * includes). Semantics are Keras 3 exactly (docs/SEMANTICS.md);
 * docs/LAYERS.md explains each argument and how to convert weights from
 * Keras and PyTorch.
 *
 * Conventions: tensors f32 (the layers' io may also be f16 where their
 * headers say), row-major, last index fastest, sizes in
 * elements. Masks are f32, nonzero = may attend (Keras polarity; PyTorch's
 * boolean masks are the opposite). Zero fields mean the default in their
 * comment; booleans are named so that false is the default. Structs grow only
 * by appending fields.
 *
 * Weights structs (each in its vkattn/<layer>_host.h) hold plain `float *`
 * arrays in Keras layout: *_set_weights reads them (the layer keeps a copy),
 * *_get_weights writes into them (each non-NULL array must have room for the
 * full weight).
 */
#ifndef VKATTN_LAYER_CALL_H
#define VKATTN_LAYER_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/dtype.h"
#include "vkattn/export.h"
#include "vkattn/op_params.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- initializers */

/* How a new layer's weights start (the descs' *_initializer fields), Keras's
 * keras.initializers by name. 0 = the weight's Keras default: glorot_uniform
 * for kernels (and AdditiveAttention's scale), zeros for biases. The random
 * ones draw from the Philox4x32-10 stream of vkattn/philox.h keyed by the
 * desc's initializer_seed, so one seed gives the same weights on every device
 * (docs/LAYERS.md, "Initial weights"). With fan_in, fan_out as Keras 3.15
 * counts them for the weight's Keras shape (an EinsumDense kernel: the
 * contracted input axes, the output axes):
 *   *_UNIFORM: uniform in (-limit, limit), limit = sqrt(3 * scale / n)
 *   *_NORMAL:  normal of stddev sqrt(scale / n) / 0.8796..., cut at 2 stddev
 * glorot: scale 1, n = (fan_in + fan_out) / 2; he: scale 2, n = fan_in;
 * lecun: scale 1, n = fan_in. Any other value is INVALID_ARGUMENT naming the
 * field. */
typedef enum vkattn_initializer {
    VKATTN_INIT_DEFAULT = 0,
    VKATTN_INIT_GLOROT_UNIFORM = 1,
    VKATTN_INIT_GLOROT_NORMAL = 2,
    VKATTN_INIT_HE_UNIFORM = 3,
    VKATTN_INIT_HE_NORMAL = 4,
    VKATTN_INIT_LECUN_UNIFORM = 5,
    VKATTN_INIT_LECUN_NORMAL = 6,
    VKATTN_INIT_ZEROS = 7,
    VKATTN_INIT_ONES = 8,
} vkattn_initializer;

/* ---------------------------------------------------------------- per call */

/* Per-call shape and options shared by every layer. */
typedef struct vkattn_layer_call {
    uint32_t batch;           /* required */
    uint32_t tq;              /* query length; required (1 for a rank-2 Bahdanau query) */
    uint32_t tv;              /* key/value length; required */
    /* NONE; TOP_LEFT = Keras use_causal_mask=True (query i sees keys j <= i);
     * BOTTOM_RIGHT for decoding with a KV cache (j <= i + Tv - Tq). */
    vkattn_causal causal;
    bool training;            /* dropout active iff training && rate > 0 */
    uint64_t seed, offset;    /* Philox dropout stream (vkattn/philox.h) */
    bool return_attention_scores;
    vkattn_sdpa_path path;    /* layers that use SDPA: AUTO/FUSED/UNFUSED */
    /* The GPU forward keeps what the layer's backward needs, in the layer's
     * scratch, until its next forward (the backward in each layer's header,
     * vkattn/<layer>.h, says what it keeps). Required before
     * vkattn_X_backward_*; the CPU references ignore it. */
    bool keep_for_backward;
} vkattn_layer_call;

/* Host-side twin of vkattn_layer_io (vkattn/layer_common.h) for the CPU
 * references (NULL = absent). Shapes as there. A host array has no shape, so
 * the attention mask's is given here: attention_mask_rank 0 means the full
 * mask, (B, Tq, Tv), or (B, H, Tq, Tv) with attention_mask_per_head; rank
 * 1..4 gives its dims in attention_mask_dims[0..rank-1], any shape that
 * broadcasts as vkattn_layer_io.attention_mask says (e.g. rank 2, (Tq, Tv):
 * one mask for every batch row and head). */
typedef struct vkattn_layer_host_io {
    const float *query, *value, *key, *query_mask, *value_mask, *attention_mask;
    bool attention_mask_per_head; /* rank 0 only: the full mask is (B, H, Tq, Tv) */
    float *output, *scores;
    uint32_t attention_mask_rank;    /* 0 = the full mask (see above); else 1..4 */
    uint32_t attention_mask_dims[4]; /* dims[0..rank-1], each 1 or the full size */
    /* as vkattn_layer_io's: (B, Tq) and (B, Tv), with use_rope only */
    const float *query_positions, *key_positions;
} vkattn_layer_host_io;

/* ----------------------------------------------------------------- CPU references */

/* The CPU reference of each layer (vkattn_reference_X in vkattn/X_host.h):
 * what *_record computes, from the same desc,
 * weights and call, on host arrays, with double accumulation, composed from the
 * op references of vkattn/reference.h. Dropout draws the same Philox stream as
 * the GPU, so kept/dropped decisions agree bit for bit. Contract as in
 * vkattn/reference.h: VKATTN_ERROR_INVALID_ARGUMENT (naming the argument via
 * vkattn_last_error()) for a bad desc, weights, call or a missing array;
 * nothing is written on failure. io->scores is written iff
 * call->return_attention_scores. */

/* The backward of the layer references (vkattn_reference_X_backward in
 * vkattn/X_host.h). */

/* The input gradients of a layer backward, host arrays shaped as the inputs
 * of vkattn_layer_host_io: grad_query (B, Tq, Dq), grad_value (B, Tv, Dv),
 * grad_key (B, Tv, Dk). NULL = not wanted. grad_key must be NULL when io->key
 * is NULL: the key is then the value array, and the key path's gradient is
 * added into grad_value (which is then dL/d(value) of the whole layer).
 * Each gradient is with respect to its own argument: for self-attention
 * (query, value and key the same array) the caller sums them. */
typedef struct vkattn_layer_host_grads {
    float *grad_query, *grad_value, *grad_key;
} vkattn_layer_host_grads;

/* The backward of each layer reference: given dL/d(output) (`grad_output`,
 * the output's shape, (B, Tq, Dv), (B, Tq, Dout) for MultiHeadAttention), the
 * gradients of the loss with respect to the inputs (`grads`) and to the
 * weights (`grad_w`, the layer's own weights struct reused in the same Keras
 * layout: each float * array receives dL/dW of the weight of that name, NULL
 * = not wanted; scalar members are always written). `grads` or `grad_w` NULL
 * = none of that kind wanted. Every gradient is overwritten, not accumulated.
 *
 * The desc, weights, call and io are those of the forward, which the
 * backward recomputes in double (the forward references stage f32 tensors
 * between ops; the gradients are of the same function without those
 * roundings). io->output and io->scores are not read or written, and
 * call->return_attention_scores is ignored: the scores do not change the
 * gradients. Masks (query_mask, value_mask, causal, the attention mask with
 * its broadcasts) act as in the forward; dropout in training mode drops the
 * same elements as the forward (the same Philox stream from call->seed and
 * call->offset) and scales the kept ones alike. A fully masked row's weights
 * do not depend on the scores, so nothing flows back into the scores of that
 * row: its query, key and score-weight gradients are zero, never NaN (the
 * single-head layers still give a value gradient through the row's uniform
 * weights; MultiHeadAttention's zero row gives none). Rows whose query_mask
 * is 0 have zero output in the single-head layers, hence zero gradient.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (naming the argument in
 * vkattn_last_error()) for everything the forward refuses (a bad desc,
 * weights, call, a missing input array), grad_output NULL, an unexpected
 * gradient array (grad_key without io->key, a gradient of a weight the desc
 * does not use: AdditiveAttention's scale with no_scale, MultiHeadAttention's
 * biases with no_bias), or a gradient array that overlaps an input array,
 * grad_output, a weight, or another gradient array;
 * VKATTN_ERROR_SIZE_OVERFLOW as the forward; VKATTN_ERROR_OUT_OF_HOST_MEMORY
 * for the double scratch (about the forward's intermediates, in double, plus
 * two (B, H, Tq, Tv) tensors). Nothing is written on failure. Thread safety:
 * as the forward references (no shared state; the last error is per thread).
 *
 * Accuracy: double throughout; the result is rounded to f32 once. Against
 * central finite differences of the f32 forward references the gradients
 * agree to the bounds stated in tests/unit/test_layer_backward.c. */

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_LAYER_CALL_H */
