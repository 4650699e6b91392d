/* One descriptor per layer kind: what attnbench knows of a Keras layer that
 * differs from kind to kind (its names, its entry points, its weight slots),
 * so layer_any.c and the case reader iterate a table instead of switching on
 * the kind. A new layer is one layer_kind_<name>.c, its member in the enum,
 * the unions and the extern list here, and its row in layer_kinds.c. */
#ifndef ATTNBENCH_LAYER_KIND_H
#define ATTNBENCH_LAYER_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include <vkattn/vkattn.h>

typedef enum ab_layer_kind {
    AB_LAYER_ATTENTION,
    AB_LAYER_ADDITIVE,
    AB_LAYER_BAHDANAU,
    AB_LAYER_MHA,
    AB_LAYER_GQA, /* GroupedQueryAttention */
} ab_layer_kind;
/* not an enumerator, so a switch over the kinds need not name it */
#define AB_LAYER_KINDS (AB_LAYER_GQA + 1)

typedef union ab_layer_desc {
    vkattn_attention_desc att;
    vkattn_additive_attention_desc add;
    vkattn_bahdanau_desc bah;
    vkattn_mha_desc mha;
    vkattn_gqa_desc gqa;
} ab_layer_desc;

typedef union ab_layer_weights {
    vkattn_attention_weights att;
    vkattn_additive_attention_weights add;
    vkattn_bahdanau_weights bah;
    vkattn_mha_weights mha;
    vkattn_gqa_weights gqa;
} ab_layer_weights;

typedef union ab_layer_handle {
    vkattn_attention *att;
    vkattn_additive_attention *add;
    vkattn_bahdanau *bah;
    vkattn_mha *mha;
    vkattn_gqa *gqa;
} ab_layer_handle;

/* Weight gradients travel as up to AB_LAYER_WEIGHTS slots in the order of
 * the kind's weight-tensors struct (vkattn/layer_backward.h): Attention
 * scale, concat_score_weight; AdditiveAttention scale; Bahdanau
 * query_kernel, key_kernel, score_kernel, score_bias; MultiHeadAttention
 * query_kernel, query_bias, key_kernel, key_bias, value_kernel, value_bias,
 * output_kernel, output_bias, gate_kernel, gate_bias, query_norm, key_norm,
 * sinks (GroupedQueryAttention: the same names; slots the desc turns off
 * are empty). NULL = not wanted. */
#define AB_LAYER_WEIGHTS 13

typedef struct ab_weight_slot {
    const char *name; /* the Keras weight name, or the variable name of a scalar */
    size_t n;         /* elements; 0 = the layer has no such weight (no_bias, no_scale) */
    uint32_t rank;    /* of the Keras layout; 0 = a scalar */
    uint32_t dims[3];
} ab_weight_slot;

/* A slot of `rank` dims d0.. (n = 0 when !present). */
ab_weight_slot ab_weight_slot_of(const char *name, bool present, uint32_t rank, uint32_t d0,
                                 uint32_t d1, uint32_t d2);

typedef struct ab_layer_any ab_layer_any; /* layer_any.h */
struct ab_case;                           /* case.h */
struct json_t;                            /* jansson.h */
struct ab_layer_bench;                    /* layer_bench.h */
struct ab_weight_maker;                   /* layer_bench.h */
struct ab_args;                           /* args.h */
struct ab_rounder;                        /* common.h */

