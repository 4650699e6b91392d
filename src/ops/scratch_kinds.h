/* The ops' scratch kinds: slots of the context's per-thread scratch
 * (vk/view.h, vka_growable_get) that vk/ holds without knowing what for. A
 * kind is claimed here, after vk/'s own; two buffers an op needs at once take
 * two kinds. */
#ifndef VKA_OPS_SCRATCH_KINDS_H
#define VKA_OPS_SCRATCH_KINDS_H

#include "vk/view.h"

typedef enum vka_scratch_kind {
    VKA_SCRATCH_WORKSPACE = VKA_SCRATCH_VK_KINDS, /* ops' library-managed workspace */
    VKA_SCRATCH_F32_SUMS,   /* matmul's f32 sums for an f16 output (ops/matmul.c) */
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
    VKA_SCRATCH_OPS_END
} vka_scratch_kind;
_Static_assert(VKA_SCRATCH_OPS_END <= VKA_SCRATCH_SLOTS,
               "more scratch kinds than vk/view.h's VKA_SCRATCH_SLOTS: raise it");

#endif /* VKA_OPS_SCRATCH_KINDS_H */
