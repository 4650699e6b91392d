/* Internal ops: elementwise sum of two f32 tensors, and a fill with a
 * constant, recorded as dispatches (shaders/add.comp, fill.comp). The layer
 * backward uses them to sum the key and value paths of a value that is also
 * the key, and to write gradients that are identically zero. Not public: no
 * CPU reference of their own (the layer references compute the same).
 * Also the one recorder of every binary elementwise kernel (add, scale.c's,
 * gate.c's). */
#ifndef VKA_OPS_ELEMENTWISE_H
#define VKA_OPS_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* y[i] = a[i] + b[i] for i < n; a, b read, y written; y distinct from a and
 * b. Tensors of at least n elements, each f32, f16 or bf16 (vka_binary_record:
 * the sum is f32, a 16-bit y rounded once; bf16 through f32 scratch). `what`
 * names y in messages. */
vkattn_result vka_add_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                             const char *what, uint64_t n, vkattn_tensor *a, vkattn_tensor *b,
                             vkattn_tensor *y);

/* A binary elementwise kernel: bindings 0 and 1 read, 2 written, a
 * grid-stride loop (spec constant VKA_ELEMENTWISE_SPEC_WG: local_size_x) and
 * the push constants VKA_ELEMENTWISE_PUSH (common/elementwise_iface.h); and
 * what its operands are called in messages. */
typedef struct vka_binary_kernel {
    const char *name;
    const uint32_t *code; /* vka_spv_<name> */
    size_t code_size;
    const char *a_name, *b_name, *y_name; /* "a summand", ... */
    /* its f16 variant (<name>_f16.comp, common/binary_f16_body.glsl): each
     * binding f16 or f32 by VKA_ELEMENTWISE_SPEC_{A,B,Y}_TYPE */
    const char *name16;
    const uint32_t *code16;
    size_t code16_size;
} vka_binary_kernel;

/* y[i] = k(a[i], b[i]) for i < n (a[0] for every i where a_count is 1: a
 * scalar). Checks that n fits the kernel's 32-bit indexing and each tensor's
 * size (a_count, n, n), naming them as k does. Each of a, b, y f32, f16 or
 * bf16: with 16-bit storage and no bf16 one, k's f16 variant reads and
 * writes them as they are; otherwise 16-bit ones go through f32 scratch
 * (ops/half_stage.h; run dry first, so nothing is recorded on failure).
 * Either way the arithmetic is f32 and a 16-bit y is rounded once. */
vkattn_result vka_binary_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                const vka_binary_kernel *k, uint64_t n, vkattn_tensor *a,
                                uint64_t a_count, vkattn_tensor *b, vkattn_tensor *y);

/* y[i] = value for i < n (at least n elements; f32, or f16 or bf16 through
 * f32 scratch rounded once). */
vkattn_result vka_fill_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              const char *what, uint64_t n, float value, vkattn_tensor *y);

#endif /* VKA_OPS_ELEMENTWISE_H */
