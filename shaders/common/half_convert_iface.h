/* shaders/half_convert.comp <-> src/ops/half_convert.c (see iface.h). */
#ifndef VKA_HALF_CONVERT_IFACE_H
#define VKA_HALF_CONVERT_IFACE_H

#include "iface.h"

#define VKA_HALF_CONVERT_SPEC_WG 0      /* local_size_x */
#define VKA_HALF_CONVERT_SPEC_HALF_TYPE 1 /* VKA_ELEM_F16 or _BF16: the 16-bit side's type */
#define VKA_HALF_CONVERT_SPEC_TO_HALF 2   /* 1: f32 -> 16-bit; 0: 16-bit -> f32 */
#define VKA_HALF_CONVERT_N_SPEC 3

#define VKA_HALF_CONVERT_PUSH VKA_UINT count; /* elements */
#define VKA_HALF_CONVERT_PUSH_SIZE 4

#endif /* VKA_HALF_CONVERT_IFACE_H */
