/* What ops and layers see of a context: its info and limits, its budgets and
 * its lock, the scratch slots ops claim and the tensors it keeps for them. The context's state itself
 * (vk/context.h) is private to vk/; everything here is a function, so an op
 * cannot come to depend on a field. Includes no other vk/ header
 * (scripts/check-layering.sh): ops and layers reach the rest of vk/ only
 * through its module headers (dispatch, tensor, pack, ...), never through
 * vk/context.h. Logging and errors go through core/error.h's vka_log and
 * vka_fail, which take the context pointer. */
#ifndef VKA_VIEW_H
#define VKA_VIEW_H

#include "vkattn/context.h"
#include "vkattn/result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vkattn_context;
struct vkattn_tensor;

/* The device's info and limits as vkattn_context_get_info reports them;
 * valid as long as the context. */
const vkattn_context_info *vka_info(const struct vkattn_context *ctx);

/* The public binding limit, checked by every op (info.max_storage_buffer_range). */
uint64_t vka_max_range(const struct vkattn_context *ctx);

/* Loop iterations one shader invocation may run in total: lavapipe ends an
 * invocation's loops after 65535 iterations, so kernels with long loops split
 * their work or refuse past it. UINT64_MAX elsewhere. */
uint64_t vka_loop_budget(const struct vkattn_context *ctx);

/* VKATTN_ERROR_DEVICE_LIMIT if `iterations` loop iterations per invocation
 * exceed the device's loop budget; `what` names the size that is too large. */
vkattn_result vka_check_loop_budget(struct vkattn_context *ctx, const char *caller,
                                    uint64_t iterations, const char *what);

/* Subgroup shuffles in compute, on top of info.subgroup_operations. */
bool vka_subgroup_shuffle(const struct vkattn_context *ctx);

/* vkattn_context_advanced.variants[family] as asked (0 = the tuned choice). */
uint32_t vka_variant_asked(const struct vkattn_context *ctx, uint32_t family);

/* The context's recursive lock over its shared state (tensor list, scratch,
 * stats, the kept tensors). */
void vka_lock(struct vkattn_context *ctx);
void vka_unlock(struct vkattn_context *ctx);

/* vkattn_context_create up to the cooperative-matrix self-test, which the
 * public function (ops/context_create.c) then runs on the new context. For
 * that op only: defined in vk/context.c, which layers may not call
 * (scripts/check-symbols.sh). */
vkattn_result vka_context_create(const vkattn_context_desc *desc, struct vkattn_context **out);

/* Scratch: buffers that only grow, one set per recording thread
 * (vk/scratch.h). vk/ knows a number of slots, not what they hold: its own
 * kinds come first (below VKA_SCRATCH_VK_KINDS), and ops name theirs from
 * there on (ops/scratch_kinds.h), up to VKA_SCRATCH_SLOTS. */
#define VKA_SCRATCH_VK_KINDS 2u
#define VKA_SCRATCH_SLOTS 20u

/* The calling thread's scratch in slot `kind`, grown to at least `count`
 * floats first if needed. */
vkattn_result vka_growable_get(struct vkattn_context *ctx, unsigned kind, uint64_t count,
                               const char *caller, struct vkattn_tensor **out);

/* Tensors kept for the context's life under a key an op chooses (at most
 * VKA_KEPT_KEY_MAX bytes, compared as bytes: no padding in it), because a
 * recorded command buffer may read one long after the record call. Callers
 * hold vka_lock. The tensor kept under key, or NULL: */
#define VKA_KEPT_KEY_MAX 32u
struct vkattn_tensor *vka_kept_find(struct vkattn_context *ctx, const void *key, size_t size);
/* Keeps t under key: the context owns it from now on (destroyed here if it
 * cannot be kept). */
vkattn_result vka_kept_add(struct vkattn_context *ctx, const char *caller, const void *key,
                           size_t size, struct vkattn_tensor *t);

#endif /* VKA_VIEW_H */
