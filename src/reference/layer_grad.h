/* What the layer backward references share (vkattn_reference_X_backward in
 * vkattn/<layer>_host.h): the attention core "scores -> masked softmax ->
 * dropout -> W @ V" forward and backward in double, the single-head layers' io checks and
 * mask setup, overlap checks of gradient arrays, and double scratch. Separate
 * from the op-level backward references on purpose: the layers recompute
 * everything in double, the ops work on the caller's f32 tensors. No Vulkan
 * header may be included here. */
#ifndef VKA_REFERENCE_LAYER_GRAD_H
#define VKA_REFERENCE_LAYER_GRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reference/layer_ref.h"
#include "reference/ref_internal.h"
#include "vkattn/reference_backward.h"

/* ---------------------------------------------------------------- scratch */

/* *out = n zeroed doubles (calloc), failing with OUT_OF_HOST_MEMORY naming
 * `what`; n = 0 gives a valid 1-element allocation. */
vkattn_result vka_grad_alloc(const char *fn, const char *what, uint64_t n, double **out);

/* dst[i] = src[i] widened; src NULL leaves dst untouched. */
void vka_grad_widen(const float *src, size_t n, double *dst);

/* dst[i] = (float)src[i] when dst is not NULL. */
void vka_grad_store(const double *src, size_t n, float *dst);

/* out (rows, n) += a (rows, k) @ b (k, n), or with transposes: the small
 * dense products every layer backward needs. ta: a is stored (k, rows);
 * tb: b is stored (n, k). */
void vka_grad_matmul_acc(size_t rows, size_t n, size_t k, const double *a, bool ta,
                         const double *b, bool tb, double *out);

/* ---------------------------------------------------------------- overlap */

/* A host array as a byte range, for the overlap checks: `count` floats at p
 * (p NULL = absent, never overlaps). */
typedef struct vka_grad_span {
    const char *name;
    const void *p;
    uint64_t count;
} vka_grad_span;

/* Names of spans built from a weight table ("grad_w->query_kernel"). */
typedef char vka_grad_span_name[48];

/* One span per weight of `table` into spans[0 .. table->count): the array
 * of the host weights struct w (NULL: all absent) named prefix + member,
 * with the element count of its shape (axes); a weight a desc with
 * `options` lacks is absent. Returns table->count. */
size_t vka_grad_weight_spans(const vka_weight_table *table, uint32_t options,
                             const uint64_t *axes, const void *w, const char *prefix,
                             vka_grad_span *spans, vka_grad_span_name *names);

/* Fails with INVALID_ARGUMENT "fn: <out> overlaps <other>" when an output
 * span overlaps an input span or another output span. */
vkattn_result vka_grad_check_disjoint(const char *fn, const vka_grad_span *outs, size_t n_outs,
                                      const vka_grad_span *ins, size_t n_ins);

/* ---------------------------------------------------------------- io checks */

/* The first checks of every layer backward: grad_output and io present;
 * then *fwd_call and *fwd_io = the call and io as the forward's io checks
 * must see them: no scores asked for, grad_output in io->output's place (for
 * presence only): the backward writes neither. */
vkattn_result vka_grad_forward_io(const char *fn, const vkattn_layer_call *call,
                                  const vkattn_layer_host_io *io, const float *grad_output,
                                  vkattn_layer_call *fwd_call, vkattn_layer_host_io *fwd_io);

/* Fails with INVALID_ARGUMENT "fn: grad_w is w" when the weight gradients
 * would overwrite the weights they are taken at. */
vkattn_result vka_grad_require_own_grads(const char *fn, const void *w, const void *grad_w);

/* The element counts of a call's host arrays (attention_mask: 0 without one). */
typedef struct vka_grad_io_counts {
    uint64_t query, key, value, query_mask, value_mask, attention_mask, output;
} vka_grad_io_counts;

/* The checks every layer backward makes after its forward's io checks:
 * grad_key only with io->key; no gradient array (the three of g, then the
 * layer's weight gradients `weight_grads`) overlapping an input, a weight
 * (`weights`), grad_output or another gradient. */
vkattn_result vka_grad_check_arrays(const char *fn, const vkattn_layer_host_io *io,
                                    const float *grad_output, const vkattn_layer_host_grads *g,
                                    const vka_grad_io_counts *n, const vka_grad_span *weights,
                                    size_t n_weights, const vka_grad_span *weight_grads,
                                    size_t n_weight_grads);

/* ---------------------------------------------------------------- attention core */

/* One "(B, H, Tq, Tv) logits -> masked softmax -> dropout -> W @ V" core,
 * V (B, H, Tv, dv), as a layer's forward runs it. */
