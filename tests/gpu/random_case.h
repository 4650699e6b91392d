/* The random cases the SDPA and MultiHeadAttention GPU tests draw, one copy
 * for test_sdpa.c (f32 and f16 rows), test_mha.c (f32 and f16
 * layers) and test_mha_backward.c: every option
 * drawn independently within bounds the test states (smaller ones for the
 * slower f16 and backward tests). What only
 * one test needs (element types, workspaces, its mask kinds) it draws itself.
 * Header-only (static inline), like layer_testlib.h, so each test stays one
 * self-contained executable. All bounds are inclusive. */
#ifndef VKATTN_TEST_RANDOM_CASE_H
#define VKATTN_TEST_RANDOM_CASE_H

#include "harness.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* True with probability 1 / n. */
static inline bool rc_one_in(uint32_t n) { return tu_rand_range(0, n - 1) == 0; }

/* Elements of a (B|1, H|1, Tq|1, Tv) mask or bias of p. */
static inline size_t rc_bcast_count(const vkattn_sdpa_params *p, vkattn_broadcast bc)
{
    return (size_t)(bc.batch ? 1 : p->batch) * (bc.heads ? 1 : p->heads) * (bc.rows ? 1 : p->tq) *
           p->tv;
}

/* Batch and heads broadcast half the time each, rows a third of the time. */
static inline vkattn_broadcast rc_broadcast(void)
{
    return (vkattn_broadcast){tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 2) == 0};
}

/* A sliding window for a (Tq, Tv) call: 1 (the diagonal only) a quarter of
 * the time, at least Tq + Tv (no effect) a quarter, else 2 .. max(Tq, Tv). */
static inline uint32_t rc_random_window(uint32_t tq, uint32_t tv)
{
    const uint32_t r = tu_rand_range(0, 3), longest = tq > tv ? tq : tv;
    return r == 0 ? 1 : r == 1 ? tq + tv + tu_rand_range(0, 5) : tu_rand_range(2, longest + 1);
}

typedef struct rc_sdpa_bounds {
    uint32_t max_batch, max_kv_heads; /* from 1 */
    uint32_t max_t;                   /* Tq and Tv, from 1 */
    uint32_t max_d;                   /* dk from 1, dv from 0 (= dk) */
} rc_sdpa_bounds;

/* SDPA params: 1, 2 or 4 query heads per K/V head; the default scale a third
 * of the time; causal, masked-row policy, value mask, mask and bias (each
 * with a random broadcast) drawn independently; dropout (rate in [0.05, 0.6])
 * half the time, in training 3/4 of the time. return_weights and path are
 * left to the test (false, AUTO). */
static inline vkattn_sdpa_params rc_random_sdpa(const rc_sdpa_bounds *b)
{
    static const uint32_t groups[] = {1, 2, 4};
    const uint32_t g = groups[tu_rand_range(0, 2)], h_kv = tu_rand_range(1, b->max_kv_heads);
    vkattn_sdpa_params p = {
        .batch = tu_rand_range(1, b->max_batch), .heads = g * h_kv, .kv_heads = h_kv,
        .tq = tu_rand_range(1, b->max_t), .tv = tu_rand_range(1, b->max_t),
        .dk = tu_rand_range(1, b->max_d), .dv = tu_rand_range(0, b->max_d),
        .scale = tu_rand_range(0, 2) ? 0.0f : tu_rand_float(-1.5f, 1.5f),
        .mask = {.causal = (vkattn_causal)tu_rand_range(0, 2),
                 .masked_row = (vkattn_masked_row)tu_rand_range(0, 1),
                 .has_value_mask = tu_rand_range(0, 2) == 0,
                 .has_mask = tu_rand_range(0, 2) == 0, .mask_broadcast = rc_broadcast(),
                 .has_bias = tu_rand_range(0, 2) == 0, .bias_broadcast = rc_broadcast()},
        .dropout = {.rate = tu_rand_range(0, 1) ? tu_rand_float(0.05f, 0.6f) : 0.0f,
                    .training = tu_rand_range(0, 3) != 0,
                    .seed = (uint64_t)tu_rand_u32() << 32 | tu_rand_u32(),
                    .offset = tu_rand_u32()},
    };
    return p;
}

