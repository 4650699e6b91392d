/* The ops and layers attnbench can run: one table entry each. An entry sets up
 * random inputs for the flags given, records one call into a command buffer
 * (what gets timed), and checks the call against the CPU reference. */
#ifndef ATTNBENCH_OPS_H
#define ATTNBENCH_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include <vkattn/vkattn.h>

#include "args.h"

/* What a set-up call is, for reports. */
typedef struct ab_op_info {
    bool matmul_shape; /* shape is {batch, m, n, k}, else {batch, heads, tq, tv, dk, dv} */
    uint32_t batch, heads, tq, tv, dk, dv;
    uint32_t kv_heads; /* decode; 0 = not reported */
    uint32_t m, n, k;
    const char *path; /* "fused" / "unfused" for ops that choose, else NULL */
    bool backward;    /* --backward: the call computes gradients */
    bool train_step;  /* --train-step: the call is a whole training step */
    double flops;     /* textbook flops of one call (docs/ATTNBENCH.md) */
    double bytes;     /* fewest bytes one call must read and write */
    /* The call's output, for --frame-budget-us's identity check; NULL: not
     * checked (backward and training calls, ops that do not set it). */
    vkattn_tensor *output;
    uint64_t output_count;
} ab_op_info;

typedef struct ab_op {
    const char *name;
    const char *summary;
    uint32_t flags; /* AB_F_* flags the op accepts */
    /* max_rel_err bound for --check: the op's stated accuracy (the table in
     * ops.c and docs/ATTNBENCH.md). */
    double bound;
    /* The bound with --fp16 (f16 tensors), for ops with AB_F_FP16 in their
     * flags (without it --fp16 is a usage error); with --dtype bf16 likewise,
     * AB_F_BF16. */
    double bound_fp16, bound_bf16;
    /* The bound with --backward or --train-step where it differs from
     * `bound`; 0 = `bound`. */
    double bound_backward;
    /* Creates inputs/outputs (and layer objects) for the flags in *a; fills
     * *info. Returns an exit status (usage errors: ATTNBENCH_EXIT_USAGE). */
    int (*setup)(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info);
    /* Records one call (the timed work). */
    vkattn_result (*record)(void *state, VkCommandBuffer cmd);
    /* The op's or layer's VKATTN_PREPARE recording of that same call: creates ahead the
     * pipelines, scratch and descriptor sets record would create on first
     * use; records nothing (bench --cold --prepare). */
    vkattn_result (*prepare)(void *state);
    /* Poisons the outputs, runs one call, compares every output with the CPU
     * reference: *max_rel_err = the largest of their max_rel_err. Returns an
     * exit status for runtime failures, 0 otherwise. */
    int (*check)(vkattn_context *ctx, void *state, double *max_rel_err);
    void (*destroy)(void *state); /* NULL-safe */
    /* Usage errors of the op's own that need no device (decode's --tq limit),
     * checked before a context is made: nonzero after a message on stderr.
     * NULL: none. */
    int (*check_args)(const ab_args *a);
    /* The bound with --backward and --fp16 together; 0: the op's --backward
     * has no f16 path (--fp16 with it is a usage error). */
    double bound_backward_fp16;
    /* The same with --dtype bf16 (0: no bf16 backward yet). */
    double bound_backward_bf16;
} ab_op;

/* The --check bound of op for data tensors of dtype, of the gradients with
 * `grads` (--backward, --train-step). */
double ab_op_bound(const ab_op *op, vkattn_dtype dtype, bool grads);

/* The op of that name in this build, or NULL. */
const ab_op *ab_find_op(const char *name);
/* All ops in this build, NULL-terminated. */
const ab_op *const *ab_all_ops(void);

/* The attention shape of the flags, with the defaults of docs/ATTNBENCH.md:
 * batch 1, heads `default_heads`, tq 512, tv = tq, dk 64, dv = dk. Returns
 * ATTNBENCH_EXIT_USAGE (message printed) if a given size is 0. */
typedef struct ab_dims {
    uint32_t batch, heads, tq, tv, dk, dv;
} ab_dims;
int ab_attention_dims(const char *op, const ab_args *a, uint32_t default_heads, ab_dims *d);

/* "fused" / "unfused": the SDPA path a call with these params takes (the
 * library's choice for VKATTN_SDPA_AUTO); NULL if the params are refused. */
const char *ab_sdpa_path_name(vkattn_context *ctx, const vkattn_sdpa_params *p);

/* bench sdpa --backward (ops_sdpa_backward.c): the backward of the forward
 * `fwd` describes, with its own inputs drawn from a->seed (f16 data tensors
 * with a->fp16, a value mask with a->mask_ratio); the sdpa op forwards to
 * these. */
typedef struct ab_sdpa_bwd ab_sdpa_bwd;
int ab_sdpa_backward_setup(vkattn_context *ctx, const vkattn_sdpa_params *fwd, const ab_args *a,
                           ab_sdpa_bwd **out, ab_op_info *info);
vkattn_result ab_sdpa_backward_record(void *state, VkCommandBuffer cmd);
vkattn_result ab_sdpa_backward_prepare(ab_sdpa_bwd *s);
int ab_sdpa_backward_check(vkattn_context *ctx, ab_sdpa_bwd *s, double *err);
void ab_sdpa_backward_destroy(ab_sdpa_bwd *s);

/* bench attention | additive_attention | bahdanau | mha --backward, and mha
 * --train-step (ops_layers_backward.c): the gradients of the layer the
 * forward bench set up, on its tensors. */
struct ab_layer_any;
struct ab_buf;
typedef struct ab_layer_fwd {
    vkattn_context *ctx;
    struct ab_layer_any *layer; /* created, weights set; outlives the backward state */
    vkattn_layer_call call;     /* the forward's call */
    struct ab_buf *q, *k, *v, *vmask, *out; /* the forward's tensors (borrowed) */
    double proj_flops, core_flops;          /* of one forward (docs/ATTNBENCH.md) */
    vkattn_dtype dtype; /* the layer's (--dtype); dL/d(output) and the gradients too */
} ab_layer_fwd;
typedef struct ab_layer_bwd ab_layer_bwd;
int ab_layer_backward_setup(const ab_layer_fwd *f, bool train_step, uint64_t seed,
                            ab_layer_bwd **out, ab_op_info *info);
vkattn_result ab_layer_backward_record(void *state, VkCommandBuffer cmd);
vkattn_result ab_layer_backward_prepare(ab_layer_bwd *s);
int ab_layer_backward_check(vkattn_context *ctx, ab_layer_bwd *s, double *err);
void ab_layer_backward_destroy(ab_layer_bwd *s);

/* Per family (ops_*.c) */
extern const ab_op ab_op_matmul;
extern const ab_op ab_op_softmax, ab_op_additive, ab_op_heads, ab_op_dropout, ab_op_sdpa;
extern const ab_op ab_op_decode;
extern const ab_op ab_op_attention, ab_op_additive_attention, ab_op_bahdanau, ab_op_mha,
    ab_op_gqa;

#endif
