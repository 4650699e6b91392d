/* Recording one compute dispatch: barriers from tracked access, push
 * descriptors or a cached descriptor set, push constants, then vkCmdDispatch. Checks the group counts
 * and binding ranges against the device's limits first. */
#ifndef VKA_DISPATCH_H
#define VKA_DISPATCH_H

#include "vk/barrier.h"
#include "vk/pipeline.h"
#include "vk/prepare.h" /* VKA_DRY_CMD: VKATTN_PREPARE and the dry passes */

#include <stdint.h>

struct vkattn_context;
struct vkattn_tensor;

typedef struct vka_binding {
    VkBuffer buffer;
    VkDeviceSize offset, size;
    vka_access *state; /* NULL for never-written data (the context's dummy) */
    bool write;
    bool sink; /* the recording thread's sink, resolved when recorded */
} vka_binding;

typedef struct vka_dispatch {
    const vka_kernel *kernel;
    vka_binding bindings[VKA_MAX_BINDINGS]; /* bindings[i] is binding i */
    const void *push;
    uint32_t groups[3]; /* 0 is taken as 1 */
    const char *caller; /* public function name, for messages */
    /* Multiply-adds this dispatch does, where the op knows them (0 = not
     * known): a slicer's first cost estimate (vk/capture.h) */
    uint64_t work;
    /* The share of its bound bytes this dispatch touches, where it is one
     * piece of a split (a slice of the batch and heads); 0 = all of them. A
     * slicer's first cost estimate again. */
    double touched;
} vka_dispatch;

vkattn_result vka_record_dispatch(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                  const vka_dispatch *d);

/* A tensor as binding; `write` if the dispatch writes it. */
vka_binding vka_bind_tensor(struct vkattn_tensor *t, bool write);
/* A tensor if non-NULL, else the context's small read-only dummy buffer. */
vka_binding vka_bind_optional(struct vkattn_context *ctx, struct vkattn_tensor *t);
/* For an optional output: the tensor if non-NULL, else the recording
 * thread's sink (vk/scratch.h), a small buffer that absorbs unused outputs. Validation counts a binding the
 * shader may write as written even when a spec constant disables the store, so
 * it must not share the read-only dummy; the sink's writes are tracked. */
vka_binding vka_bind_optional_output(struct vkattn_context *ctx, struct vkattn_tensor *t);

/* A 1-D grid for kernels that walk `items` with a grid-stride loop: up to 256
 * invocations per group (within the device's limits), enough groups to cover
 * the items, capped at `max_groups` and the device's x limit (the stride loop
 * covers the rest, so the cap is always correct). */
typedef struct vka_grid_1d {
    uint32_t threads;
    uint32_t groups;
} vka_grid_1d;
vka_grid_1d vka_grid_stride_1d(const struct vkattn_context *ctx, uint64_t items, uint32_t max_groups);

/* The group cap of the grid-stride kernels: enough groups to fill any GPU;
 * beyond it each invocation loops (on lavapipe fewer, fatter groups are faster). */
#define VKA_GRID_MAX_GROUPS 4096u

/* Records `d` as one grid-stride dispatch over `items` (vka_grid_stride_1d,
 * capped at VKA_GRID_MAX_GROUPS): the grid's invocations per group become
 * spec constant `wg_spec` of `kernel`, its groups d's x count. d.kernel and
 * d.groups are set here. */
vkattn_result vka_record_grid_1d(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                 vka_kernel kernel, uint32_t wg_spec, uint64_t items,
                                 vka_dispatch d);
/* The same over [0, total) in ranges of `per` items, one dispatch each (a
 * split within the watchdog budget): *begin and *end, fields of d's push
 * constants, are set to each range before it is recorded. */
vkattn_result vka_record_grid_1d_ranges(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                        vka_kernel kernel, uint32_t wg_spec, uint64_t total,
                                        uint32_t per, vka_dispatch d, uint32_t *begin,
                                        uint32_t *end);

/* Multiply-adds one dispatch may do: the context's watchdog budget
 * (info.max_dispatch_work), or the smaller piece size of a slicer capturing
 * on this thread (vk/capture.h); 0 = unbounded. */
uint64_t vka_dispatch_budget(struct vkattn_context *ctx);

/* Into how many dispatches a call doing `work` multiply-adds must be split so
 * that none exceeds vka_dispatch_budget; 1 when there is no budget. Ops split
 * along rows or keys. */
uint64_t vka_dispatch_pieces(struct vkattn_context *ctx, uint64_t work);

/* ceil(a / b) for group counts */
static inline uint64_t vka_div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

#endif /* VKA_DISPATCH_H */
