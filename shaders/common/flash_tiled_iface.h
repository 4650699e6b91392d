/* shaders/flash_tiled.comp and flash_tiled_sg.comp (flash_tiled_body.glsl)
 * <-> src/ops/flash_tiled.c (see iface.h). The push constants are those of
 * the one-row-per-invocation kernel (VKA_FLASH_PUSH in flash_iface.h): both
 * kernels are dispatched by src/ops/flash.c from one flash_push. */
#ifndef VKA_FLASH_TILED_IFACE_H
#define VKA_FLASH_TILED_IFACE_H

#include "flash_iface.h"

#define VKA_FLASH_TILED_SPEC_WG 0             /* local_size_x, a multiple of LANES */
#define VKA_FLASH_TILED_SPEC_BC 1             /* keys per tile, multiple of 4 */
#define VKA_FLASH_TILED_SPEC_DK 2             /* query/key width */
#define VKA_FLASH_TILED_SPEC_DV 3             /* value width */
/* 4 .. 10: VKA_FLASH_SPEC_CAUSAL .. VKA_FLASH_SPEC_WRITE_LSE (flash_spec.glsl) */
#define VKA_FLASH_TILED_SPEC_LANES 11         /* invocations per query row: 4, 8, 16 */
#define VKA_FLASH_TILED_SPEC_Q_TYPE 12          /* VKA_ELEM_*: Q (f16 read as words of halves) */
#define VKA_FLASH_TILED_SPEC_K_TYPE 13          /* K */
#define VKA_FLASH_TILED_SPEC_V_TYPE 14          /* V */
#define VKA_FLASH_TILED_SPEC_OUT_TYPE 15        /* out (f16: DV even) */
#define VKA_FLASH_TILED_N_SPEC 16

#endif /* VKA_FLASH_TILED_IFACE_H */
