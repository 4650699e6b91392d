/* Internal op: a layer's attention mask rewritten as a 1/0 mask the ops can
 * read (shaders/mask_expand.comp). Used where the stored mask has a key axis
 * of 1 (the softmax and flash kernels read a full key axis only) and by
 * MultiHeadAttention to fold its query mask into the attention mask. Not
 * public: the layer references do the same on the host. */
#ifndef VKA_OPS_MASK_EXPAND_H
#define VKA_OPS_MASK_EXPAND_H

#include <stdint.h>

#include "core/mask_shape.h"
#include "vkattn/context.h"
#include "vkattn/tensor.h"

typedef struct vka_mask_expand {
    uint32_t batch, heads, tq, tv; /* the output (Bo, Ho, Tqo, Tv) */
    vkattn_tensor *query_mask;     /* (B, Tq) folded in, or NULL; needs Bo = B, Tqo = Tq */
    vkattn_tensor *attn;           /* read through `layout`, or NULL */
    const vka_mask_layout *layout; /* of attn (NULL when attn is) */
    vkattn_tensor *out;            /* at least Bo*Ho*Tqo*Tv floats, written */
} vka_mask_expand;

/* Records the kernel. `caller` names the public function in messages;
 * VKATTN_ERROR_DEVICE_LIMIT if the output exceeds 32-bit indexing. */
vkattn_result vka_mask_expand_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     const vka_mask_expand *e);

#endif /* VKA_OPS_MASK_EXPAND_H */
