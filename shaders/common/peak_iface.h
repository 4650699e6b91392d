/* shaders/peak_fma.comp, peak_coopmat_nv.comp and peak_copy.comp <->
 * src/ops/peak.c (see iface.h). */
#ifndef VKA_PEAK_IFACE_H
#define VKA_PEAK_IFACE_H

#include "iface.h"

#define VKA_PEAK_FMA_SPEC_CHAINS 0 /* vec4 chains, 1..8 */
#define VKA_PEAK_FMA_SPEC_WG 1     /* local_size_x */
#define VKA_PEAK_FMA_N_SPEC 2

#define VKA_PEAK_FMA_PUSH                                                     \
    VKA_UINT iters; /* loop trips; each trip does 4 fma per chain component */ \
    VKA_FLOAT a, b;
#define VKA_PEAK_FMA_PUSH_SIZE 12

/* peak_coopmat_nv.comp takes the FMA push constants (iters; a and b fill
 * the operand fragments) */
#define VKA_PEAK_COOPMAT_SPEC_WG 0 /* local_size_x: a multiple of the subgroup */
#define VKA_PEAK_COOPMAT_N_SPEC 1

#define VKA_PEAK_COPY_SPEC_WG 0 /* local_size_x */
#define VKA_PEAK_COPY_N_SPEC 1

#define VKA_PEAK_COPY_PUSH VKA_UINT n; /* vec4 elements */
#define VKA_PEAK_COPY_PUSH_SIZE 4

#endif /* VKA_PEAK_IFACE_H */
