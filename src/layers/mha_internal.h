/* The MultiHeadAttention layer's private state, shared by mha.c (recording a
 * call), mha_backward.c (its gradients) and mha_weights.c (create, destroy,
 * weights). GroupedQueryAttention (gqa.c) is this layer with
 * d.kv_heads < d.heads: K and V are projected to kv_heads heads, which SDPA
 * (and the cache) shares among the query heads. */
#ifndef VKA_MHA_INTERNAL_H
#define VKA_MHA_INTERNAL_H

#include "vkattn/layer_backward.h"
#include "vkattn/mha.h"

#include "layers/layer_util.h"
#include "layers/layer_weights.h"
#include "shape/mha_shape.h"

/* Scratch tensors of one call; sized per call, grown on demand. */
typedef enum mha_slot {
    MHA_Q_PROJ,     /* (B, Tq, H*dk) query projection */
    MHA_K_PROJ,     /* (B, Tv, Hkv*dk); Hkv = d.kv_heads (= H but in GQA) */
    MHA_V_PROJ,     /* (B, Tv, Hkv*dv) */
    MHA_Q_HEADS,    /* (B, H, Tq, dk) */
    MHA_K_HEADS,    /* (B, Hkv, Tv, dk) */
    MHA_V_HEADS,    /* (B, Hkv, Tv, dv) */
    MHA_CTX_HEADS,  /* (B, H, Tq, dv) SDPA output */
    MHA_CTX_MERGED, /* (B, Tq, H*dv) */
    MHA_GATE_PRE,   /* (B, Tq, H*dv) use_gate: query @ gate_kernel + gate_bias */
    MHA_GATED,      /* (B, Tq, H*dv) use_gate: context * sigmoid(gate), the output's input */
    MHA_Q_RAW,      /* (B, H, Tq, dk) backward with QK-norm/RoPE: the heads before them */
    MHA_K_RAW,      /* (B, Hkv, Tv, dk) the same */
    MHA_MASK,       /* (B|1, H|1, Tq|1, Tv) mask for the ops (vka_layer_mask_record) */
    MHA_LSE,        /* (B, H, Tq) the fused SDPA's log-sum-exp, kept for the backward */
    /* the backward's gradients of the above (mha_backward.c) */
    MHA_G_CTX_MERGED, /* (B, Tq, H*dv) */
    MHA_G_CTX_HEADS,  /* (B, H, Tq, dv) */
    MHA_G_Q_HEADS,    /* (B, H, Tq, dk) */
    MHA_G_K_HEADS,    /* (B, H, Tv, dk) */
    MHA_G_V_HEADS,    /* (B, H, Tv, dv) */
    MHA_G_Q_PROJ,     /* (B, Tq, H*dk) */
    MHA_G_K_PROJ,     /* (B, Tv, H*dk) */
    MHA_G_V_PROJ,     /* (B, Tv, H*dv) */
    MHA_G_KEY_IN,     /* (B, Tv, Dv) key path's part of grad_value when key is NULL */
    MHA_G_VALUE_IN,   /* (B, Tv, Dv) value path's part of it */
    MHA_G_GATED,      /* (B, Tq, H*dv) use_gate: of the gated context */
    MHA_G_GATE_PRE,   /* (B, Tq, H*dv) use_gate: of the gate's pre-activation */
    MHA_G_QUERY_Q,    /* (B, Tq, Dq) use_gate: the query path's part of grad_query */
    MHA_G_QUERY_GATE, /* (B, Tq, Dq) use_gate: the gate path's part of it */
    MHA_G_NORM_ROWS,  /* (B, H, T, dk) use_qk_norm: the norm weight's gradient per row */
    MHA_G_SINKS,      /* (H) use_sinks: the sinks' gradient when grad_w->sinks is NULL */
    MHA_SLOTS
} mha_slot;

/* One projection's weights on the device: kernel (D_in, n), bias (n) or NULL. */
typedef struct mha_dense {
    vkattn_tensor *kernel, *bias;
} mha_dense;

