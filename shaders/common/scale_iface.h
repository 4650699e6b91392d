/* shaders/scale.comp <-> src/ops/scale.c (see iface.h). */
#ifndef VKA_SCALE_IFACE_H
#define VKA_SCALE_IFACE_H

#include "iface.h"

#define VKA_SCALE_SPEC_WG 0 /* local_size_x */
#define VKA_SCALE_N_SPEC 1

#define VKA_SCALE_PUSH VKA_UINT total; /* elements */
#define VKA_SCALE_PUSH_SIZE 4

#endif /* VKA_SCALE_IFACE_H */