/* The side inputs an SDPA call p asks for, each NULL unless it does: bias
 * uniform in [-1, 1], mask and value mask 0/1 with 30% zeros; with batch > 1
 * batch 0's value mask is all zero (every row masked). Sizes in the n*. */
typedef struct rc_sdpa_sides {
    float *bias, *mask, *vm;
    size_t nbias, nmask, nvm;
} rc_sdpa_sides;

static inline rc_sdpa_sides rc_sdpa_side_inputs(const vkattn_sdpa_params *p)
{
    const vkattn_mask_params *m = &p->mask;
    rc_sdpa_sides s = {0};
    if (m->has_bias) {
        s.nbias = rc_bcast_count(p, m->bias_broadcast);
        s.bias = tu_floats(s.nbias);
        tu_fill_uniform(s.bias, s.nbias, -1, 1);
    }
    if (m->has_mask) {
        s.nmask = rc_bcast_count(p, m->mask_broadcast);
        s.mask = tu_floats(s.nmask);
        tu_fill_mask(s.mask, s.nmask, 0.7f);
    }
    if (m->has_value_mask) {
        s.nvm = (size_t)p->batch * p->tv;
        s.vm = tu_floats(s.nvm);
        tu_fill_mask(s.vm, s.nvm, 0.7f);
        if (p->batch > 1)
            memset(s.vm, 0, p->tv * sizeof(float));
    }
    return s;
}

typedef struct rc_mha_bounds {
    uint32_t heads[4];       /* num_heads is one of these */
    uint32_t max_width;      /* query, value, key and output widths, from 1 */
    uint32_t max_t;          /* Tq and Tv, from 1 */
    uint32_t self_one_in;    /* self-attention with probability 1 / self_one_in */
    uint32_t no_bias_one_in; /* no_bias with probability 1 / no_bias_one_in */
    uint32_t dropout_one_in; /* a dropout rate with probability 1 / dropout_one_in */
    float max_dropout;       /* the rate, in [0.1, max_dropout] */
    uint32_t scores_one_in;  /* return_attention_scores with probability 1 / scores_one_in */
} rc_mha_bounds;

/* A MultiHeadAttention desc's widths, its defaults resolved. */
typedef struct rc_mha_widths {
    uint32_t H, dk, dv, Dq, Dk, Dv, Dout;
    uint32_t Hkv; /* key/value heads: H, fewer in GroupedQueryAttention */
} rc_mha_widths;

static inline rc_mha_widths rc_mha_widths_of(const vkattn_mha_desc *d)
{
    return (rc_mha_widths){
        .H = d->num_heads, .dk = d->key_dim, .dv = d->value_dim ? d->value_dim : d->key_dim,
        .Dq = d->query_width, .Dk = d->key_width ? d->key_width : d->value_width,
        .Dv = d->value_width, .Dout = d->output_dim ? d->output_dim : d->query_width,
        .Hkv = d->num_heads,
    };
}

/* A MultiHeadAttention layer and call: which inputs and masks exist. */
typedef struct rc_mha {
    vkattn_mha_desc desc;
    vkattn_layer_call call;
    bool self_attn; /* the query tensor is also value (and key) */
    bool key_given; /* a key tensor of its own */
    bool query_mask, value_mask;
} rc_mha;

/* key_dim 1..12, value_dim 0 (= key_dim) or 1..12, default widths half the
 * time; batch 1..3; causal a third of the time (either alignment); training
 * half the time; path AUTO, UNFUSED or FUSED (UNFUSED when scores are
 * returned); a query mask a third of the time, a value mask half the time. */
