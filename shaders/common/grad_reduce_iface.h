/* shaders/common/grad_reduce_body.glsl (variants grad_reduce, grad_reduce_f16)
 * <-> src/ops/grad_reduce.c (see iface.h). */
#ifndef VKA_GRAD_REDUCE_IFACE_H
#define VKA_GRAD_REDUCE_IFACE_H

#include "iface.h"

#define VKA_GRAD_REDUCE_SPEC_WG 0 /* local_size_x */
#define VKA_GRAD_REDUCE_N_SPEC 1
/* grad_reduce_f16 (16-bit storage): in, out each VKA_ELEM_* */
#define VKA_GRAD_REDUCE_SPEC_IN_TYPE 1
#define VKA_GRAD_REDUCE_SPEC_OUT_TYPE 2
#define VKA_GRAD_REDUCE_N_SPEC_F16 3

/* out[g*out_g + r*out_row + c] = alpha * sum over (i, j, l) < (n1, n2, n3) of
 * in[g*in_g + r*in_row + c + i*s1 + j*s2 + l*s3], for g < groups, r < rows,
 * c < cols: output elements e = (g * rows + r) * cols + c in [begin, end)
 * (the host may split them over dispatches for a watchdog budget). */
#define VKA_GRAD_REDUCE_PUSH                                                  \
    VKA_UINT rows, cols, begin, end;                                          \
    VKA_UINT out_g, out_row, in_g, in_row;                                    \
    VKA_UINT n1, s1, n2, s2, n3, s3;                                          \
    VKA_FLOAT alpha;
#define VKA_GRAD_REDUCE_PUSH_SIZE 60

#endif /* VKA_GRAD_REDUCE_IFACE_H */
