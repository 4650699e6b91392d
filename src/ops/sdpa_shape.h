/* One SDPA call's plan (shape/sdpa_plan.h) with the device's limits added,
 * and the checks of its optional operands: shared by the forward (sdpa.c),
 * the backward (sdpa_backward.c) and the fused kernels they choose. */
#ifndef VKA_OPS_SDPA_SHAPE_H
#define VKA_OPS_SDPA_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"
#include "vkattn/op_params.h"
#include "shape/sdpa_plan.h"

/* vka_sdpa_plan (shape/sdpa_plan.h), then the device's limit: every operand
 * within one storage-buffer binding (DEVICE_LIMIT). */
vkattn_result vka_sdpa_resolve(vkattn_context *ctx, const char *caller,
                               const vkattn_sdpa_params *p, vka_sdpa_shape *s);

/* An optional operand (bias, masks, lse, weights): one the flags ask for
 * (`set`) must be there, f32 and at least `count` elements; one they do not
 * ask for must be NULL, so a forgotten flag is not silently ignored. An f16
 * one is INVALID_ARGUMENT: these operands have no 16-bit form. `flag` names the
 * params field in messages. */
vkattn_result vka_sdpa_check_flagged(vkattn_context *ctx, const char *caller, const char *what,
                                     const char *flag, bool set, const vkattn_tensor *t,
                                     uint64_t count);

/* The three mask operands, each by vka_sdpa_check_flagged against p->mask's
 * flags and s's counts. */
vkattn_result vka_sdpa_check_masks(vkattn_context *ctx, const char *caller,
                                   const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                   const vkattn_tensor *bias, const vkattn_tensor *value_mask,
                                   const vkattn_tensor *mask);

/* Elements of a (B|1, H|1, Tq|1, Tv) mask or bias as stored; UINT64_MAX
 * where that overflows. */
uint64_t vka_sdpa_bcast_count(const vka_sdpa_shape *s, vkattn_broadcast bc);

/* Element strides of a (B|1, H|1, Tq|1, Tv) operand along b, h and i; 0
 * where broadcast. They fit 32 bits once vka_sdpa_masks_fit_u32 holds. */
void vka_sdpa_bcast_strides(const vka_sdpa_shape *s, vkattn_broadcast bc, uint32_t out[3]);

/* Every index a fused kernel forms into the mask operands (the (B, Tv) key
 * mask, the mask and the bias as stored) stays below 2^32: the part of their
 * 32-bit indexing check the forward and the backward share. */
bool vka_sdpa_masks_fit_u32(const vka_sdpa_shape *s, const vkattn_mask_params *m);

/* Whether a fused kernel can serve a call on this device: SUCCESS, or the
 * code a forced call fails with and *why a sentence fragment
 * (vka_flash_check, vka_flash_backward_check). */
typedef vkattn_result (*vka_fused_check)(const vkattn_context *ctx, const vka_sdpa_shape *s,
                                         const vkattn_sdpa_params *p, const char **why);

/* *fused: whether the fused kernel `kernel` ("the fused kernel") serves the
 * call, by p->path: UNFUSED never; AUTO where `wanted` and check passes,
 * falling back to the chained path quietly; FUSED where check passes, else
 * check's code with a message naming the reason. */
vkattn_result vka_sdpa_choose_fused(vkattn_context *ctx, const char *caller,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    vka_fused_check check, bool wanted, const char *kernel,
                                    bool *fused);

#endif /* VKA_OPS_SDPA_SHAPE_H */
