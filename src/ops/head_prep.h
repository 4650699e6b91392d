/* Internal op for the multi-head layers: QK-norm then the rotary embedding,
 * in place on (B, heads, seq, dim) query or key heads (shaders/head_prep.comp;
 * docs/SEMANTICS.md, "QK-norm and rotary embeddings"). Not public: the
 * layers' references compute the same (src/reference/head_prep.c). */
#ifndef VKA_OPS_HEAD_PREP_H
#define VKA_OPS_HEAD_PREP_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

typedef struct vka_head_prep_params {
    uint32_t batch, heads, seq, dim;
    bool use_norm; /* x / sqrt(mean(x^2) + eps) * w over each row */
    float eps;
    bool use_rope; /* then the rotation of rope (defaults resolved) */
    vkattn_rope_params rope;
    bool inverse;  /* only the rotation, by -angle: its backward (use_norm ignored) */
} vka_head_prep_params;

/* Where the rows' positions come from: none = row t at t; positions = an
 * f32 (B, seq) tensor; lengths = a KV cache's lengths buffer (uint32 per
 * sequence, read on the device when the command runs): row t of sequence b
 * at lengths[b] + t. At most one of the two. */
typedef struct vka_head_prep_io {
    vkattn_tensor *x;         /* (B, heads, seq, dim) f32 or f16, read and written */
    vkattn_tensor *norm;      /* (dim) f32 or f16, with use_norm */
    vkattn_tensor *inv_freq;  /* vka_head_prep_inv_freq, with use_rope */
    vkattn_tensor *positions; /* or NULL */
    vkattn_tensor *lengths;   /* or NULL */
} vka_head_prep_io;

/* *out = a new f32 tensor of rope's rotary_dim/2 inverse frequencies,
 * max_wavelength^(-2i/rotary_dim) / scaling_factor computed in double and
 * rounded once (the caller destroys it). */
vkattn_result vka_head_prep_inv_freq(vkattn_context *ctx, const char *caller,
                                     const vkattn_rope_params *rope, vkattn_tensor **out);

vkattn_result vka_head_prep_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vka_head_prep_params *p, const vka_head_prep_io *io);

/* The backward of vka_head_prep_record (params as its, inverse ignored):
 * grad (B, heads, seq, dim) f32, the prepared heads' gradient, becomes the
 * input's in place: turned back by -angle, then through the norm at x (the
 * forward's input, f32 or f16); with use_norm and grad_norm, grad_norm (dim,
 * f32 or f16) = the norm weight's gradient summed over every row, through
 * dw_rows (f32 scratch of B*heads*seq*dim). io->x is the raw input here. */
typedef struct vka_head_prep_backward_io {
    vka_head_prep_io fwd;
    vkattn_tensor *grad, *dw_rows, *grad_norm;
} vka_head_prep_backward_io;

vkattn_result vka_head_prep_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                            const char *caller, const vka_head_prep_params *p,
                                            const vka_head_prep_backward_io *io);

#endif /* VKA_OPS_HEAD_PREP_H */
