/* Context-owned scratch buffers that only grow: the ops' workspace, the pack
 * buffer and the sink, one set per recording thread.
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

struct vkattn_context;
struct vkattn_tensor;

typedef struct vka_growable {
    struct vkattn_tensor *current;
    struct vkattn_tensor **retired;
    uint32_t n_retired;
} vka_growable;

typedef enum vka_scratch_kind {
    VKA_SCRATCH_WORKSPACE, /* ops' library-managed workspace */
    VKA_SCRATCH_PACK,      /* side inputs packed behind one binding (vk/pack.h) */
    VKA_SCRATCH_SINK,      /* absorbs optional outputs nobody asked for */
    VKA_SCRATCH_F32_SUMS,  /* matmul's f32 sums for an f16 output (ops/matmul.c) */
    VKA_SCRATCH_F16_STAGE0, /* f32 copies of an op's f16 tensors (ops/half_stage.h), */
    VKA_SCRATCH_F16_STAGE1, /* one kind per tensor of the op */
    VKA_SCRATCH_F16_STAGE2,
    VKA_SCRATCH_F16_STAGE3,
    VKA_SCRATCH_F16_STAGE4, /* ... up to eight: the SDPA backward stages 8 (sdpa_backward.c) */
    VKA_SCRATCH_F16_STAGE5,
    VKA_SCRATCH_F16_STAGE6,
    VKA_SCRATCH_F16_STAGE7,
    VKA_SCRATCH_WORKSPACE_2, /* a second workspace, for ops that need two at once (sdpa_backward.c) */
    VKA_SCRATCH_SOFTMAX_PARTS, /* per-chunk statistics of split softmax rows (ops/softmax.c) */
    VKA_SCRATCH_SINK_LSE, /* the fused SDPA's row LSE when sinks need it (ops/sdpa_open.c) */
    VKA_SCRATCH_SINK_OUT, /* the output of the fused run the chained path's sinks take */
    VKA_SCRATCH_KINDS
} vka_scratch_kind;

/* One recording thread's scratch; only that thread touches it. */
typedef struct vka_thread_scratch {
    vka_thread thread;
    vka_growable g[VKA_SCRATCH_KINDS];
} vka_thread_scratch;

/* The calling thread's scratch of `kind`, grown to at least `count` floats
 * first if needed. */
vkattn_result vka_growable_get(struct vkattn_context *ctx, vka_scratch_kind kind, uint64_t count,
                               const char *caller, struct vkattn_tensor **out);

/* Frees the buffers of one set (a slicer's capture scratch, vk/capture.h). */
void vka_thread_scratch_free(vka_thread_scratch *ts);

/* Frees every thread's scratch (context destruction). */
void vka_thread_scratch_destroy(struct vkattn_context *ctx);

#endif /* VKA_SCRATCH_H */