typedef struct vka_grad_core {
    uint32_t batch, heads, tq, tv, dv;
    vkattn_mask_params mask;      /* the forward's softmax masks */
    const float *value_mask;      /* (B, Tv) or NULL */
    const float *attention_mask;  /* stored as mask.mask_broadcast says, or NULL */
    vkattn_dropout_op_params dropout; /* the forward's dropout (heads = this heads) */
    uint32_t sliding_window;      /* the forward's window, 0 = none */
    double softcap;               /* logit soft-capping of s, 0 = off */
    const float *sinks;           /* (H) attention sinks, or NULL */
    double *dsinks;               /* (H) += dL/dsinks by the backward, NULL iff !sinks */
} vka_grad_core;

/* What the core's backward needs of its forward. */
typedef struct vka_grad_core_state {
    double *p;           /* (B, H, Tq, Tv) softmax weights, before dropout */
    double *drop;        /* (B, H, Tq, Tv) 0 or the keep scale; NULL: no dropout */
    unsigned char *live; /* (B, H, Tq): 1 where a key was allowed (weights depend on logits) */
    double *dcap;        /* (B, H, Tq, Tv) d capped / d s, NULL without softcap */
    double *p_sink;      /* (B, H, Tq) the sink's weight, NULL without sinks */
} vka_grad_core_state;

void vka_grad_core_state_free(vka_grad_core_state *st);

/* The forward's weights from logits s (B, H, Tq, Tv) (already scaled): masked
 * softmax row by row (the forward's own row kernel) and the dropout keep mask
 * of the forward's Philox stream. Allocates *st. */
vkattn_result vka_grad_core_forward(const char *fn, const vka_grad_core *c, const double *s,
                                    vka_grad_core_state *st);

/* The core's backward: given v (B, H, Tv, dv) and dout = dL/d(out)
 * (B, H, Tq, dv), ds (B, H, Tq, Tv) = dL/d(logits) (zero on rows that are not
 * live) and dv (B, H, Tv, dv) += dL/dV. */
void vka_grad_core_backward(const vka_grad_core *c, const vka_grad_core_state *st,
                            const double *v, const double *dout, double *ds, double *dv);

/* ---------------------------------------------------------------- tanh scores */

/* The sizes of single-head scores: q (batch, tq, d), k (batch, tv, d), the
 * scores (batch, tq, tv). */
typedef struct vka_grad_score_dims {
    size_t batch, tq, tv, d;
} vka_grad_score_dims;

/* The additive op's tanh scores (vkattn_additive_params) in double,
 *   s_ij = outer * sum_e w_e tanh(inner * (q_ie + k_je))   (w NULL: all 1),
 * as Keras Attention's concat mode (inner = scale, outer =
 * concat_score_weight) and AdditiveAttention (w = its scale vector, inner =
 * outer = 1) score: their forward references both call the additive op. */
void vka_grad_tanh_scores(const vka_grad_score_dims *z, const float *q, const float *k,
                          const float *w, double inner, double outer, double *s);

/* Their backward given ds = dL/ds: dq, dk += dL/dq, dL/dk, and each when not
 * NULL: dw[e] += dL/dw_e, *d_inner += dL/d(inner), *d_outer += dL/d(outer). */
void vka_grad_tanh_scores_backward(const vka_grad_score_dims *z, const float *q, const float *k,
                                   const float *w, double inner, double outer, const double *ds,
                                   double *dq, double *dk, double *dw, double *d_inner,
                                   double *d_outer);

/* ---------------------------------------------------------------- single-head layers */

/* The checks every single-head layer backward adds to its forward's desc and
 * weights checks: the call; grad_output present; the forward's io checks
 * (io->output and io->scores ignored); grad_key only with io->key; no
 * gradient array overlapping an input, a weight (`weights`, n_weights spans),
 * grad_output or another gradient (`weight_grads`, n_weight_grads spans, are
 * the layer's weight gradients). */
vkattn_result vka_grad_single_check(const char *fn, const vkattn_layer_call *call,
                                    const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                    const float *grad_output, const vkattn_layer_host_grads *g,
                                    const vka_grad_span *weights, size_t n_weights,
                                    const vka_grad_span *weight_grads, size_t n_weight_grads);

/* The single-head tail's backward: given the raw logits s (B, Tq, Tv) in
 * double, ds (B, Tq, Tv) = dL/ds and dvalue (B, Tv, Dv) = dL/d(value) through
 * W @ V only (both zeroed first). Query-masked rows of grad_output count as 0,
 * masks and dropout as vka_ref_layer_finish applies them. */
vkattn_result vka_grad_single_tail(const char *fn, const vkattn_layer_call *call,
                                   const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                   float rate, const double *s, const float *grad_output,
                                   double *ds, double *dvalue);

/* Writes the input gradients of a single-head layer from dq (B, Tq, Dq), dk
 * (B, Tv, Dk) and dvalue (B, Tv, Dv): without io->key, dk is added into the
 * value's gradient (key = value). */
void vka_grad_single_store(const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                           const vka_layer_widths *w, const vkattn_layer_host_grads *g,
                           const double *dq, const double *dk, double *dvalue);

#endif /* VKA_REFERENCE_LAYER_GRAD_H */
