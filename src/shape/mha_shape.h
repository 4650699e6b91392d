/* Resolving and checking a MultiHeadAttention desc and call once, for the GPU
 * layer (layers/mha.c) and the CPU reference (reference/layer_mha.c) alike, so
 * the two accept exactly the same arguments and fill in the same defaults
 * (the single-head layers keep theirs in shape/layer_shape.h). No Vulkan
 * header may be included here. */
#ifndef VKA_SHAPE_MHA_SHAPE_H
#define VKA_SHAPE_MHA_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"
#include "vkattn/result.h"

#include "shape/weight_init.h"

struct vkattn_context;

/* A desc with every default resolved. */
typedef struct vka_mha_dims {
    uint32_t heads, key_dim, value_dim;
    uint32_t query_dim, key_width, value_width, output_dim;
    uint32_t qk; /* heads * key_dim: width of the projected Q */
    uint32_t hv; /* heads * value_dim: width of the merged context */
    /* Key/value heads: heads for MultiHeadAttention, num_key_value_heads for
     * GroupedQueryAttention (query head n reads key/value head
     * n / (heads / kv_heads)); K and V are projected to kv_heads heads. */
    uint32_t kv_heads;
    uint32_t kv_qk; /* kv_heads * key_dim: width of the projected K */
    uint32_t kv_hv; /* kv_heads * value_dim: width of the projected V */
    bool use_bias;
    float dropout;
    uint32_t sliding_window; /* 0 = none */
    /* Keras use_gate: the context (B, Tq, hv) is multiplied by
     * sigmoid(query @ gate_kernel (query_dim, hv) + gate_bias (hv)) */
    bool use_gate;
    vka_weight_init init; /* the desc's initializers, read at create */
    /* today's open models (vkattn_mha_desc): QK-norm, rotary embedding
     * (defaults resolved: max_wavelength, scaling_factor, rotary_dim set),
     * soft-capping (0 = off) and sinks */
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} vka_mha_dims;

/* Element counts of the Keras-layout weights. */
typedef struct vka_mha_weight_counts {
    uint64_t query_kernel, key_kernel, value_kernel,
        output_kernel;                                      /* (D_in, H|Hkv * d), (H*dv, Dout) */
    uint64_t query_bias, key_bias, value_bias, output_bias; /* H*dk, Hkv*dk, Hkv*dv, Dout */
    uint64_t gate_kernel, gate_bias; /* Dq*H*dv, H*dv; 0 without use_gate */
} vka_mha_weight_counts;

/* Checks desc (caller names the public function in messages); fills *out. */
vkattn_result vka_mha_resolve_desc(struct vkattn_context *ctx, const char *caller,
                                   const vkattn_mha_desc *desc, vka_mha_dims *out);

/* GroupedQueryAttention as the same dims: num_query_heads heads of head_dim
 * (key_dim = value_dim), num_key_value_heads K/V heads, output width the
 * query's. Checks desc under its own field names (caller names the public
 * function). */
vkattn_result vka_gqa_resolve_desc(struct vkattn_context *ctx, const char *caller,
                                   const vkattn_gqa_desc *desc, vka_mha_dims *out);

void vka_mha_weight_counts_of(const vka_mha_dims *d, vka_mha_weight_counts *out);

/* A call with its element counts (all checked for overflow). */
typedef struct vka_mha_call {
    uint32_t batch, tq, tv;
    vkattn_causal causal;
    bool dropout_active;
    uint64_t query, key, value, output;  /* B*Tq*Dq, B*Tv*Dk, B*Tv*Dv, B*Tq*Dout */
    uint64_t query_mask, value_mask;     /* B*Tq, B*Tv */
    uint64_t mask_shared, mask_per_head; /* B*Tq*Tv, B*H*Tq*Tv (= the scores) */
    uint64_t q_proj, k_proj, v_proj;     /* B*Tq*H*dk, B*Tv*Hkv*dk, B*Tv*Hkv*dv */
    uint64_t context;                    /* B*Tq*H*dv */
} vka_mha_call;

/* Checks the call as every layer does (vka_layer_check_call: NULL call, zero
 * sizes, an unknown causal or path), then
 * that its sizes do not overflow, and fills *out. */
vkattn_result vka_mha_resolve_call(struct vkattn_context *ctx, const char *caller,
                                   const vka_mha_dims *d, const vkattn_layer_call *call,
                                   vka_mha_call *out);

/* The SDPA params of a call: heads and kv_heads, scale 1/sqrt(key_dim), masked rows zero,
 * causal, value mask / explicit mask flags, dropout, scores before dropout.
 * mask: how the explicit mask passed is stored, NULL = none. */
void vka_mha_sdpa_params(const vka_mha_dims *d, const vka_mha_call *c,
                         const vkattn_layer_call *call, bool has_value_mask,
                         const vkattn_broadcast *mask, vkattn_sdpa_params *out);

#endif /* VKA_SHAPE_MHA_SHAPE_H */
