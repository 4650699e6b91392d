/* Preparing ahead (vkattn_*_prepare): after a prepare, recording the same call,
 * or a smaller one, creates no pipeline, grows no scratch and allocates no
 * descriptor set (vkattn_context_stats unchanged), and the results still match
 * the CPU reference. A prepare records nothing: a poisoned output stays
 * poisoned. Also the pipeline cache round trip: context A saves its cache
 * data, context B starts from it, gives it back non-empty and computes right;
 * foreign bytes are ignored. And bad arguments.
 *
 * Each test starts on a fresh context, so the first prepare must create
 * pipelines (the counts prove the prepare did the work, not a previous test).
 *
 * Bounds as test_mha.c and test_sdpa.c: inputs in [-1, 1], kernels scaled by
 * 1/sqrt(fan-in); max|got - ref| <= 2e-5 * max(max|ref|, 1). */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5

static int fresh_setup(void **state) { return th_setup(state); }
static int fresh_teardown(void **state) { return th_teardown(state); }

static void assert_same_stats(vkattn_context_stats a, vkattn_context_stats b, const char *when)
{
    if (a.pipelines_created != b.pipelines_created || a.scratch_allocations != b.scratch_allocations ||
        a.descriptor_sets_allocated != b.descriptor_sets_allocated)
        fail_msg("%s: pipelines %llu -> %llu, scratch %llu -> %llu, sets %llu -> %llu", when,
                 (unsigned long long)a.pipelines_created, (unsigned long long)b.pipelines_created,
                 (unsigned long long)a.scratch_allocations, (unsigned long long)b.scratch_allocations,
                 (unsigned long long)a.descriptor_sets_allocated,
                 (unsigned long long)b.descriptor_sets_allocated);
}

/* ------------------------------------------------------------ MHA fixture */

typedef struct mha_fix {
    vkattn_mha_desc desc;
    vkattn_mha_weights w;
    float *host[8];
    vkattn_mha *layer;
    uint32_t B, T; /* the largest call */
} mha_fix;

static float *rand_array(size_t n, float scale)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -scale, scale);
    return x;
}

static void mha_fix_open(vkattn_context *ctx, mha_fix *f, uint32_t B, uint32_t T)
{
    *f = (mha_fix){.desc = {.num_heads = 2, .key_dim = 16, .query_width = 32, .value_width = 32},
                   .B = B, .T = T};
    const uint32_t H = 2, dk = 16, D = 32;
    const size_t n[8] = {D * H * dk, H * dk, D * H * dk, H * dk, D * H * dk, H * dk, H * dk * D, D};
    const float s_in = 1.0f / sqrtf((float)D), s_out = 1.0f / sqrtf((float)(H * dk));
    for (int i = 0; i < 8; i++)
        f->host[i] = rand_array(n[i], i == 6 ? s_out : s_in);
    f->w = (vkattn_mha_weights){f->host[0], f->host[1], f->host[2], f->host[3],
                                f->host[4], f->host[5], f->host[6], f->host[7]};
    TH_OK(ctx, vkattn_mha_create(ctx, &f->desc, &f->layer));
    TH_OK(ctx, vkattn_mha_set_weights(f->layer, &f->w));
}

static void mha_fix_close(mha_fix *f)
{
    vkattn_mha_destroy(f->layer);
    for (int i = 0; i < 8; i++)
        free(f->host[i]);
}

/* One self-attention call's inputs and output, on the GPU and the host. */
typedef struct mha_call {
    vkattn_layer_call call;
    float *x, *vm, *ref;
    vkattn_tensor *tx, *tvm, *tout;
    vkattn_layer_io io;
    size_t n_out;
} mha_call;

static void mha_call_open(vkattn_context *ctx, const mha_fix *f, uint32_t B, uint32_t T,
                          bool value_mask, mha_call *c)
{
    *c = (mha_call){.call = {.batch = B, .tq = T, .tv = T}};
    const size_t nx = (size_t)B * T * 32;
    c->n_out = nx;
    c->x = rand_array(nx, 1.0f);
    c->tx = th_tensor(ctx, nx, c->x);
    c->tout = th_tensor(ctx, nx, NULL);
    if (value_mask) {
        c->vm = tu_floats((size_t)B * T);
        tu_fill_mask(c->vm, (size_t)B * T, 0.7f);
        c->vm[0] = 1.0f;
        c->tvm = th_tensor(ctx, (size_t)B * T, c->vm);
    }
    c->io = (vkattn_layer_io){.query = c->tx, .value = c->tx, .value_mask = c->tvm,
                              .output = c->tout};
    c->ref = tu_floats(nx);
    vkattn_layer_host_io hio = {.query = c->x, .value = c->x, .value_mask = c->vm,
                                .output = c->ref};
    assert_int_equal(vkattn_reference_mha(&f->desc, &f->w, &c->call, &hio), VKATTN_SUCCESS);
}

