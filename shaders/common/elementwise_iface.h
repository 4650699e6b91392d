/* shaders/add.comp, fill.comp and the other binary elementwise kernels
 * (scale.comp, gate.comp) <-> src/ops/elementwise.c (see iface.h). */
#ifndef VKA_ELEMENTWISE_IFACE_H
#define VKA_ELEMENTWISE_IFACE_H

#include "iface.h"

#define VKA_ELEMENTWISE_SPEC_WG 0 /* local_size_x */
#define VKA_ELEMENTWISE_N_SPEC 1
/* the *_f16.comp variants (16-bit storage): each binding f16 (else f32) */
#define VKA_ELEMENTWISE_SPEC_A_TYPE 1
#define VKA_ELEMENTWISE_SPEC_B_TYPE 2
#define VKA_ELEMENTWISE_SPEC_Y_TYPE 3
#define VKA_ELEMENTWISE_N_SPEC_F16 4

#define VKA_ELEMENTWISE_PUSH \
    VKA_UINT total;   /* elements */ \
    VKA_FLOAT value;  /* fill.comp: the value written; the others: unused */
#define VKA_ELEMENTWISE_PUSH_SIZE 8

#endif /* VKA_ELEMENTWISE_IFACE_H */
