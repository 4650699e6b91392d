/* shaders/half_convert.comp <-> src/ops/half_convert.c (see iface.h). */
#ifndef VKA_HALF_CONVERT_IFACE_H
#define VKA_HALF_CONVERT_IFACE_H

#include "iface.h"

#define VKA_HALF_CONVERT_SPEC_WG 0      /* local_size_x */
#define VKA_HALF_CONVERT_SPEC_TO_TYPE 1 /* of the output: F16, f32 -> packed f16; F32, back */
#define VKA_HALF_CONVERT_N_SPEC 2

#define VKA_HALF_CONVERT_PUSH VKA_UINT count; /* elements */
#define VKA_HALF_CONVERT_PUSH_SIZE 4

#endif /* VKA_HALF_CONVERT_IFACE_H */
