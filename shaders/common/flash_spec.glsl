// The specialization constants every fused attention forward kernel shares
// (flash_body.glsl, flash_tiled_body.glsl, flash_coopmat_body.glsl), with the
// numbers of flash_iface.h, which the other kernels' interfaces keep: what to
// mask, drop and write. Each kernel declares its own tile and type constants.
// Include after flash_iface.h.
#ifndef VKA_FLASH_SPEC_GLSL
#define VKA_FLASH_SPEC_GLSL

layout(constant_id = VKA_FLASH_SPEC_CAUSAL) const uint CAUSAL = 0;
layout(constant_id = VKA_FLASH_SPEC_HAS_VALUE_MASK) const bool HAS_VALUE_MASK = false;
layout(constant_id = VKA_FLASH_SPEC_HAS_MASK) const bool HAS_MASK = false;
layout(constant_id = VKA_FLASH_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_FLASH_SPEC_DROPOUT) const bool DROPOUT = false;
layout(constant_id = VKA_FLASH_SPEC_UNIFORM_ROWS) const bool UNIFORM_ROWS = false;
layout(constant_id = VKA_FLASH_SPEC_WRITE_LSE) const bool WRITE_LSE = false;

#endif