static void mha_call_check(const mha_call *c, const char *what)
{
    float *got = th_download(c->tout, c->n_out);
    TU_ASSERT_CLOSE(got, c->ref, c->n_out, BOUND, what);
    free(got);
}

static void mha_call_close(mha_call *c)
{
    vkattn_tensor_destroy(c->tx);
    vkattn_tensor_destroy(c->tvm);
    vkattn_tensor_destroy(c->tout);
    free(c->x), free(c->vm), free(c->ref);
}

/* Records into the context's one-shot command buffer and submits. */
static void mha_record_run(vkattn_context *ctx, vkattn_mha *layer, const mha_call *c)
{
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_mha_record(layer, cmd, &c->call, &c->io));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
}

static void mha_prepared_path(void **state, vkattn_sdpa_path path)
{
    vkattn_context *ctx = TH_CTX(state);
    mha_fix f;
    mha_fix_open(ctx, &f, 2, 24);
    mha_call big, small;
    mha_call_open(ctx, &f, 2, 24, true, &big);
    mha_call_open(ctx, &f, 1, 9, true, &small);
    big.call.path = small.call.path = path;

    vkattn_context_stats s0 = th_stats(ctx);
    TH_OK(ctx, vkattn_mha_record(f.layer, VKATTN_PREPARE, &big.call, &big.io));
    vkattn_context_stats s1 = th_stats(ctx);
    assert_true(s1.pipelines_created > s0.pipelines_created);
    assert_true(s1.scratch_allocations > s0.scratch_allocations);
    /* a prepare records nothing: the poisoned output is still NaN */
    float *untouched = th_download(big.tout, big.n_out);
    for (size_t i = 0; i < big.n_out; i++)
        assert_true(isnan(untouched[i]));
    free(untouched);

    TH_OK(ctx, vkattn_mha_record(f.layer, VKATTN_PREPARE, &big.call, &big.io)); /* again: nothing new */
    assert_same_stats(s1, th_stats(ctx), "a second prepare");
    /* a smaller call needs no bigger scratch, but may pick other tiles: prepare it too */
    TH_OK(ctx, vkattn_mha_record(f.layer, VKATTN_PREPARE, &small.call, &small.io));
    vkattn_context_stats s2 = th_stats(ctx);
    assert_int_equal(s2.scratch_allocations, s1.scratch_allocations);
    mha_record_run(ctx, f.layer, &big);
    assert_same_stats(s2, th_stats(ctx), "record after prepare");
    mha_call_check(&big, "prepared MHA call");
    mha_record_run(ctx, f.layer, &small);
    assert_same_stats(s2, th_stats(ctx), "a smaller record after prepare");
    mha_call_check(&small, "smaller MHA call after prepare");
    th_assert_validation_clean();

    mha_call_close(&big);
    mha_call_close(&small);
    mha_fix_close(&f);
}

static void test_mha_prepare_fused(void **state) { mha_prepared_path(state, VKATTN_SDPA_FUSED); }
static void test_mha_prepare_unfused(void **state) { mha_prepared_path(state, VKATTN_SDPA_UNFUSED); }

/* ------------------------------------------------------------ SDPA */

