/* shaders/add.comp, fill.comp and the other binary elementwise kernels
 * (scale.comp, gate.comp) <-> src/ops/elementwise.c (see iface.h). */
#ifndef VKA_ELEMENTWISE_IFACE_H
#define VKA_ELEMENTWISE_IFACE_H

#include "iface.h"

#define VKA_ELEMENTWISE_SPEC_WG 0 /* local_size_x */
#define VKA_ELEMENTWISE_N_SPEC 1

#define VKA_ELEMENTWISE_PUSH \
    VKA_UINT total;   /* elements */ \
    VKA_FLOAT value;  /* fill.comp: the value written; the others: unused */
#define VKA_ELEMENTWISE_PUSH_SIZE 8

#endif /* VKA_ELEMENTWISE_IFACE_H */
