/* shaders/additive_backward.comp <-> src/ops/additive_backward.c (see iface.h). */
#ifndef VKA_ADDITIVE_BACKWARD_IFACE_H
#define VKA_ADDITIVE_BACKWARD_IFACE_H

#include "iface.h"

#define VKA_ADDITIVE_BWD_SPEC_WG 0   /* local_size_x */
#define VKA_ADDITIVE_BWD_SPEC_PASS 1 /* one of VKA_ADDITIVE_BWD_PASS_* */
#define VKA_ADDITIVE_BWD_N_SPEC 2

/* out (B, T_own, dim) = factor * sum over the other axis of dS * (1 - t^2):
 * the unscaled gradient of q (own = q, other = k) or of k (own = k, other = q) */
#define VKA_ADDITIVE_BWD_PASS_SECH2 0
/* out (B, Tq, dim) = sum_j dS[b,i,j] * t: per-row partial sums of the scale
 * vector's gradient (summed over b and i by grad_reduce.comp) */
#define VKA_ADDITIVE_BWD_PASS_TANH 1
/* out[e] *= s[e % dim] (binding 0 is s, binding 3 the gradient of q or k) */
#define VKA_ADDITIVE_BWD_PASS_SCALE 2

/* t = tanh(inner * (own[b,o,d] + other[b,x,d])); dS[b,o,x] is read at
 * b * tq * tv + o * ds_own + x * ds_other. */
#define VKA_ADDITIVE_BWD_PUSH                                                 \
    VKA_UINT n_own, n_other, dim;                                             \
    VKA_UINT begin, end; /* output elements [begin, end) of this dispatch */  \
    VKA_UINT ds_own, ds_other;                                                \
    VKA_FLOAT inner, factor;
#define VKA_ADDITIVE_BWD_PUSH_SIZE 36

#endif /* VKA_ADDITIVE_BACKWARD_IFACE_H */