typedef struct ab_layer_kind_info {
    ab_layer_kind kind;
    const char *keras_name;  /* the case files' "layer": "BahdanauAttention" */
    const char *keras_alias; /* another spelling the case files accept, or NULL */
    const char *bench_name;  /* the attnbench op: "bahdanau" */
    bool rank2_query;        /* takes a (B, Dq) query as Tq = 1, output (B, Dv) */
    bool multi_head;         /* scores (B, H, Tq, Tv), a rank-4 attention_mask, width c->dout */
    bool sdpa_path;          /* a dot-product layer: bench names the path of its SDPA call */
    uint32_t zero_grad_slots; /* bit i: slot i's gradient is zero up to rounding */
    /* the desc's Keras sliding_window (0 = None) and rotary embedding; NULL:
     * the kind has neither */
    uint32_t (*sliding_window)(const ab_layer_desc *d);
    bool (*uses_rope)(const ab_layer_desc *d);
    /* the handle from desc alone; then the weights set on it */
    vkattn_result (*new_layer)(vkattn_context *ctx, ab_layer_any *l);
    vkattn_result (*set_weights)(ab_layer_any *l);
    void (*destroy)(ab_layer_any *l); /* the handle; none is fine */
    /* cmd may be VKATTN_PREPARE or VKATTN_RUN_NOW, as for the library's record */
    vkattn_result (*record)(const ab_layer_any *l, VkCommandBuffer cmd,
                            const vkattn_layer_call *call, const vkattn_layer_io *io);
    vkattn_result (*reference)(const ab_layer_any *l, const vkattn_layer_call *call,
                               const vkattn_layer_host_io *io);
    /* fills s[0..count-1] for this desc and returns count */
    uint32_t (*weight_slots)(const ab_layer_desc *d, ab_weight_slot s[AB_LAYER_WEIGHTS]);
    vkattn_result (*backward_record)(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g,
                                     vkattn_tensor *const gw[AB_LAYER_WEIGHTS]);
    vkattn_result (*reference_backward)(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g,
                                        float *const gw[AB_LAYER_WEIGHTS]);
    /* a case file's "params" into c->desc and c->w (and c->heads, c->dout of
     * the multi-head kinds); false with err = "params.x: what is wrong" */
    bool (*parse_params)(struct ab_case *c, struct json_t *params, char *err, size_t err_size);
    /* case files' params.weights_file; weights_free NULL = nothing allocated */
    vkattn_result (*weights_load)(vkattn_weights_file *f, const ab_layer_desc *d,
                                  const vkattn_weights_load_desc *load, ab_layer_weights *w);
    void (*weights_free)(ab_layer_weights *w);
    /* a float16 or bfloat16 case, bench --dtype: the desc's dtype r->dtype
     * and each weight the layer stores in it rounded (ab_round_values) to
     * the value the device will hold, for the reference to compute on */
    void (*use_dtype)(ab_layer_desc *d, ab_layer_weights *w, struct ab_rounder *r);
    /* attnbench bench: the desc of the command line's sizes, random weights
     * for it (false on host out of memory) and the flops of one call
     * (docs/ATTNBENCH.md), projections and attention core apart */
    void (*bench_desc)(const struct ab_layer_bench *b, ab_layer_desc *d);
    bool (*bench_weights)(const struct ab_layer_bench *b, ab_layer_weights *w,
                          struct ab_weight_maker *m);
    void (*bench_flops)(const struct ab_layer_bench *b, double *proj, double *core);
    /* bench's sizes beyond the common ones (GQA's --kv-heads): nonzero after
     * a usage message; then the size checks (sizes.h) before and after the
     * common ones: false after a usage message. NULL: none. */
    int (*bench_sizes)(const struct ab_args *a, struct ab_layer_bench *b);
    bool (*bench_widths_fit)(const char *name, const struct ab_layer_bench *b);
    bool (*bench_kernels_fit)(const char *name, const struct ab_layer_bench *b);
} ab_layer_kind_info;

extern const ab_layer_kind_info ab_layer_kind_attention, ab_layer_kind_additive,
    ab_layer_kind_bahdanau, ab_layer_kind_mha, ab_layer_kind_gqa;

/* Every kind, in ab_layer_kind order. */
extern const ab_layer_kind_info *const ab_layer_kinds[AB_LAYER_KINDS];

const ab_layer_kind_info *ab_layer_kind_of(ab_layer_kind kind);
/* The kind of a case file's "layer" (name or alias); NULL = none. */
const ab_layer_kind_info *ab_layer_kind_by_keras_name(const char *name);

#endif
