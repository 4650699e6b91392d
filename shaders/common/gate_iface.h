/* shaders/gate_backward.comp <-> src/ops/gate.c (see iface.h); gate.comp has
 * the binary elementwise layout (elementwise_iface.h). */
#ifndef VKA_GATE_IFACE_H
#define VKA_GATE_IFACE_H

#include "iface.h"

#define VKA_GATE_SPEC_WG 0     /* local_size_x */
#define VKA_GATE_SPEC_OUT_DG 1 /* gate_backward.comp: write dg (else dx) */
#define VKA_GATE_N_SPEC 2
/* gate_backward_f16.comp (16-bit storage): x, g each f16 (else f32) */
#define VKA_GATE_SPEC_X_TYPE 2
#define VKA_GATE_SPEC_G_TYPE 3
#define VKA_GATE_N_SPEC_F16 4

#define VKA_GATE_PUSH \
    VKA_UINT total; /* elements */
#define VKA_GATE_PUSH_SIZE 4

#endif /* VKA_GATE_IFACE_H */
