/* The causal mask kinds as the kernels read them (mask.glsl), equal to
 * vkattn_causal: the host passes the enum value as it is (see iface.h). */
#ifndef VKA_MASK_IFACE_H
#define VKA_MASK_IFACE_H

#define VKA_CAUSAL_NONE 0u
#define VKA_CAUSAL_TOP_LEFT 1u
#define VKA_CAUSAL_BOTTOM_RIGHT 2u

#ifdef __STDC_VERSION__
#include "vkattn/op_params.h"
_Static_assert(VKA_CAUSAL_NONE == VKATTN_CAUSAL_NONE &&
                   VKA_CAUSAL_TOP_LEFT == VKATTN_CAUSAL_TOP_LEFT &&
                   VKA_CAUSAL_BOTTOM_RIGHT == VKATTN_CAUSAL_BOTTOM_RIGHT,
               "mask_iface.h: causal kinds differ from vkattn_causal");
#endif

#endif /* VKA_MASK_IFACE_H */
