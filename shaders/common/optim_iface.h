/* shaders/optim.comp <-> src/ops/optim.c (see iface.h). */
#ifndef VKA_OPTIM_IFACE_H
#define VKA_OPTIM_IFACE_H

#include "iface.h"

#define VKA_OPTIM_SPEC_WG 0   /* local_size_x */
#define VKA_OPTIM_SPEC_ALGO 1 /* one of VKA_OPTIM_ALGO_* */
#define VKA_OPTIM_SPEC_MOMENTUM 2 /* bool: SGD keeps a momentum buffer */
#define VKA_OPTIM_SPEC_NESTEROV 3 /* bool: SGD's Nesterov variant */
#define VKA_OPTIM_N_SPEC 4

/* ALGO: the update (vkattn_optim_algorithm's values), or the advance of the
 * step tensor that precedes it in its own dispatch. */
#define VKA_OPTIM_ALGO_SGD 0
#define VKA_OPTIM_ALGO_ADAM 1
#define VKA_OPTIM_ALGO_ADAMW 2
#define VKA_OPTIM_ALGO_ADVANCE 3

#define VKA_OPTIM_PUSH                                                         \
    VKA_UINT count; /* elements of the parameter tensor */                    \
    VKA_FLOAT lr, weight_decay;                                                \
    VKA_FLOAT momentum, dampening;                                             \
    VKA_FLOAT beta1, beta2, eps;
#define VKA_OPTIM_PUSH_SIZE 32

#endif /* VKA_OPTIM_IFACE_H */
