/* An f16 MultiHeadAttention (desc.dtype VKATTN_DTYPE_F16, Keras use_gate,
 * RoPE, QK-norm and sinks on, f16 io) runs its f16 tensors through native f16
 * kernels, never through f32 scratch (ops/half_stage.h's conversion,
 * shaders/half_convert.comp), where the device has 16-bit storage: the
 * forward (projections, QK-norm and RoPE, head split, fused SDPA, merge,
 * gate), the backward (weight gradients not asked for: f16 ones are summed
 * in f32 and staged out) and a cached decode step (KV append and the
 * split-K decode read of an f16 cache). Each is run in a context of its own that logs the pipelines it
 * creates; a "half_convert" pipeline is a staging pass. Accuracy is the
 * other f16 tests' (test_mha_f16.c, test_mha_cache_f16.c, test_mha_rope.c);
 * here only which kernels ran.
 * Without 16-bit storage (the mobile-min pass) the packed path stages by
 * design: the runs are then only checked to succeed. Both tunings. Small
 * shapes: about 3 s of CPU on lavapipe. Before this test, the gate staged 3
 * passes per forward and per cached step, QK-norm with RoPE 3 per query and
 * per key heads (x in and out, the norm weight), sinks 2 per forward (out
 * in and back), and the backward 6 (the gate's x and g, the fused
 * backward's q, k, v and out) and 2 per heads tensor for the QK-norm
 * gradient (x and the norm weight). */
#include "harness.h"

#include <vkattn/half.h>
#include <vkattn/mha.h>

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

typedef struct layer {
    vkattn_mha_desc desc;
    float *arrays[13];
    vkattn_mha *mha;
} layer;

/* use_gate, QK-norm, the rotary embedding and attention sinks */
static void layer_init(vkattn_context *ctx, layer *m)
{
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
    for (int i = 0; i < 13; i++)
        free(m->arrays[i]);
}

static vkattn_tensor *f16_tensor(vkattn_context *ctx, size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1);
    vkattn_tensor *t = th_typed_tensor(ctx, n, VKATTN_DTYPE_F16, x);
    free(x);
    return t;
}

enum { FORWARD, BACKWARD, DECODE };
static const char *const run_names[] = {"forward", "backward", "cached decode"};

/* One of the three runs in a fresh logged context; whether it staged. */
static bool staged_in(int what, bool *native16, bool *full)
{
    th_pipelines seen;
    const vkattn_context_advanced adv = th_advanced();
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    *native16 = info.storage_buffer_16bit;
    layer m;
    layer_init(ctx, &m);
    const uint32_t tq = what == DECODE ? 1 : T;
    vkattn_tensor *x = f16_tensor(ctx, (size_t)B * tq * W);
    vkattn_tensor *out = f16_tensor(ctx, (size_t)B * tq * DOUT);
    vkattn_layer_call call = {.batch = B, .tq = tq, .tv = tq,
                              .keep_for_backward = what == BACKWARD};
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
        TH_OK(ctx, vkattn_mha_record(m.mha, VKATTN_RUN_NOW, &call, &io));
    }
    if (what == BACKWARD) {
        /* the gradients are f32 (the layers' gradient type); the kept
         * forward's tensors f16 */
        const size_t nx = (size_t)B * T * W, no = (size_t)B * T * DOUT;
        float *g = tu_floats(no);
        tu_fill_uniform(g, no, -1, 1);
        vkattn_tensor *dy = th_tensor(ctx, no, g), *dq = th_tensor(ctx, nx, NULL);
        vkattn_tensor *dv = th_tensor(ctx, nx, NULL);
        const vkattn_layer_grads grads = {.grad_output = dy, .grad_query = dq, .grad_value = dv};
        TH_OK(ctx, vkattn_mha_backward_record(m.mha, VKATTN_RUN_NOW, &call, &io, &grads, NULL));
        free(g);
        vkattn_tensor_destroy(dy), vkattn_tensor_destroy(dq), vkattn_tensor_destroy(dv);
    }
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(out);
    layer_free(&m);
    th_assert_validation_clean();
    vkattn_context_destroy(ctx);
    const bool staged = th_pipeline_seen(&seen, "half_convert", false);
    *full = seen.count == sizeof seen.names / sizeof seen.names[0];
    print_message("f16 MultiHeadAttention %s: %s (%u pipelines)\n", run_names[what],
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

static void test_forward(void **state)
{
    (void)state;
    check(FORWARD);
}

static void test_backward(void **state)
{
    (void)state;
    check(BACKWARD);
}

static void test_decode(void **state)
{
    (void)state;
    check(DECODE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward),
        cmocka_unit_test(test_backward),
        cmocka_unit_test(test_decode),
    };
    int failed = cmocka_run_group_tests_name("f16 staging", tests, th_setup, th_teardown);
    /* the GPU tuning's fused backward and decode kernels differ */
    return failed + cmocka_run_group_tests_name("f16 staging, GPU tuning", tests,
                                                th_setup_gpu_tuning, th_teardown_gpu_tuning);
}
