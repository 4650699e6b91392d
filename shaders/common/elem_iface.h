/* Element-type codes: the values of the kernels' *_TYPE specialization
 * constants (one per operand; shaders/common/elem_type.glsl reads them). The
 * host sets each from vka_dtype_spec_code (src/core/dtype.h), whose table
 * holds the same numbers: core/ sits below the shaders' interface headers, so
 * it cannot include this one (a mismatch fails every f16 GPU test). The codes
 * are 32-bit spec data: 0 and 1 are what the *_F16 booleans were. */
#ifndef VKA_ELEM_IFACE_H
#define VKA_ELEM_IFACE_H

#define VKA_ELEM_F32 0u
#define VKA_ELEM_F16 1u
/* bf16 (issue 35, item 3): read and written by the packed paths only */
#define VKA_ELEM_BF16 2u

#endif /* VKA_ELEM_IFACE_H */
