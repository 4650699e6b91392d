/* Packing several tensors behind one storage-buffer binding, for devices that
 * allow fewer bindings per shader than a kernel declares (many Android
 * drivers allow 4). A kernel's "packed" variant reads its side inputs (masks,
 * bias, ...) from one binding at element offsets it gets in push constants;
 * the host copies those inputs into the context's pack buffer first. The
 * copies cost one extra pass over the side inputs; devices with enough
 * bindings never take this path. */
#ifndef VKA_PACK_H
#define VKA_PACK_H

#include "vk/dispatch.h"

#define VKA_MAX_PACKED 4

struct vkattn_context;
struct vkattn_tensor;

typedef struct vka_packed {
    vka_binding binding;             /* the pack buffer, read by the dispatch */
    uint32_t offset[VKA_MAX_PACKED]; /* word offset of tensors[i]; 0 when absent */
} vka_packed;

/* Records copies of the non-NULL `tensors[0..n)` into the context's pack
 * buffer, back to back, each at a multiple of 4 32-bit words (vec4 reads stay
 * aligned), with the barriers they need. Offsets count words: an f32 tensor's
 * elements, or an f16 tensor's pairs of halves (its words, the last one
 * padded). The pack buffer is shared by every
 * call on the context: tracked access orders a later call's copies after this
 * call's reads. VKATTN_ERROR_DEVICE_LIMIT if the sum exceeds
 * maxStorageBufferRange or 2^32 elements. */
vkattn_result vka_pack_inputs(struct vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              struct vkattn_tensor *const *tensors, uint32_t n, vka_packed *out);

/* Records a copy of `count` floats from src (starting at element src_first)
 * into dst (from dst_first), with the barriers it needs: for packed outputs
 * that a kernel wrote into scratch and that belong in the caller's tensors. */
vkattn_result vka_copy_floats(struct vkattn_context *ctx, VkCommandBuffer cmd,
                              struct vkattn_tensor *src, uint64_t src_first,
                              struct vkattn_tensor *dst, uint64_t dst_first, uint64_t count);

#endif /* VKA_PACK_H */
