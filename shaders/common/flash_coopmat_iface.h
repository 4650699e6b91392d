/* shaders/flash_coopmat_nv.comp and flash_coopmat_emu.comp
 * (flash_coopmat_body.glsl) <-> src/ops/flash_coopmat.c (see iface.h). The
 * push constants and bindings are those of the other fused kernels
 * (VKA_FLASH_PUSH, flash_iface.h; the unpacked layout of 8 buffers), and so
 * are the masking and output spec constants (VKA_FLASH_SPEC_CAUSAL ..
 * WRITE_LSE, OUT_TYPE, declared by flash_spec.glsl), so src/ops/flash.c
 * dispatches all three from one flash_push. Q, K and V are always f16. */
#ifndef VKA_FLASH_COOPMAT_IFACE_H
#define VKA_FLASH_COOPMAT_IFACE_H

#include "flash_iface.h"

#define VKA_FLASH_COOPMAT_SPEC_WG 0             /* local_size_x: 32 per warp of 16 rows */
#define VKA_FLASH_COOPMAT_SPEC_BC 1             /* keys per tile, multiple of 16 */
#define VKA_FLASH_COOPMAT_SPEC_DK 2             /* query/key width, <= 256 */
#define VKA_FLASH_COOPMAT_SPEC_DV 3             /* value width, <= 128 */
/* 4 .. 10: VKA_FLASH_SPEC_CAUSAL .. VKA_FLASH_SPEC_WRITE_LSE (flash_spec.glsl) */
#define VKA_FLASH_COOPMAT_SPEC_VEC8 11          /* bool: Q, K, V rows load as uvec4s */
#define VKA_FLASH_COOPMAT_SPEC_OUT_TYPE VKA_FLASH_SPEC_OUT_TYPE /* VKA_ELEM_*: out (f16: DV even) */
/* bool: the emulated fragments' test fault
 * (vkattn_context_advanced.coopmat_test_fault); only the emulation declares it */
#define VKA_FLASH_COOPMAT_SPEC_FAULT 16
#define VKA_FLASH_COOPMAT_N_SPEC 17

#endif /* VKA_FLASH_COOPMAT_IFACE_H */
