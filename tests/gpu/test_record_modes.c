/* The three modes of every *_record (vkattn/context.h), on an op (SDPA) and a
 * layer (MultiHeadAttention):
 *  - a NULL command buffer is refused with a message that names the choices,
 *    and nothing is recorded (the poisoned output stays NaN);
 *  - VKATTN_PREPARE records nothing (output still NaN) and compiles what the
 *    call needs: the recording after it creates nothing (context stats);
 *  - VKATTN_RUN_NOW gives the same bits as recording into
 *    vkattn_context_begin_commands' buffer and submit_and_wait (same kernels,
 *    same inputs: bit for bit, not a bound);
 *  - a NULL context or layer with a sentinel names the argument;
 *  - a slicer whose callback passes a sentinel instead of the cmd it is given
 *    records nothing to slice: creation refuses it;
 *  - the functions that take only a real command buffer (tensor hand-overs,
 *    timers, a slicer's slices) refuse both sentinels, naming them.
 * Inputs in [-1, 1]; the values themselves are checked by test_sdpa.c and
 * test_mha.c, against the CPU reference. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int fresh_setup(void **state) { return th_setup(state); }
static int fresh_teardown(void **state) { return th_teardown(state); }

static bool same_stats(vkattn_context_stats a, vkattn_context_stats b)
{
    return a.pipelines_created == b.pipelines_created &&
           a.scratch_allocations == b.scratch_allocations &&
           a.descriptor_sets_allocated == b.descriptor_sets_allocated;
}

static float *rand_array(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1.0f, 1.0f);
    return x;
}

static void assert_all_nan(vkattn_tensor *t, size_t n, const char *what)
{
    float *got = th_download(t, n);
    for (size_t i = 0; i < n; i++)
        if (!isnan(got[i]))
            fail_msg("%s: element %zu is %g, not the poison", what, i, (double)got[i]);
    free(got);
}

static void assert_same_bits(const float *a, const float *b, size_t n, const char *what)
{
    if (memcmp(a, b, n * sizeof(float)) != 0)
        fail_msg("%s: VKATTN_RUN_NOW and a recorded command buffer differ", what);
}

#define NULL_CMD_MESSAGE "cmd is NULL: give a command buffer, VKATTN_PREPARE or VKATTN_RUN_NOW"

/* ------------------------------------------------------------ an op: SDPA */

