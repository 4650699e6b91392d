/* shaders/flash_backward_{stats,kv,q}.comp (flash_backward_body.glsl) <->
 * src/ops/flash_backward.c, and their GPU-tuning twins
 * shaders/flash_backward_{stats,kv,q}_gpu{,_sg}.comp <->
 * src/ops/flash_backward_gpu.c (see iface.h). */
#ifndef VKA_FLASH_BACKWARD_IFACE_H
#define VKA_FLASH_BACKWARD_IFACE_H

#include "iface.h"
#include "mask_iface.h" /* the CAUSAL values */

#define VKA_FB_SPEC_WG 0             /* local_size_x */
#define VKA_FB_SPEC_TILE 1           /* kv: query rows per shared tile; q: keys per tile (x4) */
#define VKA_FB_SPEC_DK 2             /* query/key width */
#define VKA_FB_SPEC_DV 3             /* value width */
#define VKA_FB_SPEC_CAUSAL 4         /* vkattn_causal */
#define VKA_FB_SPEC_HAS_VALUE_MASK 5 /* bool */
#define VKA_FB_SPEC_HAS_MASK 6       /* bool */
#define VKA_FB_SPEC_HAS_BIAS 7       /* bool */
#define VKA_FB_SPEC_DROPOUT 8        /* bool: training && rate > 0 */
#define VKA_FB_SPEC_UNIFORM_ROWS 9   /* bool: masked rows have weights 1/Tv */
#define VKA_FB_SPEC_RPI 10           /* q: rows per invocation */
#define VKA_FB_SPEC_LANES 11         /* GPU kernels: invocations per key / query row */
#define VKA_FB_N_SPEC 12
/* the *_f16.comp variants (16-bit storage): each tensor's VKA_ELEM_* */
#define VKA_FB_SPEC_Q_TYPE 12 /* q (kv, q kernels) */
#define VKA_FB_SPEC_K_TYPE 13 /* k */
#define VKA_FB_SPEC_V_TYPE 14 /* v */
#define VKA_FB_SPEC_O_TYPE 15 /* the forward's out (stats kernels) */
#define VKA_FB_SPEC_DO_TYPE 16 /* grad_out (stats kernels; f16 only where the
                                 fragment kernels read it so too) */
#define VKA_FB_N_SPEC_F16 17

#define VKA_FB_PUSH                                                            \
    VKA_UINT heads, group, tq, tv; /* query heads, query heads per K/V head */ \
    VKA_FLOAT scale_log2;          /* scale * log2(e) */                       \
    VKA_FLOAT scale;               /* the forward's scale */                   \
    VKA_UINT mask_b, mask_h, mask_i; /* element strides, 0 = broadcast */      \
    VKA_UINT bias_b, bias_h, bias_i;                                           \
    VKA_UINT seed_lo, seed_hi, offset_mix, threshold; /* core/dropout_host.h */ \
    VKA_FLOAT drop_scale;          /* 1 without dropout */                     \
    VKA_FLOAT inv_tv;              /* the uniform masked-row weight 1/Tv */    \
    VKA_UINT x_base, z_base;       /* first workgroup of this piece */         \
    VKA_UINT rows;                 /* stats: B * H * Tq */                     \
    VKA_UINT window; /* sliding window, 0 = none, at most Tq + Tv (mask.glsl) */ \
    VKA_FLOAT softcap_log2; /* soft-capping c * log2(e), 0 = off (the CPU-shaped \
                               kernels only: flash_backward.c routes it) */
#define VKA_FB_PUSH_SIZE 92

#endif /* VKA_FLASH_BACKWARD_IFACE_H */
