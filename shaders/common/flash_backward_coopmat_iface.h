/* shaders/flash_backward_coopmat_{nv,khr,emu}.comp
 * (flash_backward_coopmat_body.glsl) <-> src/ops/flash_backward_coopmat.c
 * (see iface.h). The push constants, bindings and shared spec constants are
 * the fused backward's (flash_backward_iface.h: VKA_FB_PUSH, 10 buffers, the
 * dQ dispatch binding a dummy in dV's slot), so src/ops/flash_backward.c
 * dispatches them as its own gradient kernels. */
#ifndef VKA_FLASH_BACKWARD_COOPMAT_IFACE_H
#define VKA_FLASH_BACKWARD_COOPMAT_IFACE_H

#include "flash_backward_iface.h"

/* VKA_FB_SPEC_WG: 32 per warp of 16 keys (dK, dV) or query rows (dQ);
 * VKA_FB_SPEC_TILE: query rows (dK, dV) or keys (dQ) per tile, a multiple
 * of 16; VKA_FB_SPEC_DK .. UNIFORM_ROWS as the other kernels. */
#define VKA_FBC_SPEC_KV 12    /* bool: the dK, dV kernel; else dQ */
#define VKA_FBC_SPEC_FAULT 13 /* bool: the emulation's test fault (coopmat_frag.glsl) */
#define VKA_FBC_N_SPEC 14

#endif /* VKA_FLASH_BACKWARD_COOPMAT_IFACE_H */