static void test_sdpa_prepare(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t B = 1, H = 2, T = 40, d = 16;
    vkattn_sdpa_params p = {.batch = B, .heads = H, .tq = T, .tv = T, .dk = d,
                            .path = VKATTN_SDPA_UNFUSED}; /* context workspace */
    const size_t n = (size_t)B * H * T * d;
    float *q = rand_array(n, 1), *k = rand_array(n, 1), *v = rand_array(n, 1);
    float *ref = tu_floats(n);
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, NULL, NULL, ref, NULL),
                     VKATTN_SUCCESS);
    vkattn_sdpa_io io = {.q = th_tensor(ctx, n, q), .k = th_tensor(ctx, n, k),
                         .v = th_tensor(ctx, n, v), .out = th_tensor(ctx, n, NULL)};
    for (int fused = 0; fused < 2; fused++) {
        p.path = fused ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
        vkattn_context_stats s0 = th_stats(ctx);
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_PREPARE, &p, &io));
        vkattn_context_stats s1 = th_stats(ctx);
        assert_true(s1.pipelines_created > s0.pipelines_created);
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io));
        assert_same_stats(s1, th_stats(ctx), "SDPA run after prepare");
        float *got = th_download(io.out, n);
        TU_ASSERT_CLOSE(got, ref, n, BOUND, fused ? "prepared fused SDPA" : "prepared chained SDPA");
        free(got);
        TH_OK(ctx, vkattn_tensor_fill(io.out, NAN)); /* poison for the next path */
    }
    th_assert_validation_clean();
    vkattn_tensor_destroy(io.q), vkattn_tensor_destroy(io.k), vkattn_tensor_destroy(io.v);
    vkattn_tensor_destroy(io.out);
    free(q), free(k), free(v), free(ref);
}

/* ------------------------------------------------------------ bad arguments */

static void test_prepare_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_layer_call call = {.batch = 1, .tq = 4, .tv = 4};
    vkattn_layer_io io = {0};
    assert_int_equal(vkattn_mha_record(NULL, VKATTN_PREPARE, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_mha_record: layer is NULL"));
    mha_fix f;
    mha_fix_open(ctx, &f, 1, 4);
    assert_int_equal(vkattn_mha_record(f.layer, VKATTN_PREPARE, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "vkattn_mha_record: "));
    assert_int_equal(vkattn_sdpa_record(NULL, VKATTN_PREPARE, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_PREPARE, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "vkattn_sdpa_record: "));
    assert_int_equal(vkattn_context_get_stats(ctx, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_context_get_pipeline_cache_data(ctx, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    mha_fix_close(&f);
}

/* ------------------------------------------------------------ pipeline cache */

static void run_small_mha(vkattn_context *ctx)
{
    mha_fix f;
    mha_fix_open(ctx, &f, 1, 12);
    mha_call c;
    mha_call_open(ctx, &f, 1, 12, false, &c);
    TH_OK(ctx, vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c.call, &c.io));
    mha_call_check(&c, "MHA on a context with restored pipeline cache data");
    mha_call_close(&c);
    mha_fix_close(&f);
}

static void *cache_data(vkattn_context *ctx, size_t *size)
{
    TH_OK(ctx, vkattn_context_get_pipeline_cache_data(ctx, NULL, size));
    void *data = tu_alloc(*size ? *size : 1);
    if (*size) {
        size_t small = *size - 1;
        assert_int_equal(vkattn_context_get_pipeline_cache_data(ctx, data, &small),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_true(small >= *size);
        *size = small;
        data = realloc(data, *size);
        TH_OK(ctx, vkattn_context_get_pipeline_cache_data(ctx, data, size));
    }
    return data;
}

static void test_pipeline_cache_round_trip(void **state)
{
    vkattn_context *a = TH_CTX(state);
    run_small_mha(a);
    size_t size_a;
    void *data_a = cache_data(a, &size_a);
    assert_true(size_a >= 32); /* at least the header */

    vkattn_context_desc desc = th_context_desc();
    desc.pipeline_cache_data = data_a;
    desc.pipeline_cache_size = size_a;
    vkattn_context *b;
    TH_OK(a, vkattn_context_create(&desc, &b));
    free(data_a); /* copied at create */
    size_t size_b;
    void *data_b = cache_data(b, &size_b);
    assert_true(size_b >= 32);
    free(data_b);
    run_small_mha(b);
    vkattn_context_destroy(b);

    /* foreign bytes: ignored, the context still works */
    unsigned char junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)tu_rand_u32();
    desc.pipeline_cache_data = junk;
    desc.pipeline_cache_size = sizeof junk;
    vkattn_context *c;
    TH_OK(a, vkattn_context_create(&desc, &c));
    run_small_mha(c);
    vkattn_context_destroy(c);
    th_assert_validation_clean();
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mha_prepare_fused, fresh_setup, fresh_teardown),
        cmocka_unit_test_setup_teardown(test_mha_prepare_unfused, fresh_setup, fresh_teardown),
        cmocka_unit_test_setup_teardown(test_sdpa_prepare, fresh_setup, fresh_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_bad_arguments, fresh_setup, fresh_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_cache_round_trip, fresh_setup,
                                        fresh_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