/* The dense sublayer `name` (query, key, value, output, gate) of a layer. */
#define MHA_DENSE(layer, name)                                                                     \
    (&(const mha_dense){(layer)->w.name##_kernel, (layer)->w.name##_bias})

/* Everything one call needs, resolved and checked before recording. */
typedef struct mha_plan {
    vka_mha_call c;
    vkattn_tensor *key;  /* io->key, or io->value */
    vka_mask_layout mask; /* of io->attention_mask, if any */
    vkattn_sdpa_params sdpa; /* its mask broadcast set once the mask is recorded */
    bool fused;          /* the SDPA forward takes the fused path */
    vkattn_tensor *t[MHA_SLOTS]; /* this call's scratch; NULL where unused */
} mha_plan;

/* What the last forward recorded with call->keep_for_backward left for the
 * backward: the call and io it had (the backward must match them) and the
 * scratch tensors holding its intermediates. */
typedef struct mha_kept {
    bool valid; /* cleared by any other forward: it overwrites the scratch */
    vkattn_layer_call call;
    bool fused;
    vkattn_tensor *query, *key, *value, *query_mask, *value_mask, *attention_mask;
    bool attention_mask_per_head;
    vkattn_tensor *query_positions, *key_positions;
    vkattn_tensor *q, *k, *v;    /* (B, H, T, d) heads the SDPA read */
    vkattn_tensor *context;      /* (B, H, Tq, dv) the SDPA output */
    vkattn_tensor *merged;       /* (B, Tq, H*dv) the merged context (before the gate) */
    vkattn_tensor *gate_pre;     /* (B, Tq, H*dv) use_gate: the gate before its sigmoid */
    vkattn_tensor *gated;        /* (B, Tq, H*dv) the output projection's input */
    vkattn_tensor *lse;          /* (B, H, Tq) fused path only, else NULL */
    vka_layer_mask mask;         /* the mask the SDPA read */
} mha_kept;

struct vkattn_mha {
    vkattn_context *ctx;
    vka_mha_dims d;
    vkattn_dtype dtype; /* of the weights and the activation scratch (not the mask's) */
    /* the weights, as shape/layer_weights.h's VKA_MHA_WEIGHTS lists them (the
     * gate's only with use_gate, the biases only with use_bias; else NULL) */
    vkattn_mha_weight_tensors w;
    vka_scratch scratch[MHA_SLOTS]; /* grown on demand, replaced ones kept until destroy */
    mha_kept kept;
    vkattn_tensor *rope_inv_freq; /* use_rope: (rotary_dim/2) f32 (ops/head_prep.h) */
};

/* Creates the layer of resolved dims d (vka_mha_resolve_desc or
 * vka_gqa_resolve_desc) and dtype; fn names the public function in messages. */
vkattn_result vka_mha_create_dims(vkattn_context *ctx, const char *fn, const vka_mha_dims *d,
                                  vkattn_dtype dtype, vkattn_mha **out);

/* vkattn_mha_set_weights / get_weights / record, fn naming the public
 * function in messages (GroupedQueryAttention calls them as its own). */
vkattn_result vka_mha_set_weights_as(const char *fn, vkattn_mha *layer,
                                     const vkattn_mha_weights *w);
vkattn_result vka_mha_get_weights_as(const char *fn, const vkattn_mha *layer,
                                     vkattn_mha_weights *w);
vkattn_result vka_mha_record_as(const char *fn, vkattn_mha *layer, VkCommandBuffer cmd,
                                const vkattn_layer_call *call, const vkattn_layer_io *io);

/* vkattn_mha_record_cached, fn naming the public function. */
vkattn_result vka_mha_record_cached_as(const char *fn, vkattn_mha *layer, VkCommandBuffer cmd,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       vkattn_kv_cache *cache);

/* vkattn_mha_backward_record (also dry, VKA_DRY_CMD), fn naming
 * the public function; key and value gradients over d.kv_heads heads. */
vkattn_result vka_mha_backward_as(const char *fn, vkattn_mha *layer, VkCommandBuffer cmd,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io,
                                  const vkattn_layer_grads *g,
                                  const vkattn_mha_weight_tensors *gw);

/* Resolves and checks a forward call (shapes, sizes, the SDPA's own checks)
 * as vkattn_mha_record does, `caller` naming the public function; records
 * and allocates nothing. */
vkattn_result vka_mha_plan_call(vkattn_mha *layer, const char *caller,
                                const vkattn_layer_call *call, const vkattn_layer_io *io,
                                mha_plan *p);

/* mha_head_prep.c: QK-norm and the rotary embedding of the heads. */
bool vka_mha_has_head_prep(const vkattn_mha *layer);
/* io->query_positions/key_positions: only with use_rope, f32 (B, Tq)/(B, Tv). */
vkattn_result vka_mha_check_positions(vkattn_mha *layer, const char *fn,
                                      const vkattn_layer_io *io, const vka_mha_call *c);
/* The query (key false: layer->d.heads) or key heads (d.kv_heads) x
 * (B, heads, seq, key_dim) prepared in place, at positions (f32 (B, seq)),
 * or at a cache's lengths[b] + t, or at t; nothing without either option. */
vkattn_result vka_mha_record_head_prep(vkattn_mha *layer, VkCommandBuffer cmd, const char *fn,
                                       bool key, uint32_t batch, uint32_t seq, vkattn_tensor *x,
                                       vkattn_tensor *positions, vkattn_tensor *lengths);
/* The backward of vka_mha_record_head_prep for the query (key false) or key
 * heads: their raw values recomputed from `in` (the projection again, into
 * proj_tmp then split into raw; into raw with one head), then grad (the
 * prepared heads' gradient, f32) made the raw heads' in place; with
 * use_qk_norm and grad_norm, grad_norm = the norm weight's gradient (through
 * dw_rows, f32 of grad's size). */
vkattn_result vka_mha_record_head_prep_backward(vkattn_mha *layer, VkCommandBuffer cmd,
                                                const char *fn, bool key, uint32_t batch,
                                                uint32_t seq, vkattn_tensor *in,
                                                vkattn_tensor *proj_tmp, vkattn_tensor *raw,
                                                vkattn_tensor *grad, vkattn_tensor *dw_rows,
                                                vkattn_tensor *grad_norm,
                                                vkattn_tensor *positions);
/* At create: the rotary embedding's inverse frequencies (use_rope). */
vkattn_result vka_mha_head_prep_create(vkattn_mha *layer, const char *fn);

#endif /* VKA_MHA_INTERNAL_H */
