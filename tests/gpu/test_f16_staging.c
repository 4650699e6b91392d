/* An f16 MultiHeadAttention (desc.dtype VKATTN_DTYPE_F16, Keras use_gate,
 * RoPE, QK-norm and sinks on, f16 io) runs its f16 tensors through native f16
 * kernels, never through f32 scratch (ops/half_stage.h's conversion,
 * shaders/half_convert.comp), where the device has 16-bit storage: the
 * forward (projections, QK-norm and RoPE, head split, fused SDPA, merge,
 * gate), the backward with f16 weight gradients (their f32 sums over rows
 * rounded into them by grad_reduce_f16 or the matmul's store) and a cached
 * decode step (KV append and the split-K decode read of an f16 cache); the
 * backward on the chained SDPA path (call->path UNFUSED) and a
 * GroupedQueryAttention backward (4 query heads on 2 key/value heads, the
 * same options) too. Each is run in a context of its own that logs the
 * pipelines it creates; a "half_convert" pipeline is a staging pass.
 * Accuracy is the other f16 tests' (test_mha.c, test_mha_cache.c,
 * test_mha_rope.c, test_mha_backward.c, test_gqa_backward.c); here only which
 * kernels ran, and that each f16 weight gradient is its f32 twin (the same
 * backward with f32 weight gradients) rounded once: within one f16 spacing,
 * max(2^-10 |f32|, 2^-24), of it.
 * Without 16-bit storage (the mobile-min pass) the packed path stages by
 * design: the runs are then only checked to succeed. Both tunings. Small
 * shapes: about 5 s of CPU on lavapipe. Before this test, the gate staged 3
 * passes per forward and per cached step, QK-norm with RoPE 3 per query and
 * per key heads (x in and out, the norm weight), sinks 2 per forward (out
 * in and back), and the backward 6 (the gate's x and g, the fused
 * backward's q, k, v and out) and 2 per heads tensor for the QK-norm
 * gradient (x and the norm weight); f16 weight gradients 1 per bias and per
 * norm weight (the f32 sums rounded out); the chained SDPA backward 3 (q, k
 * and v). */
#include "harness.h"

#include <vkattn/gqa.h>
#include <vkattn/gqa_host.h>
#include <vkattn/half.h>
#include <vkattn/mha.h>

#include <math.h>

#include <stdio.h>
#include <stdlib.h>

#define B 2u
#define T 5u
#define H 2u
#define DK 8u
#define DV 6u
#define W 12u
#define DOUT 10u
#define CAP 16u
#define GQA_HEADS 4u /* query heads, on H key/value heads */

typedef struct layer {
    vkattn_mha_desc desc;
    float *arrays[13];
    vkattn_mha *mha;
    vkattn_gqa *gqa; /* a GroupedQueryAttention instead (default weights) */
    uint32_t out_dim;
} layer;

/* use_gate, QK-norm, the rotary embedding and attention sinks */
static void layer_init(vkattn_context *ctx, layer *m, bool gqa)
{
    *m = (layer){.out_dim = gqa ? W : DOUT};
    if (gqa) {
        const vkattn_gqa_desc gd = {.head_dim = DK, .num_query_heads = GQA_HEADS,
                                    .num_key_value_heads = H, .query_width = W,
                                    .value_width = W, .dtype = VKATTN_DTYPE_F16,
                                    .use_gate = true, .use_rope = true, .use_qk_norm = true,
                                    .use_sinks = true};
        TH_OK(ctx, vkattn_gqa_create(ctx, &gd, &m->gqa));
        return;
    }
    m->desc = (vkattn_mha_desc){.num_heads = H, .key_dim = DK, .value_dim = DV,
                                .query_width = W, .value_width = W, .output_dim = DOUT,
                                .dtype = VKATTN_DTYPE_F16, .use_gate = true,
                                .use_rope = true, .use_qk_norm = true,
                                .use_sinks = true};
    const size_t n[13] = {W * H * DK, H * DK,     W * H * DK, H * DK, W * H * DV, H * DV,
                          H * DV * DOUT, DOUT,    W * H * DV, H * DV, DK,         DK, H};
    for (int i = 0; i < 13; i++) {
        m->arrays[i] = tu_floats(n[i]);
        tu_fill_uniform(m->arrays[i], n[i], i < 10 ? -0.3f : 0.5f, i < 10 ? 0.3f : 1.5f);
    }
    float **a = m->arrays;
    const vkattn_mha_weights w = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                                  a[10], a[11], a[12]};
    TH_OK(ctx, vkattn_mha_create(ctx, &m->desc, &m->mha));
    TH_OK(ctx, vkattn_mha_set_weights(m->mha, &w));
}

