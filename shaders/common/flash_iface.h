/* shaders/flash.comp and flash_packed.comp (flash_body.glsl) <->
 * src/ops/flash.c (see iface.h). */
#ifndef VKA_FLASH_IFACE_H
#define VKA_FLASH_IFACE_H

#include "iface.h"
#include "mask_iface.h" /* the CAUSAL values */

#define VKA_FLASH_SPEC_WG 0              /* local_size_x */
#define VKA_FLASH_SPEC_BC 1              /* keys per tile, multiple of 4 */
#define VKA_FLASH_SPEC_DK 2              /* query/key width */
#define VKA_FLASH_SPEC_DV 3              /* value width */
#define VKA_FLASH_SPEC_CAUSAL 4          /* vkattn_causal */
#define VKA_FLASH_SPEC_HAS_VALUE_MASK 5  /* bool */
#define VKA_FLASH_SPEC_HAS_MASK 6        /* bool */
#define VKA_FLASH_SPEC_HAS_BIAS 7        /* bool */
#define VKA_FLASH_SPEC_DROPOUT 8         /* bool: training && rate > 0 */
#define VKA_FLASH_SPEC_UNIFORM_ROWS 9    /* bool: masked rows -> mean of V */
#define VKA_FLASH_SPEC_WRITE_LSE 10      /* bool */
#define VKA_FLASH_SPEC_RPI 11            /* rows per invocation */
#define VKA_FLASH_SPEC_Q_TYPE 12          /* VKA_ELEM_*: Q */
#define VKA_FLASH_SPEC_K_TYPE 13          /* K */
#define VKA_FLASH_SPEC_V_TYPE 14          /* V */
#define VKA_FLASH_SPEC_OUT_TYPE 15        /* out */
#define VKA_FLASH_N_SPEC 16

#define VKA_FLASH_PUSH                                                         \
    VKA_UINT heads, group, tq, tv; /* query heads, query heads per K/V head */ \
    VKA_FLOAT scale_log2;          /* scale * log2(e) */                       \
    VKA_UINT mask_b, mask_h, mask_i; /* element strides of the explicit mask   \
                                        (0 = broadcast, core/broadcast.h) */   \
    VKA_UINT bias_b, bias_h, bias_i; /* same for the bias */                   \
    VKA_UINT seed_lo, seed_hi, offset_mix, threshold; /* core/dropout_host.h */ \
    VKA_FLOAT drop_scale;          /* 1 without dropout */                     \
    VKA_UINT x_base, z_base;       /* first workgroup of this piece of a split \
                                      call */                                  \
    VKA_UINT bias_off, vmask_off, mask_off, lse_off; /* packed layout: element \
                                                        offsets */            \
    VKA_UINT window; /* sliding window, 0 = none, at most Tq + Tv (mask.glsl) */ \
    VKA_FLOAT softcap_log2; /* logit soft-capping c * log2(e), 0 = off        \
                               (flash_body.glsl only: flash.c routes it) */
#define VKA_FLASH_PUSH_SIZE 96

#endif /* VKA_FLASH_IFACE_H */