static void test_sdpa_modes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t B = 1, H = 2, Tq = 7, Tv = 11, d = 8;
    const vkattn_sdpa_params p = {.batch = B, .heads = H, .tq = Tq, .tv = Tv, .dk = d};
    const size_t nq = (size_t)B * H * Tq * d, nk = (size_t)B * H * Tv * d;
    float *q = rand_array(nq), *k = rand_array(nk), *v = rand_array(nk);
    vkattn_sdpa_io io = {.q = th_tensor(ctx, nq, q), .k = th_tensor(ctx, nk, k),
                         .v = th_tensor(ctx, nk, v), .out = th_tensor(ctx, nq, NULL)};

    TH_EXPECT_ERROR(vkattn_sdpa_record(ctx, VK_NULL_HANDLE, &p, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_sdpa_record: " NULL_CMD_MESSAGE);
    TH_EXPECT_ERROR(vkattn_sdpa_record(NULL, VKATTN_RUN_NOW, &p, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_sdpa_record: ctx is NULL");
    TH_EXPECT_ERROR(vkattn_sdpa_record(NULL, VKATTN_PREPARE, &p, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_sdpa_record: ctx is NULL");
    /* a refused call in either mode records and submits nothing */
    const vkattn_sdpa_params bad = {.batch = B, .heads = H, .tq = Tq, .tv = Tv};
    TH_EXPECT_ERROR(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &bad, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_sdpa_record: ");
    TH_EXPECT_ERROR(vkattn_sdpa_record(ctx, VKATTN_PREPARE, &bad, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_sdpa_record: ");
    assert_all_nan(io.out, nq, "after refused calls");

    const vkattn_context_stats s0 = th_stats(ctx);
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_PREPARE, &p, &io));
    const vkattn_context_stats s1 = th_stats(ctx);
    assert_true(s1.pipelines_created > s0.pipelines_created);
    assert_all_nan(io.out, nq, "after VKATTN_PREPARE");

    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io));
    if (!same_stats(s1, th_stats(ctx)))
        fail_msg("VKATTN_RUN_NOW after VKATTN_PREPARE created pipelines, scratch or sets");
    float *run_now = th_download(io.out, nq);
    TH_OK(ctx, vkattn_tensor_fill(io.out, NAN));
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_sdpa_record(ctx, cmd, &p, &io));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *recorded = th_download(io.out, nq);
    for (size_t i = 0; i < nq; i++)
        assert_false(isnan(run_now[i]));
    assert_same_bits(run_now, recorded, nq, "SDPA");
    th_assert_validation_clean();

    free(run_now), free(recorded), free(q), free(k), free(v);
    vkattn_tensor_destroy(io.q), vkattn_tensor_destroy(io.k), vkattn_tensor_destroy(io.v);
    vkattn_tensor_destroy(io.out);
}

/* ------------------------------------------------------------ a layer: MHA */

static void test_mha_modes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t H = 2, dk = 8, D = 16, B = 2, T = 5;
    const vkattn_mha_desc desc = {.num_heads = H, .key_dim = dk, .query_width = D,
                                  .value_width = D};
    const size_t n[8] = {D * H * dk, H * dk, D * H * dk, H * dk, D * H * dk, H * dk, H * dk * D, D};
    float *w[8];
    for (int i = 0; i < 8; i++)
        w[i] = rand_array(n[i]);
    const vkattn_mha_weights weights = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]};
    vkattn_mha *layer;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &weights));
    const size_t nx = (size_t)B * T * D;
    float *x = rand_array(nx);
    vkattn_tensor *tx = th_tensor(ctx, nx, x), *tout = th_tensor(ctx, nx, NULL);
    const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    const vkattn_layer_io io = {.query = tx, .value = tx, .output = tout};

    TH_EXPECT_ERROR(vkattn_mha_record(layer, VK_NULL_HANDLE, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_mha_record: " NULL_CMD_MESSAGE);
    TH_EXPECT_ERROR(vkattn_mha_record(NULL, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_mha_record: layer is NULL");
    TH_EXPECT_ERROR(vkattn_mha_record(NULL, VKATTN_PREPARE, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_mha_record: layer is NULL");
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_PREPARE, NULL, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_mha_record: call");
    assert_all_nan(tout, nx, "after refused calls");

    const vkattn_context_stats s0 = th_stats(ctx);
    TH_OK(ctx, vkattn_mha_record(layer, VKATTN_PREPARE, &call, &io));
    const vkattn_context_stats s1 = th_stats(ctx);
    assert_true(s1.pipelines_created > s0.pipelines_created);
    assert_true(s1.scratch_allocations > s0.scratch_allocations);
    assert_all_nan(tout, nx, "after VKATTN_PREPARE");

    TH_OK(ctx, vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io));
    if (!same_stats(s1, th_stats(ctx)))
        fail_msg("VKATTN_RUN_NOW after VKATTN_PREPARE created pipelines, scratch or sets");
    float *run_now = th_download(tout, nx);
    TH_OK(ctx, vkattn_tensor_fill(tout, NAN));
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_mha_record(layer, cmd, &call, &io));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *recorded = th_download(tout, nx);
    for (size_t i = 0; i < nx; i++)
        assert_false(isnan(run_now[i]));
    assert_same_bits(run_now, recorded, nx, "MultiHeadAttention");
    th_assert_validation_clean();

    free(run_now), free(recorded), free(x);
    for (int i = 0; i < 8; i++)
        free(w[i]);
    vkattn_tensor_destroy(tx), vkattn_tensor_destroy(tout);
    vkattn_mha_destroy(layer);
}

/* ------------------------------------------------------------ the slicer */

typedef struct sdpa_call {
    vkattn_context *ctx;
    VkCommandBuffer instead; /* passed in place of the slicer's cmd, or NULL */
    vkattn_sdpa_params p;
    vkattn_sdpa_io io;
} sdpa_call;

static vkattn_result record_sdpa(void *user, VkCommandBuffer cmd)
{
    sdpa_call *c = user;
    return vkattn_sdpa_record(c->ctx, c->instead ? c->instead : cmd, &c->p, &c->io);
}

static void test_slicer_callback_with_a_mode(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t H = 2, T = 6, d = 8;
    const size_t n = (size_t)H * T * d;
    float *x = rand_array(n);
    sdpa_call c = {.ctx = ctx, .p = {.batch = 1, .heads = H, .tq = T, .tv = T, .dk = d}};
    c.io = (vkattn_sdpa_io){.q = th_tensor(ctx, n, x), .k = th_tensor(ctx, n, x),
                            .v = th_tensor(ctx, n, x), .out = th_tensor(ctx, n, NULL)};
    const VkCommandBuffer modes[2] = {VKATTN_PREPARE, VKATTN_RUN_NOW};
    for (int i = 0; i < 2; i++) {
        c.instead = modes[i];
        vkattn_slicer_desc sd = {.record = record_sdpa, .user = &c, .budget_us = 1000};
        vkattn_slicer *slicer = NULL;
        TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &sd, &slicer), VKATTN_ERROR_INVALID_ARGUMENT,
                        "desc->record recorded nothing into the command buffer it was given");
        assert_null(slicer);
    }
    c.instead = VK_NULL_HANDLE; /* the contract kept: a slicer */
    vkattn_slicer_desc sd = {.record = record_sdpa, .user = &c, .budget_us = 1000};
    vkattn_slicer *slicer = NULL;
    TH_OK(ctx, vkattn_slicer_create(ctx, &sd, &slicer));
    vkattn_slicer_destroy(slicer);
    th_assert_validation_clean();
    free(x);
    vkattn_tensor_destroy(c.io.q), vkattn_tensor_destroy(c.io.k), vkattn_tensor_destroy(c.io.v);
    vkattn_tensor_destroy(c.io.out);
}

/* The functions that take only a real command buffer (hand-overs, timers, a
 * slicer's slices) refuse both sentinels by name instead of handing them to
 * vkCmd* as handles. */
static void test_sentinels_only_for_record(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t H = 1, T = 4, d = 4;
    const size_t n = (size_t)H * T * d;
    float *x = rand_array(n);
    sdpa_call c = {.ctx = ctx, .p = {.batch = 1, .heads = H, .tq = T, .tv = T, .dk = d}};
    c.io = (vkattn_sdpa_io){.q = th_tensor(ctx, n, x), .k = th_tensor(ctx, n, x),
                            .v = th_tensor(ctx, n, x), .out = th_tensor(ctx, n, NULL)};
    vkattn_slicer_desc sd = {.record = record_sdpa, .user = &c, .budget_us = 1000};
    vkattn_slicer *slicer = NULL;
    TH_OK(ctx, vkattn_slicer_create(ctx, &sd, &slicer));
    vkattn_timer *timer = NULL;
    const bool timed = vkattn_timer_create(ctx, 2, &timer) == VKATTN_SUCCESS; /* mobile-min: none */
    const VkCommandBuffer modes[2] = {VKATTN_PREPARE, VKATTN_RUN_NOW};
    const char *names[2] = {"cmd is VKATTN_PREPARE", "cmd is VKATTN_RUN_NOW"};
    for (int i = 0; i < 2; i++) {
        bool done = false;
        TH_EXPECT_ERROR(vkattn_slicer_record_next(slicer, modes[i], &done),
                        VKATTN_ERROR_INVALID_ARGUMENT, names[i]);
        assert_false(done);
        TH_EXPECT_ERROR(vkattn_tensor_release(c.io.out, modes[i],
                                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                              VK_ACCESS_SHADER_READ_BIT, VK_QUEUE_FAMILY_IGNORED),
                        VKATTN_ERROR_INVALID_ARGUMENT, names[i]);
        TH_EXPECT_ERROR(vkattn_tensor_acquire(c.io.q, modes[i],
                                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                              VK_ACCESS_SHADER_WRITE_BIT, VK_QUEUE_FAMILY_IGNORED),
                        VKATTN_ERROR_INVALID_ARGUMENT, names[i]);
        if (timed) {
            TH_EXPECT_ERROR(vkattn_timer_reset(timer, modes[i]), VKATTN_ERROR_INVALID_ARGUMENT,
                            names[i]);
            TH_EXPECT_ERROR(vkattn_timer_mark(timer, modes[i], 0), VKATTN_ERROR_INVALID_ARGUMENT,
                            names[i]);
        }
    }
    th_assert_validation_clean();
    vkattn_timer_destroy(timer);
    vkattn_slicer_destroy(slicer);
    free(x);
    vkattn_tensor_destroy(c.io.q), vkattn_tensor_destroy(c.io.k), vkattn_tensor_destroy(c.io.v);
    vkattn_tensor_destroy(c.io.out);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sdpa_modes, fresh_setup, fresh_teardown),
        cmocka_unit_test_setup_teardown(test_mha_modes, fresh_setup, fresh_teardown),
        cmocka_unit_test_setup_teardown(test_slicer_callback_with_a_mode, fresh_setup,
                                        fresh_teardown),
        cmocka_unit_test_setup_teardown(test_sentinels_only_for_record, fresh_setup,
                                        fresh_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
