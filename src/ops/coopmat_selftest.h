/* The cooperative-matrix families' on-device known-answer self-test: what
 * lets AUTO run tensor cores on a device nobody listed, and keeps a device
 * whose driver computes wrong on the scalar kernels.
 *
 * Per candidate family of a new context (vk/coopmat.h), the family's own
 * kernels run a few small f16 products and attention tiles chosen to touch
 * every fragment operation, layout, stride and edge the kernels use
 * (transposes, sizes off the 16 and tile grid, bias, f16 and f32 outputs,
 * broadcast and strided operands; masks, both causal alignments, GQA, widths
 * that load as groups of eight and as single halves), and each result is
 * compared with the same call on the scalar kernels; one small f16 fused
 * SDPA backward (GQA, causal, sizes off the fragments) is compared with
 * vkattn_reference_sdpa_backward within docs/SEMANTICS.md's bound. A family
 * whose matmul, attention or backward disagrees keeps that kernel off (the
 * others may still run it), with a WARN naming the family and the first
 * wrong element. The outcome is kept per device, driver and context shape
 * for the process, so later contexts do not test again. */
#ifndef VKA_OPS_COOPMAT_SELFTEST_H
#define VKA_OPS_COOPMAT_SELFTEST_H

#include "vkattn/context.h"

/* Decides ctx's cooperative-matrix families under AUTO (nothing to do where
 * there is no candidate or under ON): fills ctx->coopmat_chosen and info's
 * coopmat_running, coopmat_attention and coopmat_check. Never fails: a
 * family whose test cannot run (a Vulkan error, say) counts as failed. */
void vka_coopmat_decide(vkattn_context *ctx);

#endif /* VKA_OPS_COOPMAT_SELFTEST_H */