static void layer_free(layer *m)
{
    vkattn_mha_destroy(m->mha);
    vkattn_gqa_destroy(m->gqa);
    for (int i = 0; i < 13; i++)
        free(m->arrays[i]);
}

static vkattn_result layer_record(layer *m, const vkattn_layer_call *call,
                                  const vkattn_layer_io *io)
{
    return m->gqa ? vkattn_gqa_record(m->gqa, VKATTN_RUN_NOW, call, io)
                  : vkattn_mha_record(m->mha, VKATTN_RUN_NOW, call, io);
}

static vkattn_result layer_backward(layer *m, const vkattn_layer_call *call,
                                    const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                    const vkattn_mha_weight_tensors *gw)
{
    return m->gqa ? vkattn_gqa_backward_record(m->gqa, VKATTN_RUN_NOW, call, io, g, gw)
                  : vkattn_mha_backward_record(m->mha, VKATTN_RUN_NOW, call, io, g, gw);
}

/* The weight tensors as an array (the struct is 13 tensor pointers). */
#define N_W 13
_Static_assert(sizeof(vkattn_mha_weight_tensors) == N_W * sizeof(vkattn_tensor *),
               "vkattn_mha_weight_tensors: one tensor pointer per weight");
typedef union weight_set {
    vkattn_mha_weight_tensors w;
    vkattn_tensor *t[N_W];
} weight_set;

/* A gradient tensor per weight of the layer: of the weight's own type (f16,
 * the sinks f32) or all f32. */
static weight_set weight_grads(vkattn_context *ctx, layer *m, bool f32)
{
    weight_set own = {0}, g = {0};
    TH_OK(ctx, m->gqa ? vkattn_gqa_get_weight_tensors(m->gqa, &own.w)
                      : vkattn_mha_get_weight_tensors(m->mha, &own.w));
    for (int i = 0; i < N_W; i++)
        if (own.t[i]) {
            const vkattn_tensor_info info = vkattn_tensor_get_info(own.t[i]);
            g.t[i] = th_typed_tensor(ctx, info.count, f32 ? VKATTN_DTYPE_F32 : info.desc.dtype,
                                     NULL);
        }
    return g;
}

/* Each gradient of `half` is its f32 twin's rounded once: within one f16
 * spacing of it (2^-10 of it, 2^-24 among the subnormals), whatever the
 * device's rounding mode. Frees both sets. */
static void check_rounded(weight_set *half, weight_set *f32, const char *what)
{
    for (int i = 0; i < N_W; i++) {
        if (!half->t[i])
            continue;
        const size_t n = vkattn_tensor_get_info(half->t[i]).count;
        float *h = th_download(half->t[i], n), *f = th_download(f32->t[i], n);
        for (size_t e = 0; e < n; e++)
            if (!TU_WITHIN(fabs((double)h[e] - f[e]), fmax(fabs((double)f[e]) / 1024, 0x1p-24)))
                fail_msg("%s: weight gradient %d element %zu is %.9g, its f32 twin %.9g: not "
                         "one rounding of it",
                         what, i, e, (double)h[e], (double)f[e]);
        free(h), free(f);
        vkattn_tensor_destroy(half->t[i]), vkattn_tensor_destroy(f32->t[i]);
    }
}

static vkattn_tensor *f16_tensor(vkattn_context *ctx, size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1);
    vkattn_tensor *t = th_typed_tensor(ctx, n, VKATTN_DTYPE_F16, x);
    free(x);
    return t;
}

enum { FORWARD, BACKWARD, DECODE, GQA_BACKWARD, CHAINED_BACKWARD };
static const char *const run_names[] = {"MultiHeadAttention forward",
                                        "MultiHeadAttention backward",
                                        "MultiHeadAttention cached decode",
                                        "GroupedQueryAttention backward",
                                        "MultiHeadAttention backward (chained SDPA)"};

/* The backward after the kept forward, twice: f16 weight gradients, then f32
 * ones for check_rounded. */
static void run_backward(vkattn_context *ctx, layer *m, const vkattn_layer_call *call,
                         const vkattn_layer_io *io, const char *what)
{
    /* the input gradients f32 (the layers' gradient type); the kept
     * forward's tensors f16 */
    const size_t nx = (size_t)B * T * W, no = (size_t)B * T * m->out_dim;
    float *g = tu_floats(no);
    tu_fill_uniform(g, no, -1, 1);
    vkattn_tensor *dy = th_tensor(ctx, no, g), *dq = th_tensor(ctx, nx, NULL);
    vkattn_tensor *dv = th_tensor(ctx, nx, NULL);
    const vkattn_layer_grads grads = {.grad_output = dy, .grad_query = dq, .grad_value = dv};
    weight_set half = weight_grads(ctx, m, false), full = weight_grads(ctx, m, true);
    TH_OK(ctx, layer_backward(m, call, io, &grads, &half.w));
    TH_OK(ctx, layer_backward(m, call, io, &grads, &full.w));
    check_rounded(&half, &full, what);
    free(g);
    vkattn_tensor_destroy(dy), vkattn_tensor_destroy(dq), vkattn_tensor_destroy(dv);
}