static inline rc_mha rc_random_mha(const rc_mha_bounds *b)
{
    rc_mha m = {0};
    vkattn_mha_desc *d = &m.desc;
    d->num_heads = b->heads[tu_rand_range(0, 3)];
    d->key_dim = tu_rand_range(1, 12);
    d->value_dim = rc_one_in(2) ? 0 : tu_rand_range(1, 12);
    d->query_width = tu_rand_range(1, b->max_width);
    m.self_attn = rc_one_in(b->self_one_in);
    if (m.self_attn) {
        d->value_width = d->query_width;
    } else {
        d->value_width = tu_rand_range(1, b->max_width);
        m.key_given = rc_one_in(2);
        if (m.key_given && rc_one_in(2))
            d->key_width = tu_rand_range(1, b->max_width);
    }
    d->output_dim = rc_one_in(2) ? 0 : tu_rand_range(1, b->max_width);
    d->no_bias = rc_one_in(b->no_bias_one_in);
    d->dropout = rc_one_in(b->dropout_one_in) ? tu_rand_float(0.1f, b->max_dropout) : 0.0f;

    vkattn_layer_call *c = &m.call;
    c->batch = tu_rand_range(1, 3);
    c->tq = tu_rand_range(1, b->max_t);
    c->tv = m.self_attn ? c->tq : tu_rand_range(1, b->max_t);
    c->causal = tu_rand_range(0, 2) != 0 ? VKATTN_CAUSAL_NONE
                : rc_one_in(2)           ? VKATTN_CAUSAL_BOTTOM_RIGHT
                                         : VKATTN_CAUSAL_TOP_LEFT;
    c->training = rc_one_in(2);
    c->seed = ((uint64_t)tu_rand_u32() << 32) | tu_rand_u32();
    c->offset = tu_rand_u32();
    c->return_attention_scores = rc_one_in(b->scores_one_in);
    c->path = (vkattn_sdpa_path)tu_rand_range(0, 2);
    if (c->return_attention_scores && c->path == VKATTN_SDPA_FUSED)
        c->path = VKATTN_SDPA_UNFUSED;
    m.query_mask = rc_one_in(3);
    m.value_mask = rc_one_in(2);
    return m;
}

/* Mask params at random (the softmax and SDPA backward tests): the causal
 * kind, the masked-row rule, a value mask, a mask and a bias, each broadcast
 * along each axis or not. */
static inline void rc_random_mask(vkattn_mask_params *m)
{
    m->causal = (vkattn_causal)tu_rand_range(0, 2);
    m->masked_row = (vkattn_masked_row)tu_rand_range(0, 1);
    m->has_value_mask = rc_one_in(2);
    m->has_mask = rc_one_in(2);
    m->mask_broadcast = (vkattn_broadcast){rc_one_in(2), rc_one_in(2), rc_one_in(2)};
    m->has_bias = rc_one_in(2);
    m->bias_broadcast = (vkattn_broadcast){rc_one_in(2), rc_one_in(2), rc_one_in(2)};
}

/* The parts of a layer case's description that every layer test prints. */
static inline void rc_describe_call(char *buf, size_t n, const vkattn_layer_call *c)
{
    snprintf(buf, n, "B=%u Tq=%u Tv=%u causal=%d train=%d scores=%d path=%d", c->batch, c->tq,
             c->tv, (int)c->causal, c->training, c->return_attention_scores, (int)c->path);
}
static inline void rc_describe_mha(char *buf, size_t n, const vkattn_mha_desc *d)
{
    const rc_mha_widths w = rc_mha_widths_of(d);
    snprintf(buf, n, "H=%u dk=%u dv=%u Dq=%u Dk=%u Dv=%u Dout=%u bias=%d drop=%.2f window=%d "
             "gate=%d", w.H, w.dk, w.dv, w.Dq, w.Dk, w.Dv, w.Dout, !d->no_bias,
             (double)d->dropout, (int)d->sliding_window, d->use_gate);
}
static inline void rc_describe_gqa(char *buf, size_t n, const vkattn_gqa_desc *d)
{
    snprintf(buf, n, "h=%u Nq=%u Nkv=%u Dq=%u Dk=%u Dv=%u bias=%d drop=%.2f window=%d gate=%d",
             d->head_dim, d->num_query_heads, d->num_key_value_heads, d->query_width,
             d->key_width ? d->key_width : d->value_width, d->value_width, !d->no_bias,
             (double)d->dropout, (int)d->sliding_window, d->use_gate);
}

#endif /* VKATTN_TEST_RANDOM_CASE_H */
