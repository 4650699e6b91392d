/* The MultiHeadAttention layer's private state, shared by mha.c (recording a
 * call) and mha_weights.c (create, destroy, weights). */
#ifndef VKA_MHA_INTERNAL_H
#define VKA_MHA_INTERNAL_H

#include "vkattn/mha.h"

#include "layers/layer_util.h"
#include "shape/mha_shape.h"

/* Scratch tensors of one call; sized per call, grown on demand. */
typedef enum mha_slot {
    MHA_Q_PROJ,     /* (B, Tq, H*dk) query projection */
    MHA_K_PROJ,     /* (B, Tv, H*dk) */
    MHA_V_PROJ,     /* (B, Tv, H*dv) */
    MHA_Q_HEADS,    /* (B, H, Tq, dk) */
    MHA_K_HEADS,    /* (B, H, Tv, dk) */
    MHA_V_HEADS,    /* (B, H, Tv, dv) */
    MHA_CTX_HEADS,  /* (B, H, Tq, dv) SDPA output */
    MHA_CTX_MERGED, /* (B, Tq, H*dv) */
    MHA_MASK,       /* (B|1, H|1, Tq|1, Tv) mask for the ops (vka_layer_mask_record) */
    MHA_SLOTS
} mha_slot;

/* One projection's weights on the device: kernel (D_in, n), bias (n) or NULL. */
typedef struct mha_dense {
    vkattn_tensor *kernel, *bias;
    uint64_t kernel_count, bias_count;
} mha_dense;

struct vkattn_mha {
    vkattn_context *ctx;
    vka_mha_dims d;
    vkattn_dtype dtype; /* of the weights and the activation scratch (not the mask's) */
    mha_dense query, key, value, output;
    vka_scratch scratch[MHA_SLOTS]; /* grown on demand, replaced ones kept until destroy */
};

#endif /* VKA_MHA_INTERNAL_H */
