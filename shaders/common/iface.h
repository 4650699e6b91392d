/* The interface of a kernel, written once for both sides: each
 * shaders/common/<kernel>_iface.h is included by the shader (GLSL) and by the
 * op that dispatches it (C, src/ops/). It defines
 *   VKA_<K>_SPEC_<NAME>  specialization constant ids (constant_id and
 *                        local_size_x_id in GLSL, spec[] indices in C),
 *                        an operand X's element type is VKA_<K>_SPEC_X_TYPE,
 *                        valued VKA_ELEM_* (elem_iface.h),
 *   VKA_<K>_N_SPEC       how many there are,
 *   VKA_<K>_PUSH         the push-constant members, one list for the GLSL
 *                        block and the C struct,
 *   VKA_<K>_PUSH_SIZE    its size in bytes, checked in C where
 *                        VKA_PUSH_STRUCT (src/vk/pipeline.h) declares the struct.
 * Push constants hold 32-bit scalars only, so C and std430 lay them out the
 * same way. Comments in these headers are C comments: both preprocessors
 * accept them, also inside a continued macro. */
#ifndef VKA_IFACE_H
#define VKA_IFACE_H

#ifdef __STDC_VERSION__ /* C */
#include <stdint.h>
#define VKA_UINT uint32_t
#else /* GLSL */
#define VKA_UINT uint
#endif
#define VKA_FLOAT float

#endif /* VKA_IFACE_H */
