/* What `attnbench bench <layer>` knows of a layer before it makes one: the
 * sizes and flags of its command line (ops_layers.c fills it in), for the
 * kinds' bench hooks (layer_kind.h) to make a desc, weights and a flop count
 * of. */
#ifndef ATTNBENCH_LAYER_BENCH_H
#define ATTNBENCH_LAYER_BENCH_H

#include "layer_kind.h"
#include "ops.h"   /* ab_dims */
#include "sizes.h" /* AB_FITS, for the kinds' size checks */

typedef struct ab_layer_bench {
    ab_dims d;         /* heads: 8 for the multi-head layers, else 1; GQA's dk is head_dim */
    uint32_t units;    /* --units (BahdanauAttention), default --dk */
    uint32_t dmodel;   /* mha, gqa: --dmodel, default --heads x --dk */
    uint32_t kv_heads; /* gqa: --kv-heads, default --heads */
    uint32_t window;   /* mha, gqa: --window, 0 = none */
    bool gate;         /* mha, gqa: --gate (Keras use_gate) */
    /* mha, gqa: --rope [--rope-layout, --rotary-dim], --qk-norm, --softcap, --sinks */
    bool rope, qk_norm, sinks;
    vkattn_rope_params rope_params;
    float softcap;
    float dropout;
    vkattn_dtype dtype; /* the layer's: f16 with --fp16 */
} ab_layer_bench;

/* Where a kind's bench_weights gets its host arrays: make gives weight slot
 * `slot`, n floats uniform in +-sqrt(3 / fan_in) (NULL on host out of
 * memory), kept by the bench and counted in floats. */
typedef struct ab_weight_maker ab_weight_maker;
struct ab_weight_maker {
    float *(*make)(ab_weight_maker *m, int slot, size_t n, uint32_t fan_in);
    size_t floats; /* the weights' floats, for the bytes a call moves */
};

#endif
