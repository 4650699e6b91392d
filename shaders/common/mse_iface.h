/* shaders/mse.comp <-> src/ops/loss.c (see iface.h). */
#ifndef VKA_MSE_IFACE_H
#define VKA_MSE_IFACE_H

#include "iface.h"

/* One workgroup of this many invocations (Vulkan's minimum limit) reduces the
 * whole tensor: a fixed order, so the loss is the same bits on every run. */
#define VKA_MSE_THREADS 128

#define VKA_MSE_SPEC_GRAD 0 /* bool: write the gradient */
#define VKA_MSE_N_SPEC 1

#define VKA_MSE_PUSH                                                           \
    VKA_UINT count;                                                            \
    VKA_FLOAT inv_count;   /* 1 / count, rounded once on the host */           \
    VKA_FLOAT grad_factor; /* 2 * loss_scale / count */
#define VKA_MSE_PUSH_SIZE 12

#endif /* VKA_MSE_IFACE_H */