/* One of the runs in a fresh logged context; whether it staged. */
static bool staged_in(int what, bool *native16, bool *full)
{
    th_pipelines seen;
    const vkattn_context_advanced adv = th_advanced();
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    *native16 = info.storage_buffer_16bit;
    layer m;
    layer_init(ctx, &m, what == GQA_BACKWARD);
    const bool backward = what == BACKWARD || what == GQA_BACKWARD || what == CHAINED_BACKWARD;
    const uint32_t tq = what == DECODE ? 1 : T;
    vkattn_tensor *x = f16_tensor(ctx, (size_t)B * tq * W);
    vkattn_tensor *out = f16_tensor(ctx, (size_t)B * tq * m.out_dim);
    vkattn_layer_call call = {.batch = B, .tq = tq, .tv = tq, .keep_for_backward = backward};
    if (what == CHAINED_BACKWARD)
        call.path = VKATTN_SDPA_UNFUSED;
    vkattn_layer_io io = {.query = x, .value = x, .output = out};
    if (what == DECODE) {
        /* a prefill fills the f16 cache first, then one step is counted */
        const vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = CAP,
                                         .key_dim = DK, .value_dim = DV,
                                         .dtype = VKATTN_DTYPE_F16};
        vkattn_kv_cache *cache;
        TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
        vkattn_tensor *px = f16_tensor(ctx, (size_t)B * T * W);
        vkattn_tensor *pout = f16_tensor(ctx, (size_t)B * T * DOUT);
        vkattn_layer_call pc = {.batch = B, .tq = T, .causal = VKATTN_CAUSAL_TOP_LEFT};
        vkattn_layer_io pio = {.query = px, .value = px, .output = pout};
        TH_OK(ctx, vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &pc, &pio, cache));
        call = (vkattn_layer_call){.batch = B, .tq = 1, .causal = VKATTN_CAUSAL_TOP_LEFT};
        TH_OK(ctx, vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, cache));
        vkattn_tensor_destroy(px), vkattn_tensor_destroy(pout);
        vkattn_kv_cache_destroy(cache);
    } else {
        TH_OK(ctx, layer_record(&m, &call, &io));
    }
    if (backward)
        run_backward(ctx, &m, &call, &io, run_names[what]);
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(out);
    layer_free(&m);
    th_assert_validation_clean();
    vkattn_context_destroy(ctx);
    const bool staged = th_pipeline_seen(&seen, "half_convert", false);
    *full = seen.count == sizeof seen.names / sizeof seen.names[0];
    print_message("f16 %s: %s (%u pipelines)\n", run_names[what],
                  staged ? "staged through f32 scratch" : "no staging pass", seen.count);
    return staged;
}

static void check(int what)
{
    bool native16, seen_full;
    const bool staged = staged_in(what, &native16, &seen_full);
    if (seen_full)
        fail_msg("more pipelines than th_pipelines holds: a staging pass could be missed");
    if (native16 && staged)
        fail_msg("the f16 %s staged through f32 scratch (half_convert) on a device with 16-bit "
                 "storage",
                 run_names[what]);
}

/* one cmocka test per run: its name says which */
#define STAGING_TEST(name, what)                                                                   \
    static void name(void **state)                                                             \
    {                                                                                          \
        (void)state;                                                                           \
        check(what);                                                                           \
    }
STAGING_TEST(test_forward, FORWARD)
STAGING_TEST(test_backward, BACKWARD)
STAGING_TEST(test_decode, DECODE)
STAGING_TEST(test_gqa_backward, GQA_BACKWARD)
STAGING_TEST(test_chained_backward, CHAINED_BACKWARD)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward),
        cmocka_unit_test(test_backward),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_gqa_backward),
        cmocka_unit_test(test_chained_backward),
    };
    int failed = cmocka_run_group_tests_name("f16 staging", tests, th_setup, th_teardown);
    /* the GPU tuning's fused backward and decode kernels differ */
    return failed + cmocka_run_group_tests_name("f16 staging, GPU tuning", tests,
                                                th_setup_gpu_tuning, th_teardown_gpu_tuning);
}
