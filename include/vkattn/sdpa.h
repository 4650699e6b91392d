/* vkattn/sdpa.h - scaled dot-product attention on the GPU.
 *
 *   W   = softmax(Q K^T * scale + bias, masks)       (B, H, Tq, Tv)
 *   out = dropout(W) V                               (B, H, Tq, dv)
 *
 * with Q (B, H, Tq, dk), K (B, Hkv, Tv, dk), V (B, Hkv, Tv, dv): query head h
 * reads K/V head h / (H / Hkv) (grouped-query attention; Hkv = H is plain
 * multi-head, Hkv = 1 multi-query). Masks, bias and the masked-row policy are
 * those of vkattn_mask_params, AND-ed with the sliding window
 * params->sliding_window (0 = none; both paths; the fused kernels skip the
 * key tiles outside its band); dropout is the Philox stream of
 * vkattn/dropout.h, so the dropped weights are exactly those of the CPU
 * reference vkattn_reference_sdpa, and the output agrees with it to fp32
 * rounding. Every parameter is in vkattn_sdpa_params (vkattn/op_params.h).
 *
 * Two implementations (params->path):
 * - chained (VKATTN_SDPA_UNFUSED): matmul -> masked softmax -> dropout ->
 *   matmul, through a (B, H, Tq, Tv) score tensor. Returns the weights when
 *   asked; the score tensor must fit maxStorageBufferRange (128 MiB on
 *   lavapipe: B*H*Tq*Tv <= 2^25), else VKATTN_ERROR_DEVICE_LIMIT.
 * - fused (VKATTN_SDPA_FUSED): one flash-attention kernel, no score tensor,
 *   no weights returned; where the device or the shape does not allow it,
 *   VKATTN_SDPA_FUSED fails with VKATTN_ERROR_UNSUPPORTED. Its shape follows
 *   the context's tuning (vkattn/advanced.h): under the GPU tuning a
 *   workgroup owns 8 to 32 query rows, each split over 4 to 16 invocations
 *   (docs/PORTABILITY.md), for f32, f16 and bf16 tensors alike; the results agree
 *   within the same bound.
 * VKATTN_SDPA_AUTO takes the fused path when it can serve the call (weights
 * not requested), else the chained one. The two differ only where inputs are
 * not finite: the fused kernel never reads keys a row cannot see, so a NaN or
 * inf in a masked V row does not reach the output (the chained W @ V and the
 * reference give NaN there, as 0 * inf does); and it forms logits in fp32, so
 * a score * scale + bias beyond FLT_MAX overflows where the reference's
 * double does not.
 * Few query rows: for Tq <= 8, AUTO runs the fused path on the split-K
 * decode kernel of vkattn/decode.h (K and V read as a full cache of Tv keys)
 * where that computes the same thing: no dropout, bias, mask, lse or
 * io->workspace (its partials take the library workspace, below); dk, dv <=
 * 256; bottom-right causal, top-left with Tq == Tv, or none (then no sliding
 * window, and sinks only with Tq == 1); K and V of one element type (f16
 * or bf16 with even dk and dv); and a row left with no key has zero output either
 * way (masked_row ZERO, sinks, or no such row); and the decode kernel's own
 * device limits hold (its partials, grid, shared memory), else the fused
 * kernel serves the call: the route never makes AUTO fail. Same bound; but a NaN or
 * inf in a V row the masks hide reaches the output there, as on the chained
 * path (its weight 0 multiplies the row). docs/PERFORMANCE.md has the speed
 * (several times the fused kernel on lavapipe at Tq 1-8).
 *
 * Element types: q, k, v, out and the returned weights may each be f32, f16
 * or bf16 (any mix, e.g. f16 K/V with an f32 Q, bf16 Q with f16 K/V, or an
 * f32 out from 16-bit inputs); bias, masks, workspace and lse are f32 (a
 * 16-bit bias or mask is VKATTN_ERROR_INVALID_ARGUMENT naming it; the
 * backward, vkattn/sdpa_backward.h, takes f32 weights). 16-bit weights: the chained path
 * keeps the scores in the f32 workspace and rounds the returned weights
 * into io->weights once (after softmax, or after dropout with
 * weights_after_dropout), so out is computed from the same fp32
 * probabilities as with f32 weights; each f16 weight is within ulp16 (one
 * f16 spacing at its value, 2^-24 below 2^-14) of the f32 one, each bf16
 * weight within half a bf16 spacing (2^-8 of its value: vkattn's own
 * rounding to nearest even). 16-bit values are
 * converted on load and all arithmetic (logits, running max and sum, the
 * chained path's scores and softmax, W @ V) is fp32; a 16-bit out is rounded
 * once at the end: f16 by the device's f32 -> f16 conversion, bf16 by
 * vkattn's own round to nearest even. The fused kernel reads f16 as
 * float16_t on devices with storageBuffer16BitAccess when no operand is
 * bf16, and as 32-bit words of two 16-bit elements elsewhere (bf16 always;
 * writing whole words; an odd dv goes through f32 scratch and a conversion
 * pass); the cooperative-matrix kernel takes f16 q, k, v only (a bf16 one
 * runs the tiled kernel); the chained path uses the typed matmul of
 * vkattn/matmul.h. Bound, against vkattn_reference_sdpa on the same stored
 * values (16-bit ones taken exactly, double arithmetic, out rounded once to
 * nearest even):
 *   max|out - ref| <= (2e-5 + eps16) max|ref|     eps16 = 2^-10 (f16 out)
 *   max|out - ref| <= (2e-5 + eps_bf16) max|ref|  eps_bf16 = 2^-7 (bf16 out)
 *   max|out - ref| <= 2e-5 max|ref|               (f32 out)
 * i.e. one epsilon of the out type at the output scale on top of the f32
 * bound (the two roundings of fp32 values up to 2e-5 apart differ by at
 * most one spacing, <= 2^-10 |x| for f16, 2^-7 |x| for bf16), for dk and Tv up to a few
 * hundred and inputs of magnitude about 1 (the tests: random shapes, both
 * paths, every mask kind, dropout).
 *
 * Call sequence: fill vkattn_sdpa_params, optionally size a workspace with
 * vkattn_sdpa_workspace_size, bind tensors in vkattn_sdpa_io, call
 * vkattn_sdpa_record (into your command buffer) or vkattn_sdpa_record (submits
 * and waits, VKATTN_RUN_NOW).
 *
 * Workspace: the chained path needs a score tensor unless the returned weights
 * can hold the scores themselves (f32 weights). 16-bit weights always need it:
 * B*H*Tq*Tv floats, more than vkattn_sdpa_workspace_size reports for such a
 * call (params do not carry the weights' type). Pass your own (io->workspace, at least
 * vkattn_sdpa_workspace_size floats) or leave it NULL: then the library uses a
 * scratch tensor kept in the context, shared by every call on that context
 * and grown on demand (a replaced one is kept until the context is destroyed,
 * so command buffers recorded earlier stay valid). Because it is shared,
 * command buffers that are executing at the same time must not both use the
 * library workspace: give each concurrent recording its own io->workspace.
 * Successive recordings into one or several command buffers that execute one
 * after another on one queue are fine (barriers are recorded for you).
 *
 * Recording contract: as in vkattn/matmul.h; the workspace, like every other
 * tensor, must stay alive until the command buffer completes.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; a zero
 * batch, tq, tv or dk; heads not a multiple of kv_heads; a non-finite scale;
 * an out-of-range enum; a dropout rate outside [0, 1] or NaN; a missing,
 * unexpected or too small tensor; out, weights or workspace aliasing another
 * tensor; return_weights with VKATTN_SDPA_FUSED), VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_DEVICE_LIMIT (a tensor,
 * the score tensor included, beyond maxStorageBufferRange or 32-bit indexing;
 * the message names the fused path where it would help;
 * and for a sliding window with 2 (Tq + Tv) >= 2^32),
 * VKATTN_ERROR_UNSUPPORTED (VKATTN_SDPA_FUSED where the fused kernel cannot
 * serve the call), VKATTN_ERROR_OUT_OF_DEVICE_MEMORY (library workspace),
 * Vulkan failures. Size and argument errors are reported before anything is
 * recorded or allocated.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_SDPA_H
#define VKATTN_SDPA_H

#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_sdpa_io {
    vkattn_tensor *q, *k, *v; /* (B,H,Tq,dk), (B,Hkv,Tv,dk), (B,Hkv,Tv,dv) */
    /* per params->mask: bias (B|1,H|1,Tq|1,Tv) iff has_bias, value_mask (B,Tv) iff
     * has_value_mask, mask (B|1,H|1,Tq|1,Tv) iff has_mask; NULL otherwise */
    vkattn_tensor *bias, *value_mask, *mask;
    vkattn_tensor *out;       /* (B, H, Tq, dv), written */
    vkattn_tensor *weights;   /* (B, H, Tq, Tv) iff params->return_weights, written */
    /* optional scratch, >= vkattn_sdpa_workspace_size floats (B*H*Tq*Tv with
     * f16 weights); NULL: the library
     * allocates one and keeps it in the context (see the overview). Ignored
     * when the call needs none. */
    vkattn_tensor *workspace;
    /* optional (B, H, Tq), written: the log-sum-exp of each row's allowed
     * logits, lse = log(sum_j exp(score * scale + bias)) before dropout, -inf
     * for a row with no allowed key (whatever params->mask.masked_row). With it
     * a later pass can recompute weights, e.g. exp(logit - lse), or a backward
     * pass can run. Written by the fused path only: a call that takes the
     * chained path with lse set fails with VKATTN_ERROR_INVALID_ARGUMENT. */
    vkattn_tensor *lse;
    /* (H) f32 iff params->has_sinks: one logit per query head; the lse then
     * includes it */
    vkattn_tensor *sinks;
} vkattn_sdpa_io;

/* *floats = the workspace the call vkattn_sdpa_record would make with these
 * params on this context needs (0 when none: the fused path, or returned
 * f32 weights that can hold the scores; f16 weights need B*H*Tq*Tv). Fails as vkattn_sdpa_record does on bad
 * params or sizes, before any tensor is involved. */
VKATTN_API vkattn_result vkattn_sdpa_workspace_size(vkattn_context *ctx,
                                                    const vkattn_sdpa_params *params,
                                                    uint64_t *floats);
VKATTN_API vkattn_result vkattn_sdpa_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                            const vkattn_sdpa_params *params,
                                            const vkattn_sdpa_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_SDPA_H */
