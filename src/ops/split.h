/* Splitting an op's rows over several dispatches so that none exceeds the
 * context's watchdog budget (vkattn_context_desc.max_dispatch_work). The
 * kernels take the first row of a dispatch in push constants; every output is
 * computed exactly as in one dispatch, so the split is bit-identical. */
#ifndef VKA_OPS_SPLIT_H
#define VKA_OPS_SPLIT_H

#include <stdint.h>

#include "vk/vk.h"
#include "vkattn/result.h"

struct vkattn_context;
struct vka_dispatch;

/* *rows_per_dispatch = `rows` when the call fits one dispatch (no budget, or
 * rows * work_per_row within it); else the most rows whose work fits, rounded
 * down to a multiple of `tile` (the kernel's rows per workgroup) when at least
 * one tile fits. VKATTN_ERROR_DEVICE_LIMIT, naming `kernel` and the budget,
 * when a single row exceeds the budget. */
vkattn_result vka_split_rows(struct vkattn_context *ctx, const char *caller, const char *kernel,
                             uint32_t rows, uint32_t tile, uint64_t work_per_row,
                             uint32_t *rows_per_dispatch);

/* Records d over a grid of gx by gz workgroups (x and z; y is 1) in pieces,
 * x first, then z, each within the device's workgroup counts and, where
 * whole workgroups allow, the watchdog budget (`work` multiply-adds for the
 * whole grid). Before each piece *x_base and *z_base (fields of d's push
 * constants) are set to its first workgroup. Stops at the first failure. */
vkattn_result vka_record_grid_pieces(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                     uint64_t gx, uint64_t gz, uint64_t work,
                                     struct vka_dispatch *d, uint32_t *x_base,
                                     uint32_t *z_base);

#endif /* VKA_OPS_SPLIT_H */
