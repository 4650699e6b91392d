/* vkattn/sdpa_backward.h - gradients of scaled dot-product attention on the GPU.
 *
 * For the forward of vkattn/sdpa.h,
 *   W = softmax(Q K^T * scale + bias, masks),  out = dropout(W) V,
 * given dO = dL/dout (B, H, Tq, dv) this writes dL/dQ (B, H, Tq, dk),
 * dL/dK (B, Hkv, Tv, dk) and dL/dV (B, Hkv, Tv, dv), overwriting them:
 *   dV = dropout(W)^T dO          dP = dropout'(dO V^T)   (the same kept keys)
 *   dS = W * (dP - rowsum(W * dP))                        (masked keys: 0)
 *   dQ = scale * dS K             dK = scale * dS^T Q
 * with the semantics of vkattn_reference_sdpa_backward
 * (vkattn/reference_backward.h): the params are the forward's, unchanged
 * (vkattn_sdpa_params; return_weights and weights_after_dropout are ignored),
 * and so are the masks and bias. Dropout regenerates the forward's Philox
 * mask from params->dropout (same seed and offset; it is never stored).
 * Grouped-query attention: dK and dV of a K/V head sum over the query heads
 * that share it. Rows the forward filled by its masked-row policy (no allowed
 * key) give no Q or K gradient (never NaN); under the uniform policy their
 * weights 1/Tv (after dropout) still carry dO into dV. No bias gradient is
 * computed (the chained path's softmax-backward output is dL/dlogits; see
 * vkattn/softmax_backward.h for computing it yourself).
 *
 * Two implementations (params->path, as the forward):
 * - chained (VKATTN_SDPA_UNFUSED): recomputes W through the forward's chained
 *   ops (or reads io->weights, the forward's weights before dropout, when
 *   given), then matmuls, dropout and vkattn/softmax_backward.h through two
 *   (B, H, Tq, Tv) tensors (one when io->weights is given): the same
 *   maxStorageBufferRange limit as the chained forward.
 * - fused (VKATTN_SDPA_FUSED): flash-attention-2 backward in three dispatches,
 *   O(Tq) extra memory, no (Tq, Tv) tensor: a pass computing each query row's
 *   rowsum(dO * out) and its log-sum-exp in base 2; one kernel whose
 *   workgroups each own a block of keys and loop over the query rows (of every
 *   query head of its group) for dK and dV; one whose workgroups own query
 *   rows and loop over the keys for dQ. Weights are recomputed as
 *   exp(logit - lse), so it needs io->lse, the log-sum-exp the fused forward
 *   wrote (vkattn_sdpa_io.lse), and io->out, the forward's output. No float
 *   atomics. The kernels bind 10 storage buffers: on devices that allow fewer
 *   per shader (the Vulkan 1.1 minimum is 4) the fused backward is
 *   VKATTN_ERROR_UNSUPPORTED. dk, dv <= 256; lavapipe's loop limit bounds
 *   Tq and Tv (about 60k at d = 64).
 * VKATTN_SDPA_AUTO takes the fused path when io->lse is given and the fused
 * kernels can serve the call, else the chained one (which ignores io->lse and
 * io->out).
 *
 * Accuracy (fp32 accumulation): each gradient agrees with the reference within
 * 1e-4 of its largest element for Tq, Tv up to a few hundred at moderate
 * inputs (the tests' bound; errors grow with the row length).
 *
 * Element types: q, k, v, grad_out, out (fused path) and each of grad_q,
 * grad_k, grad_v may be f32, f16 or bf16, in any mix; lse, weights, bias,
 * masks and workspace are f32. Each 16-bit input is converted exactly into
 * f32 scratch kept in the context (one conversion pass each; on the fused
 * path with 16-bit storage and no bf16 tensor in the call, f16 q, k, v and
 * out are instead read as they are, widened exactly: the same values; the
 * chained path stages nothing, its matmuls reading 16-bit operands and
 * writing 16-bit gradients themselves as vkattn/matmul.h does), the f32
 * backward runs on it (fp32 accumulation, the same path choice), and each
 * 16-bit gradient is rounded once from its f32 result: f16 by the device's
 * f32 -> f16 conversion, one f16 spacing (2^-10 relative) over the f32 bound
 * above; bf16 to nearest even by vkattn's own code, one bf16 spacing (2^-7
 * relative), against the reference on the same stored values. A 16-bit out
 * read by the fused path adds its own rounding to rowsum(dO * out)
 * (docs/SEMANTICS.md). Costs: the conversion passes and up to 8 f32 scratch
 * tensors of the data tensors' sizes (plus the workspace) where tensors are
 * staged.
 *
 * Workspace: the chained path needs 1 or 2 tensors of
 * vkattn_sdpa_backward_workspace_size floats, the fused one 1 (two floats
 * per query row). Pass your own (io->workspace[0], [1]) or leave them NULL:
 * then the library uses scratch kept in the context, with the sharing rules
 * of vkattn/sdpa.h's workspace.
 *
 * Recording contract: as in vkattn/matmul.h.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (the forward's checks; a missing or
 * too small q, k, v, grad_out, grad_q, grad_k, grad_v; io->lse or io->out
 * missing with VKATTN_SDPA_FUSED; a gradient aliasing any other tensor of the
 * call, named in the message; a 16-bit bias, mask or value_mask, named: they
 * have no 16-bit form), VKATTN_ERROR_SIZE_OVERFLOW,
 * VKATTN_ERROR_DEVICE_LIMIT, VKATTN_ERROR_UNSUPPORTED (VKATTN_SDPA_FUSED where
 * the fused kernels cannot serve the call; a 16-bit lse, weights or workspace,
 * named), VKATTN_ERROR_OUT_OF_DEVICE_MEMORY,
 * Vulkan failures. Nothing is recorded or allocated on an argument error;
 * with 16-bit tensors nothing is recorded on any failure (the call runs dry
 * first, which also grows the scratch).
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_SDPA_BACKWARD_H
#define VKATTN_SDPA_BACKWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_sdpa_backward_io {
    vkattn_tensor *q, *k, *v; /* the forward's inputs */
    vkattn_tensor *bias, *value_mask, *mask; /* as vkattn_sdpa_io, per params->mask */
    /* out and lse: read by the fused path only; checked wherever given */
    vkattn_tensor *out;      /* (B, H, Tq, dv): the forward's output; fused path */
    vkattn_tensor *lse;      /* (B, H, Tq): the fused forward's log-sum-exp; fused path */
    vkattn_tensor *weights;  /* optional (B, H, Tq, Tv): the forward's weights before
                                dropout; chained path (else recomputed) */
    vkattn_tensor *grad_out; /* (B, H, Tq, dv) */
    vkattn_tensor *grad_q;   /* (B, H, Tq, dk), written */
    vkattn_tensor *grad_k;   /* (B, Hkv, Tv, dk), written */
    vkattn_tensor *grad_v;   /* (B, Hkv, Tv, dv), written */
    vkattn_tensor *workspace[2]; /* optional scratch, see the overview */
    /* iff params->has_sinks: the forward's sinks (H) and their gradient
     * (H) f32, written (summed over the batch and the rows) */
    vkattn_tensor *sinks, *grad_sinks;
} vkattn_sdpa_backward_io;

/* *floats = the size of each workspace tensor a call with these params needs
 * (0 if none), *count = how many (0, 1 or 2), for a call that gives io->lse
 * (have_lse) and io->weights (have_weights) or not: the path is chosen as
 * *_record chooses it. Fails as *_record on bad params or sizes. */
VKATTN_API vkattn_result vkattn_sdpa_backward_workspace_size(vkattn_context *ctx,
                                                             const vkattn_sdpa_params *params,
                                                             bool have_lse, bool have_weights,
                                                             uint64_t *floats, uint32_t *count);
VKATTN_API vkattn_result vkattn_sdpa_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                     const vkattn_sdpa_params *params,
                                                     const vkattn_sdpa_backward_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_SDPA_BACKWARD_H */
