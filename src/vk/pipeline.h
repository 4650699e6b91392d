/* Compute pipelines: created on first use from embedded SPIR-V and a set of
 * specialization constants, cached in the context for its lifetime. Bindings
 * are storage buffers 0..n-1 of set 0, pushed with VK_KHR_push_descriptor
 * where the context uses it, else bound as cached sets (vk/descriptors.h). */
#ifndef VKA_PIPELINE_H
#define VKA_PIPELINE_H

#include "vk/vk.h"

#include <stddef.h>
#include <stdint.h>

struct vkattn_context;

#define VKA_MAX_SPEC 20
#define VKA_MAX_BINDINGS 12
#define VKA_MAX_PUSH 128

/* What identifies a pipeline. Spec constant i has constant_id i. */
typedef struct vka_kernel {
    const char *name;     /* for messages */
    const uint32_t *code; /* vka_spv_<name> */
    size_t code_size;     /* bytes */
    uint32_t n_bindings;
    uint32_t push_size;   /* bytes, <= VKA_MAX_PUSH */
    uint32_t n_spec;
    uint32_t spec[VKA_MAX_SPEC];
} vka_kernel;

/* The name, code and size of the kernel built from shaders/<x>.comp, in a
 * vka_kernel initialiser: the name in messages is the shader's by construction. */
#define VKA_KERNEL_SPV(x) .name = #x, .code = vka_spv_##x, .code_size = vka_spv_##x##_size

/* The C twin `type` of a shader's push-constant block `block` (VKA_<X>_PUSH
 * in shaders/common/<x>_iface.h), its size checked against the shader's
 * block##_SIZE. */
#define VKA_PUSH_STRUCT(type, block)                                                   \
    typedef struct type {                                                              \
        block                                                                          \
    } type;                                                                            \
    _Static_assert(sizeof(type) == block##_SIZE, #type ": see " #block "'s interface header")

typedef struct vka_pipeline {
    vka_kernel key;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
} vka_pipeline;

/* Finds or creates the pipeline for `kernel`. Safe from several threads: the
 * list is guarded by ctx->pipeline_lock, which is not held while a pipeline
 * compiles; two threads that race to create the same one keep the first. */
vkattn_result vka_pipeline_get(struct vkattn_context *ctx, const vka_kernel *kernel,
                               const vka_pipeline **out);
void vka_pipelines_destroy(struct vkattn_context *ctx);

#endif /* VKA_PIPELINE_H */
