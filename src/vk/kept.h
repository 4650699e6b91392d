/* Tensors the context keeps for its life (vk/view.h's vka_kept_*): destroyed
 * with it, as an app's command buffer may read one long after the call that
 * recorded it. vk/ knows their keys as bytes, not what they mean. */
#ifndef VKA_VK_KEPT_H
#define VKA_VK_KEPT_H

#include <stddef.h>
#include <stdint.h>

#include "vk/view.h"

struct vka_kept {
    uint8_t key[VKA_KEPT_KEY_MAX];
    size_t size;
    struct vkattn_tensor *t;
};

/* Context destruction. */
void vka_kept_destroy(struct vkattn_context *ctx);

#endif /* VKA_VK_KEPT_H */
