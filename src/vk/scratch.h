/* Context-owned scratch buffers that only grow: the pack buffer, the sink
 * and the ops' own kinds (ops/scratch_kinds.h), one set per recording thread.
 *
 * Why per thread: a scratch buffer's tracked access orders each use after the
 * last recorded one, which is right only if command buffers run in the order
 * they were recorded. Two threads recording at once on one context interleave
 * those uses in no order the queue will see; with a set each, every thread's
 * own recording order is the one that matters, as for its own tensors.
 *
 * A replaced buffer is retired, not freed: command buffers recorded earlier
 * may still use it; vkattn_context_destroy frees them all. Growth is
 * geometric, capped at the binding limit, so the retired buffers add up to
 * less than the current one. */
#ifndef VKA_SCRATCH_H
#define VKA_SCRATCH_H

#include "vkattn/dtype.h"
#include "vkattn/result.h"

#include <stdint.h>
#include "core/threads.h"
#include "vk/view.h" /* vka_growable_get, the slots */

struct vkattn_context;
struct vkattn_tensor;

typedef struct vka_growable {
    struct vkattn_tensor *current;
    struct vkattn_tensor **retired;
    uint32_t n_retired;
} vka_growable;

/* vk/'s own kinds; the ops' follow (ops/scratch_kinds.h, vk/view.h). */
enum {
    VKA_SCRATCH_PACK, /* side inputs packed behind one binding (vk/pack.h) */
    VKA_SCRATCH_SINK, /* absorbs optional outputs nobody asked for */
};
_Static_assert(VKA_SCRATCH_SINK + 1 == VKA_SCRATCH_VK_KINDS, "vk/view.h counts vk/'s scratch kinds");

/* One recording thread's scratch; only that thread touches it. */
typedef struct vka_thread_scratch {
    vka_thread thread;
    vka_growable g[VKA_SCRATCH_SLOTS];
} vka_thread_scratch;


/* Frees the buffers of one set (a slicer's capture scratch, vk/capture.h). */
void vka_thread_scratch_free(vka_thread_scratch *ts);

/* Frees every thread's scratch (context destruction). */
void vka_thread_scratch_destroy(struct vkattn_context *ctx);

#endif /* VKA_SCRATCH_H */
