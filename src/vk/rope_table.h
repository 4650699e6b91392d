/* The context's inverse-frequency tables of the public rotations
 * (ops/head_op.c), one per distinct (max_wavelength, scaling_factor,
 * rotary_dim): an app's command buffer may read one long after the record
 * call, so they live as long as the context. Callers hold vka_lock. */
#ifndef VKA_VK_ROPE_TABLE_H
#define VKA_VK_ROPE_TABLE_H

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;
struct vkattn_tensor;

struct vka_rope_table {
    float max_wavelength, scaling_factor;
    uint32_t rotary_dim;
    struct vkattn_tensor *t;
};

/* The table kept for rope, or NULL. */
struct vkattn_tensor *vka_rope_table_find(struct vkattn_context *ctx,
                                          const vkattn_rope_params *rope);

/* Keeps t as rope's table (the context owns it from now on; destroyed here
 * if it cannot be kept). */
vkattn_result vka_rope_table_keep(struct vkattn_context *ctx, const char *caller,
                                  const vkattn_rope_params *rope, struct vkattn_tensor *t);

/* Context destruction. */
void vka_rope_tables_destroy(struct vkattn_context *ctx);

#endif /* VKA_VK_ROPE_TABLE_H */
