/* A new layer's weights as Keras initializes them (vkattn_initializer,
 * vkattn/layer_call.h): the desc's choices, their check, and the values of
 * one weight drawn from the Philox4x32-10 stream. Pure C, no Vulkan header:
 * the GPU layers fill their tensors from it at create. */
#ifndef VKA_SHAPE_WEIGHT_INIT_H
#define VKA_SHAPE_WEIGHT_INIT_H

#include <stdint.h>

#include "vkattn/layer_call.h"
#include "vkattn/result.h"

struct vkattn_context;

/* A desc's initializers (0 = each weight's Keras default) and seed. */
typedef struct vka_weight_init {
    vkattn_initializer kernel, bias;
    uint64_t seed;
} vka_weight_init;

/* INVALID_ARGUMENT naming `name` ("desc->kernel_initializer") for a value
 * that is not a vkattn_initializer. */
vkattn_result vka_check_initializer(struct vkattn_context *ctx, const char *caller,
                                    const char *name, vkattn_initializer v);

/* Values first .. first + n - 1 of weight number `stream` (its index in its
 * layer's table) drawn by `kind` (not DEFAULT) for a weight of these fans,
 * into out. Element e depends only on (seed, stream, e), never on chunking. */
void vka_weight_init_values(vkattn_initializer kind, uint64_t fan_in, uint64_t fan_out,
                            uint64_t seed, uint32_t stream, uint64_t first, uint64_t n,
                            float *out);

#endif /* VKA_SHAPE_WEIGHT_INIT_H */
