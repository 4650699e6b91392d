/* shaders/softcap.comp, sink_rows.comp and sink_grad.comp <-> src/ops/sdpa_open.c
 * (see iface.h): the steps of SDPA's logit soft-capping (chained path) and
 * attention sinks (fused path). */
#ifndef VKA_SINK_IFACE_H
#define VKA_SINK_IFACE_H

#include "iface.h"

#define VKA_SINK_SPEC_WG 0 /* local_size_x */
#define VKA_SINK_N_SPEC 1
/* sink_rows_f16.comp (16-bit storage): out f16 (else f32) */
#define VKA_SINK_SPEC_OUT_TYPE 1
#define VKA_SINK_N_SPEC_F16 2

#define VKA_SINK_PUSH                                                        \
    VKA_UINT total;    /* softcap: elements; sink_rows: rows B * H * Tq */   \
    VKA_FLOAT softcap; /* softcap.comp: the cap c > 0 */                     \
    VKA_UINT heads, tq, width; /* sink_rows: query heads, rows per head,     \
                                  floats per row (dv; Tv for weights);      \
                                  sink_grad: width is the batch */          \
    VKA_UINT update_lse; /* sink_rows: 1 = the lse gets the sink too */
#define VKA_SINK_PUSH_SIZE 24

#endif /* VKA_SINK_IFACE_H */
