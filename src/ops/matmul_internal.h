/* The matmul op for other ops (the backward of matmul records its gradients as
 * matmuls): vkattn_matmul_record with the public function's name to put in
 * messages, whole or as its plan and its recording. */
#ifndef VKA_OPS_MATMUL_INTERNAL_H
#define VKA_OPS_MATMUL_INTERNAL_H

#include <stdbool.h>

#include "core/matmul_shape.h"
#include "ops/gpu_tiles.h"
#include "vkattn/matmul.h"

/* The kernel, tiles and dispatch split of one call. */
typedef struct vka_matmul_choice {
    vka_matmul_tiles t;    /* scalar or GPU tiles; bm, bn the fragments' where coopmat */
    bool gpu;              /* shaders/matmul_gpu.comp */
    bool coopmat;          /* shaders/matmul_coopmat_<family>.comp with tiles ct */
    uint32_t family;       /* the cooperative-matrix family (0: none) */
    vka_coopmat_tiles ct;
    uint32_t chunk;        /* K per dispatch */
    uint32_t rows;         /* rows per block (vka_split_rows) */
    bool c_via_f32;        /* an f16 C summed in f32 scratch, converted at the end */
} vka_matmul_choice;

/* One call planned: its resolved shape, its tensors checked, its choice. */
typedef struct vka_matmul_call {
    vka_matmul_shape s;
    vka_matmul_choice c;
} vka_matmul_call;

vkattn_result vka_matmul_record_as(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vkattn_matmul_params *params, const vkattn_matmul_io *io);

/* vka_matmul_record_as in two steps: the plan (params resolved, tensors
 * checked, kernel chosen; nothing recorded), then the recording of that plan
 * with tensors of the same dtypes and at least the sizes planned for. */
vkattn_result vka_matmul_plan(vkattn_context *ctx, const char *caller,
                              const vkattn_matmul_params *params, const vkattn_matmul_io *io,
                              vka_matmul_call *call);
vkattn_result vka_matmul_record_planned(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const char *caller, const vkattn_matmul_params *params,
                                        const vkattn_matmul_io *io, const vka_matmul_call *call);

#endif /* VKA_OPS_MATMUL_INTERNAL_H */
