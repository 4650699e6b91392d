/* Sliced recording (vkattn/slicer.h): one call captured once and recorded a
 * few pieces per submission. For SDPA (fused and chained), decode,
 * MultiHeadAttention and the dot-product Attention layer, with dropout where
 * the call has it, at a tiny budget (one piece per slice), a middle one and a
 * huge one (one slice), the output is memcmp-identical to the unsliced call
 * recorded into one command buffer - twice per slicer (reset, then again),
 * one submission per slice, and (tiny budget) once with every slice in one
 * command buffer, where synchronization validation sees the slice boundaries.
 * Outputs are poisoned (NaN) before every pass; no record_next compiles a
 * pipeline, grows scratch or allocates a descriptor set (context stats).
 * Between the slices of the chained SDPA an unrelated SDPA call runs, using
 * the context's library workspace: the slicer's own scratch must keep the
 * state between frames. A fourth slicer per case splits dispatches finer
 * (max_piece_work) than the unsliced call did, still bit-identical. Two
 * slicers advanced in alternate frames keep their own scratch.
 * The unsliced output is itself checked against the CPU reference elsewhere
 * (test_sdpa.c, test_decode.c, test_mha.c, test_attention.c); here the truth
 * is the unsliced call, bit for bit. Groups: the default device, a small
 * max_dispatch_work (long dispatches split, so more pieces), mobile-min
 * (descriptor sets from pools, no timestamps). The re-split after a pass
 * whose pieces overran the budget (test_resplit), also with the last pass
 * still unsubmitted in the app's command buffer (test_resplit_in_flight, on
 * an app device: gpu/app_device.h). And bad arguments. */
#include "app_device.h"
#include "harness.h"

#include "vkattn/peak.h"
#include "vkattn/slicer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *rand_array(size_t n, float a)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -a, a);
    return x;
}

/* What a case gives the driver: the record callback and its output. */
typedef struct sliced_case {
    vkattn_record_fn record;
    void *user;
    vkattn_tensor *out;
    size_t n_out;
    /* optional: run between slices, disturbing the context's scratch */
    void (*between)(vkattn_context *ctx, void *user);
} sliced_case;

static void poison(vkattn_context *ctx, vkattn_tensor *t) { TH_OK(ctx, vkattn_tensor_fill(t, NAN)); }

static void *download_raw(vkattn_context *ctx, vkattn_tensor *t, size_t n)
{
    float *x = tu_floats(n);
    TH_OK(ctx, vkattn_tensor_download_raw(t, x, 0, n));
    return x;
}

/* The unsliced call, one command buffer. */
static void *run_unsliced(vkattn_context *ctx, const sliced_case *c)
{
    poison(ctx, c->out);
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, c->record(c->user, cmd));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    return download_raw(ctx, c->out, c->n_out);
}

/* One pass: a submission per slice until done; returns the slices. */
static uint32_t run_pass(vkattn_context *ctx, const sliced_case *c, vkattn_slicer *s)
{
    poison(ctx, c->out);
    bool done = false;
    uint32_t slices = 0;
    while (!done) {
        VkCommandBuffer cmd;
        TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
        vkattn_context_stats before, after;
        TH_OK(ctx, vkattn_context_get_stats(ctx, &before));
        TH_OK(ctx, vkattn_slicer_record_next(s, cmd, &done));
        TH_OK(ctx, vkattn_context_get_stats(ctx, &after));
        /* a frame compiles and allocates nothing: creation prepared it all */
        assert_memory_equal(&before, &after, sizeof before);
        TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
        slices++;
        if (!done && c->between)
            c->between(ctx, c->user);
        assert_true(slices <= 100000);
    }
    /* done stays done and records nothing */
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_slicer_record_next(s, cmd, &done));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    assert_true(done);
    return slices;
}

/* Every slice of a pass into one command buffer: synchronization validation
 * checks the barriers at each slice boundary within it (it does not check
 * across submissions on older layers). */
static void run_pass_one_buffer(vkattn_context *ctx, const sliced_case *c, vkattn_slicer *s,
                                const void *ref, const char *what)
{
    TH_OK(ctx, vkattn_slicer_reset(s));
    poison(ctx, c->out);
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    bool done = false;
    uint32_t slices = 0;
    while (!done && slices++ < 100000)
        TH_OK(ctx, vkattn_slicer_record_next(s, cmd, &done));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    void *got = download_raw(ctx, c->out, c->n_out);
    if (memcmp(got, ref, c->n_out * sizeof(float)) != 0)
        fail_msg("%s: %u slices in one command buffer: output differs from the unsliced call",
                 what, slices);
    free(got);
}

static void check_sliced(vkattn_context *ctx, const sliced_case *c, const char *what)
{
    void *ref = run_unsliced(ctx, c);
    const size_t bytes = c->n_out * sizeof(float);
    /* the unsliced output is finite: the poison was overwritten */
    for (size_t i = 0; i < c->n_out; i++)
        if (!isfinite(((float *)ref)[i]))
            fail_msg("%s: unsliced output[%zu] is not finite", what, i);
    /* 0: a third of the estimate; the last also with finer dispatches
     * (max_piece_work) than the unsliced call's */
    const double budgets[4] = {1e-3, 0, 1e9, 0};
    uint32_t pieces_unsplit = 0;
    for (int b = 0; b < 4; b++) {
        vkattn_slicer_desc d = {.record = c->record, .user = c->user,
                                .budget_us = budgets[b] ? budgets[b] : 1,
                                .max_piece_work = b == 3 ? 600 : 0};
        vkattn_slicer *s;
        TH_OK(ctx, vkattn_slicer_create(ctx, &d, &s));
        vkattn_slicer_info info;
        TH_OK(ctx, vkattn_slicer_get_info(s, &info));
        assert_true(info.pieces >= 1);
        if (b == 0 || b == 3)
            print_message("# %s: %u pieces%s, first estimate %.0f us\n", what, info.pieces,
                          b == 3 ? " with max_piece_work 600" : "", info.estimated_us);
        if (b == 0)
            pieces_unsplit = info.pieces;
        if (b == 3) /* more where the context's budget did not split as finely already */
            assert_true(info.pieces >= pieces_unsplit);
        if (!budgets[b])
            TH_OK(ctx, vkattn_slicer_set_budget(s, info.estimated_us / 3));
        for (int pass = 0; pass < 2; pass++) {
            if (pass) { /* a re-split may capture the call again: new pieces */
                TH_OK(ctx, vkattn_slicer_reset(s));
                TH_OK(ctx, vkattn_slicer_get_info(s, &info));
            }
            uint32_t slices = run_pass(ctx, c, s);
            void *got = download_raw(ctx, c->out, c->n_out);
            if (memcmp(got, ref, bytes) != 0)
                fail_msg("%s: budget %g us, pass %d (%u slices of %u pieces): output differs from "
                         "the unsliced call", what, d.budget_us, pass, slices, info.pieces);
            free(got);
            if (b == 1 && pass == 0 && info.timestamps && info.pieces >= 2) {
                /* nothing measured yet: the first slice probes with one piece */
                vkattn_slicer_piece p1;
                TH_OK(ctx, vkattn_slicer_get_piece(s, 1, &p1));
                assert_int_equal(p1.slice, 1);
            }
            if (b == 0)
                assert_int_equal(slices, info.pieces);
            if (b == 2 && pass == 1) /* estimates refined by the first pass fit too */
                assert_int_equal(slices, 1);
            if (b == 2 && pass == 0)
                assert_int_equal(slices, 1);
        }
        if (b == 0 || b == 3)
            run_pass_one_buffer(ctx, c, s, ref, what);
        TH_OK(ctx, vkattn_slicer_get_info(s, &info));
        if (info.timestamps)
            assert_int_equal(info.measured_pieces, info.pieces);
        vkattn_slicer_destroy(s);
    }
    free(ref);
    th_assert_validation_clean();
}

/* ------------------------------------------------------------------ SDPA */

typedef struct sdpa_case {
    vkattn_context *ctx;
    vkattn_sdpa_params p;
    vkattn_sdpa_io io;
    vkattn_tensor *t[4];
    /* the unrelated call run between slices */
    vkattn_sdpa_params other_p;
    vkattn_sdpa_io other_io;
    vkattn_tensor *other[4];
} sdpa_case;

static vkattn_result sdpa_rec(void *user, VkCommandBuffer cmd)
{
    sdpa_case *c = user;
    return vkattn_sdpa_record(c->ctx, cmd, &c->p, &c->io);
}

static void sdpa_other(vkattn_context *ctx, void *user)
{
    sdpa_case *c = user;
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c->other_p, &c->other_io));
}

static void sdpa_tensors(vkattn_context *ctx, const vkattn_sdpa_params *p, vkattn_tensor *t[4],
                         vkattn_sdpa_io *io)
{
    const uint32_t H = p->heads, dv = p->dv ? p->dv : p->dk;
    const size_t nq = (size_t)p->batch * H * p->tq * p->dk, nk = (size_t)p->batch * H * p->tv * p->dk,
                 nv = (size_t)p->batch * H * p->tv * dv, no = (size_t)p->batch * H * p->tq * dv;
    float *q = rand_array(nq, 1), *k = rand_array(nk, 1), *v = rand_array(nv, 1);
    t[0] = th_tensor(ctx, nq, q), t[1] = th_tensor(ctx, nk, k), t[2] = th_tensor(ctx, nv, v);
    t[3] = th_tensor(ctx, no, NULL);
    *io = (vkattn_sdpa_io){.q = t[0], .k = t[1], .v = t[2], .out = t[3]};
    free(q), free(k), free(v);
}

static void sdpa_path(void **state, vkattn_sdpa_path path)
{
    vkattn_context *ctx = TH_CTX(state);
    sdpa_case c = {.ctx = ctx,
                   .p = {.batch = 2, .heads = 2, .tq = 37, .tv = 29, .dk = 12, .dv = 7,
                         .path = path,
                         .dropout = {.rate = 0.3f, .training = true, .seed = 42, .offset = 5}},
                   .other_p = {.batch = 1, .heads = 1, .tq = 23, .tv = 31, .dk = 8,
                               .path = VKATTN_SDPA_UNFUSED}};
    sdpa_tensors(ctx, &c.p, c.t, &c.io);
    sdpa_tensors(ctx, &c.other_p, c.other, &c.other_io);
    sliced_case sc = {.record = sdpa_rec, .user = &c, .out = c.io.out,
                      .n_out = (size_t)2 * 2 * 37 * 7,
                      .between = path == VKATTN_SDPA_UNFUSED ? sdpa_other : NULL};
    check_sliced(ctx, &sc, path == VKATTN_SDPA_FUSED ? "sdpa fused" : "sdpa chained");
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(c.t[i]), vkattn_tensor_destroy(c.other[i]);
}

static void test_sdpa_fused(void **state) { sdpa_path(state, VKATTN_SDPA_FUSED); }

/* Pieces and the largest first estimate of a slicer of `d`. */
static uint32_t auto_pieces(vkattn_context *ctx, const vkattn_slicer_desc *d, double *largest_us,
                            vkattn_slicer **out)
{
    TH_OK(ctx, vkattn_slicer_create(ctx, d, out));
    vkattn_slicer_info info;
    TH_OK(ctx, vkattn_slicer_get_info(*out, &info));
    *largest_us = 0;
    for (uint32_t i = 0; i < info.pieces; i++) {
        vkattn_slicer_piece p;
        TH_OK(ctx, vkattn_slicer_get_piece(*out, i, &p));
        if (p.prior_us > *largest_us)
            *largest_us = p.prior_us;
    }
    return info.pieces;
}

/* max_piece_work 0 picks the split from the budget: a budget a quarter of
 * the longest piece's first estimate splits it so that no piece's estimate
 * exceeds the budget (half of it by design, plus rounding), bit-identical;
 * a budget the call fits leaves the context's split; an explicit
 * max_piece_work is kept as given. A slow device (peak FMA 1 GFLOP/s) makes
 * the small call's attention long by the estimates. The first estimate of
 * the split's longest piece stays within the budget. */
static void test_auto_split(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* rows enough for several workgroups of query rows per head: a piece
     * is never smaller than one */
    sdpa_case c = {.ctx = ctx, .p = {.batch = 1, .heads = 2, .tq = 515, .tv = 29, .dk = 12, .dv = 7,
                                     .path = VKATTN_SDPA_FUSED}};
    sdpa_tensors(ctx, &c.p, c.t, &c.io);
    sliced_case sc = {.record = sdpa_rec, .user = &c, .out = c.io.out, .n_out = (size_t)2 * 515 * 7};
    void *ref = run_unsliced(ctx, &sc);
    const vkattn_peak_result slow = {.fma_gflops = 1, .copy_gbps = 10};
    vkattn_slicer_desc d = {.record = sdpa_rec, .user = &c, .budget_us = 1e9, .peak = &slow};
    vkattn_slicer *whole, *split, *given;
    double whole_us, split_us, given_us;
    const uint32_t n_whole = auto_pieces(ctx, &d, &whole_us, &whole);
    d.budget_us = whole_us / 4;
    const uint32_t n_split = auto_pieces(ctx, &d, &split_us, &split);
    d.max_piece_work = UINT64_MAX / 2; /* explicit: no finer than the context's */
    const uint32_t n_given = auto_pieces(ctx, &d, &given_us, &given);
    print_message("# auto split: %u pieces (largest %.0f us) at budget 1e9, %u (%.0f us) at %.0f "
                  "us\n", n_whole, whole_us, n_split, split_us, d.budget_us);
    assert_true(n_split > n_whole);
    assert_true(split_us <= d.budget_us);
    assert_int_equal(n_given, n_whole);
    const size_t bytes = sc.n_out * sizeof(float);
    for (int pass = 0; pass < 2; pass++) {
        run_pass(ctx, &sc, split);
        void *got = download_raw(ctx, c.io.out, sc.n_out);
        if (memcmp(got, ref, bytes) != 0)
            fail_msg("auto split, pass %d: output differs from the unsliced call", pass);
        free(got);
        TH_OK(ctx, vkattn_slicer_reset(split));
    }
    vkattn_slicer_destroy(whole), vkattn_slicer_destroy(split), vkattn_slicer_destroy(given);
    free(ref);
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(c.t[i]);
    th_assert_validation_clean();
}

/* Re-split after the learning pass (vkattn/slicer.h): at a budget below any
 * piece's time, each pass's reset cuts the splits whose pieces overran it
 * finer, down to the dispatches their ops cannot cut (one workgroup of rows
 * per head), which are reported, not looped on: at most 4 re-captures, then
 * the pieces stay. Output bit-identical to the unsliced call through every
 * capture; no record_next allocates (run_pass). Asserts no time: which
 * pieces overrun is the device's (tests/unit/test_slice_plan.c feeds made-up
 * times to the same decisions). */
static void test_resplit(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    sdpa_case c = {.ctx = ctx, .p = {.batch = 1, .heads = 2, .tq = 515, .tv = 29, .dk = 12, .dv = 7,
                                     .path = VKATTN_SDPA_FUSED}};
    sdpa_tensors(ctx, &c.p, c.t, &c.io);
    sliced_case sc = {.record = sdpa_rec, .user = &c, .out = c.io.out, .n_out = (size_t)2 * 515 * 7};
    void *ref = run_unsliced(ctx, &sc);
    vkattn_slicer_desc d = {.record = sdpa_rec, .user = &c, .budget_us = 1e-3};
    vkattn_slicer *s;
    TH_OK(ctx, vkattn_slicer_create(ctx, &d, &s));
    vkattn_slicer_info info, first;
    TH_OK(ctx, vkattn_slicer_get_info(s, &first));
    uint32_t last_pieces = 0, last_resplits = 0;
    for (int pass = 0; pass < 8; pass++) {
        if (pass)
            TH_OK(ctx, vkattn_slicer_reset(s));
        TH_OK(ctx, vkattn_slicer_get_info(s, &info));
        assert_true(info.resplits <= 4);
        assert_true(info.pieces >= first.pieces);
        if (pass == 7) { /* past the cap (or nothing left to cut): the same pieces */
            assert_int_equal(info.pieces, last_pieces);
            assert_int_equal(info.resplits, last_resplits);
        }
        last_pieces = info.pieces, last_resplits = info.resplits;
        run_pass(ctx, &sc, s);
        void *got = download_raw(ctx, c.io.out, sc.n_out);
        if (memcmp(got, ref, sc.n_out * sizeof(float)) != 0)
            fail_msg("re-split, pass %d (%u pieces, %u re-captures): output differs from the "
                     "unsliced call", pass, info.pieces, info.resplits);
        free(got);
    }
    TH_OK(ctx, vkattn_slicer_reset(s));
    TH_OK(ctx, vkattn_slicer_get_info(s, &info));
    uint32_t uncut = 0;
    for (uint32_t i = 0; i < info.pieces; i++) {
        vkattn_slicer_piece p;
        TH_OK(ctx, vkattn_slicer_get_piece(s, i, &p));
        if (p.uncut) { /* reported only where it overran */
            uncut++;
            assert_true(p.measured_us > d.budget_us);
        }
    }
    assert_int_equal(uncut, info.uncut_pieces);
    if (!info.timestamps) /* nothing measured, nothing re-split */
        assert_int_equal(info.resplits + info.resplit_pieces + info.uncut_pieces, 0);
    print_message("# re-split: %u pieces, then %u after %u re-captures (%u pieces re-split), "
                  "%u uncut\n", first.pieces, info.pieces, info.resplits, info.resplit_pieces,
                  info.uncut_pieces);
    vkattn_slicer_destroy(s);
    free(ref);
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(c.t[i]);
    th_assert_validation_clean();
}

/* A re-split while the last pass's slices have not run: each pass, the app
 * records it into its own command buffer and resets before submitting it (a
 * frame loop's order: reset once done is returned). The capture a reset
 * replaces must outlive those slices (the app's validation layer reports an
 * object destroyed while in use), and every pass gives the unsliced output.
 * Whether a reset re-splits is the device's timing (printed, not asserted;
 * the first pass only measures). */
static void test_resplit_in_flight(void **state)
{
    ad_app app;
    ad_open(TH_CTX(state), false, &app);
    vkattn_context *ctx = app.ctx;
    sdpa_case c = {.ctx = ctx, .p = {.batch = 1, .heads = 2, .tq = 515, .tv = 29, .dk = 12, .dv = 7,
                                     .path = VKATTN_SDPA_FUSED}};
    sdpa_tensors(ctx, &c.p, c.t, &c.io);
    sliced_case sc = {.record = sdpa_rec, .user = &c, .out = c.io.out, .n_out = (size_t)2 * 515 * 7};
    void *ref = run_unsliced(ctx, &sc);
    vkattn_slicer_desc d = {.record = sdpa_rec, .user = &c, .budget_us = 1e-3};
    vkattn_slicer *s;
    TH_OK(ctx, vkattn_slicer_create(ctx, &d, &s));
    vkattn_slicer_info before, after;
    unsigned in_flight = 0;
    for (int pass = 0; pass < 4; pass++) {
        poison(ctx, sc.out);
        VkCommandBuffer cmd = ad_begin(&app, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
        for (bool done = false; !done;)
            TH_OK(ctx, vkattn_slicer_record_next(s, cmd, &done));
        assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
        TH_OK(ctx, vkattn_slicer_get_info(s, &before));
        TH_OK(ctx, vkattn_slicer_reset(s)); /* before the slices run */
        TH_OK(ctx, vkattn_slicer_get_info(s, &after));
        in_flight += after.resplits > before.resplits;
        ad_submit(&app, cmd, VK_NULL_HANDLE);
        assert_int_equal(vkQueueWaitIdle(app.queue), VK_SUCCESS);
        vkFreeCommandBuffers(app.device, app.pool, 1, &cmd);
        void *got = download_raw(ctx, sc.out, sc.n_out);
        if (memcmp(got, ref, sc.n_out * sizeof(float)) != 0)
            fail_msg("re-split in flight, pass %d: output differs from the unsliced call", pass);
        free(got);
    }
    print_message("# re-split in flight: %u of 4 resets re-captured before the slices ran\n",
                  in_flight);
    vkattn_slicer_destroy(s);
    free(ref);
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(c.t[i]);
    ad_close(&app);
    th_assert_validation_clean();
}

/* Two slicers of two chained SDPA calls (both on the library workspace)
 * advanced in alternate frames: each keeps its own scratch. */
static void test_two_slicers(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    sdpa_case c[2] = {
        {.ctx = ctx, .p = {.batch = 1, .heads = 2, .tq = 21, .tv = 17, .dk = 8,
                           .path = VKATTN_SDPA_UNFUSED}},
        {.ctx = ctx, .p = {.batch = 2, .heads = 1, .tq = 13, .tv = 26, .dk = 6, .dv = 5,
                           .path = VKATTN_SDPA_UNFUSED,
                           .dropout = {.rate = 0.25f, .training = true, .seed = 11}}},
    };
    const size_t n_out[2] = {(size_t)1 * 2 * 21 * 8, (size_t)2 * 1 * 13 * 5};
    void *ref[2];
    vkattn_slicer *s[2];
    for (int i = 0; i < 2; i++) {
        sdpa_tensors(ctx, &c[i].p, c[i].t, &c[i].io);
        sliced_case sc = {.record = sdpa_rec, .user = &c[i], .out = c[i].io.out,
                          .n_out = n_out[i]};
        ref[i] = run_unsliced(ctx, &sc);
        vkattn_slicer_desc d = {.record = sdpa_rec, .user = &c[i], .budget_us = 1e-3};
        TH_OK(ctx, vkattn_slicer_create(ctx, &d, &s[i]));
        poison(ctx, c[i].io.out);
    }
    bool done[2] = {false, false};
    while (!done[0] || !done[1])
        for (int i = 0; i < 2; i++) {
            VkCommandBuffer cmd;
            TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
            TH_OK(ctx, vkattn_slicer_record_next(s[i], cmd, &done[i]));
            TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
        }
    for (int i = 0; i < 2; i++) {
        void *got = download_raw(ctx, c[i].io.out, n_out[i]);
        if (memcmp(got, ref[i], n_out[i] * sizeof(float)) != 0)
            fail_msg("slicer %d of two: output differs from the unsliced call", i);
        free(got), free(ref[i]);
        vkattn_slicer_destroy(s[i]);
        for (int k = 0; k < 4; k++)
            vkattn_tensor_destroy(c[i].t[k]);
    }
    th_assert_validation_clean();
}
static void test_sdpa_chained(void **state) { sdpa_path(state, VKATTN_SDPA_UNFUSED); }

/* ---------------------------------------------------------------- decode */

typedef struct decode_case {
    vkattn_context *ctx;
    vkattn_sdpa_decode_params p;
    vkattn_sdpa_decode_io io;
} decode_case;

static vkattn_result decode_rec(void *user, VkCommandBuffer cmd)
{
    decode_case *c = user;
    return vkattn_sdpa_decode_record(c->ctx, cmd, &c->p, &c->io);
}

static void test_decode(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t B = 2, H = 2, cap = 40, dk = 8, tq = 3;
    const size_t nkv = (size_t)B * H * cap * dk;
    float *k = rand_array(nkv, 1), *v = rand_array(nkv, 1), *q = rand_array((size_t)B * H * tq * dk, 1);
    vkattn_tensor *tk = th_tensor(ctx, nkv, k), *tv = th_tensor(ctx, nkv, v);
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = cap, .key_dim = dk,
                               .keys = tk, .values = tv};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const uint32_t lengths[2] = {33, 17};
    TH_OK(ctx, vkattn_kv_cache_set_lengths(cache, lengths));
    decode_case c = {.ctx = ctx,
                     .p = {.batch = B, .heads = H, .tq = tq, .capacity = cap, .dk = dk,
                           .dropout = {.rate = 0.2f, .training = true, .seed = 7}}};
    c.io = (vkattn_sdpa_decode_io){.q = th_tensor(ctx, (size_t)B * H * tq * dk, q), .cache = cache,
                                   .out = th_tensor(ctx, (size_t)B * H * tq * dk, NULL)};
    sliced_case sc = {.record = decode_rec, .user = &c, .out = c.io.out,
                      .n_out = (size_t)B * H * tq * dk};
    check_sliced(ctx, &sc, "decode");
    vkattn_tensor_destroy(c.io.q), vkattn_tensor_destroy(c.io.out);
    vkattn_kv_cache_destroy(cache);
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv);
    free(k), free(v), free(q);
}

/* ---------------------------------------------------------------- layers */

typedef struct layer_case {
    vkattn_mha *mha;
    vkattn_attention *attention;
    vkattn_layer_call call;
    vkattn_layer_io io;
} layer_case;

static vkattn_result mha_rec(void *user, VkCommandBuffer cmd)
{
    layer_case *c = user;
    return vkattn_mha_record(c->mha, cmd, &c->call, &c->io);
}

static vkattn_result attention_rec(void *user, VkCommandBuffer cmd)
{
    layer_case *c = user;
    return vkattn_attention_record(c->attention, cmd, &c->call, &c->io);
}

static void test_mha(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t B = 2, T = 19, S = 13, H = 2, dk = 8, D = 12;
    vkattn_mha_desc desc = {.num_heads = H, .key_dim = dk, .query_width = D, .value_width = D,
                            .dropout = 0.25f};
    float *w[8];
    const size_t n[8] = {D * H * dk, H * dk, D * H * dk, H * dk, D * H * dk, H * dk, H * dk * D, D};
    for (int i = 0; i < 8; i++)
        w[i] = rand_array(n[i], 0.3f);
    vkattn_mha_weights mw = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]};
    layer_case c = {.call = {.batch = B, .tq = T, .tv = S, .training = true, .seed = 3, .offset = 1}};
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &c.mha));
    TH_OK(ctx, vkattn_mha_set_weights(c.mha, &mw));
    float *x = rand_array((size_t)B * T * D, 1), *y = rand_array((size_t)B * S * D, 1);
    c.io = (vkattn_layer_io){.query = th_tensor(ctx, (size_t)B * T * D, x),
                             .value = th_tensor(ctx, (size_t)B * S * D, y),
                             .output = th_tensor(ctx, (size_t)B * T * D, NULL)};
    sliced_case sc = {.record = mha_rec, .user = &c, .out = c.io.output, .n_out = (size_t)B * T * D};
    check_sliced(ctx, &sc, "mha");
    vkattn_tensor_destroy(c.io.query), vkattn_tensor_destroy(c.io.value);
    vkattn_tensor_destroy(c.io.output);
    vkattn_mha_destroy(c.mha);
    for (int i = 0; i < 8; i++)
        free(w[i]);
    free(x), free(y);
}

static void test_attention(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t B = 2, T = 17, S = 11, D = 9;
    vkattn_attention_desc desc = {.query_width = D, .value_width = D, .dropout = 0.3f};
    layer_case c = {.call = {.batch = B, .tq = T, .tv = S, .training = true, .seed = 9}};
    TH_OK(ctx, vkattn_attention_create(ctx, &desc, &c.attention));
    float *q = rand_array((size_t)B * T * D, 1), *v = rand_array((size_t)B * S * D, 1);
    c.io = (vkattn_layer_io){.query = th_tensor(ctx, (size_t)B * T * D, q),
                             .value = th_tensor(ctx, (size_t)B * S * D, v),
                             .output = th_tensor(ctx, (size_t)B * T * D, NULL)};
    sliced_case sc = {.record = attention_rec, .user = &c, .out = c.io.output,
                      .n_out = (size_t)B * T * D};
    check_sliced(ctx, &sc, "attention");
    vkattn_tensor_destroy(c.io.query), vkattn_tensor_destroy(c.io.value);
    vkattn_tensor_destroy(c.io.output);
    vkattn_attention_destroy(c.attention);
    free(q), free(v);
}

/* --------------------------------------------------------- bad arguments */

static vkattn_result failing_rec(void *user, VkCommandBuffer cmd)
{
    vkattn_context *ctx = user;
    vkattn_matmul_params p = {0}; /* m = 0: the op refuses it */
    vkattn_matmul_io io = {0};
    return vkattn_matmul_record(ctx, cmd, &p, &io);
}

static vkattn_result timer_rec(void *user, VkCommandBuffer cmd)
{
    return vkattn_timer_mark(user, cmd, 0); /* not a *_record function */
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    sdpa_case c = {.ctx = ctx, .p = {.batch = 1, .heads = 1, .tq = 5, .tv = 6, .dk = 4}};
    sdpa_tensors(ctx, &c.p, c.t, &c.io);
    vkattn_slicer_desc d = {.record = sdpa_rec, .user = &c, .budget_us = 100};
    vkattn_slicer *s = (vkattn_slicer *)&c; /* set to NULL on failure */
    const vkattn_result bad = VKATTN_ERROR_INVALID_ARGUMENT;
    TH_EXPECT_ERROR(vkattn_slicer_create(NULL, &d, &s), bad, "ctx");
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, NULL, &s), bad, "desc");
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &d, NULL), bad, "out");
    vkattn_slicer_desc e = d;
    e.record = NULL;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "desc->record");
    assert_null(s);
    e = d;
    e.budget_us = 0;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "desc->budget_us");
    e.budget_us = NAN;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "desc->budget_us");
    e.budget_us = -5;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "desc->budget_us");
    vkattn_peak_result peak = {0};
    e = d;
    e.peak = &peak;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "desc->peak->copy_gbps");
    peak.copy_gbps = 10;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "desc->peak->fma_gflops");
    e = d;
    e.record = failing_rec;
    e.user = ctx;
    TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "vkattn_slicer_create: desc->record failed");
    assert_null(s);
    vkattn_timer *timer = NULL;
    if (vkattn_timer_create(ctx, 1, &timer) == VKATTN_SUCCESS) {
        e.record = timer_rec;
        e.user = timer;
        TH_EXPECT_ERROR(vkattn_slicer_create(ctx, &e, &s), bad, "cmd is a slicer's capture");
        vkattn_timer_destroy(timer);
    }

    TH_OK(ctx, vkattn_slicer_create(ctx, &d, &s));
    bool done = false;
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_EXPECT_ERROR(vkattn_slicer_record_next(NULL, cmd, &done), bad, "slicer");
    TH_EXPECT_ERROR(vkattn_slicer_record_next(s, VK_NULL_HANDLE, &done), bad, "cmd");
    TH_EXPECT_ERROR(vkattn_slicer_record_next(s, cmd, NULL), bad, "done");
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd)); /* empty: nothing was recorded */
    vkattn_slicer_info info;
    TH_OK(ctx, vkattn_slicer_get_info(s, &info));
    assert_int_equal(info.next_piece, 0);
    assert_int_equal(info.slices, 0);
    TH_EXPECT_ERROR(vkattn_slicer_reset(NULL), bad, "slicer");
    TH_EXPECT_ERROR(vkattn_slicer_set_budget(NULL, 5), bad, "slicer");
    TH_EXPECT_ERROR(vkattn_slicer_set_budget(s, 0), bad, "budget_us");
    TH_EXPECT_ERROR(vkattn_slicer_set_budget(s, INFINITY), bad, "budget_us");
    TH_EXPECT_ERROR(vkattn_slicer_get_info(NULL, &info), bad, "slicer");
    TH_EXPECT_ERROR(vkattn_slicer_get_info(s, NULL), bad, "info");
    vkattn_slicer_piece piece;
    TH_EXPECT_ERROR(vkattn_slicer_get_piece(NULL, 0, &piece), bad, "slicer");
    TH_EXPECT_ERROR(vkattn_slicer_get_piece(s, info.pieces, &piece), bad, "index");
    TH_EXPECT_ERROR(vkattn_slicer_get_piece(s, 0, NULL), bad, "piece");
    TH_OK(ctx, vkattn_slicer_get_piece(s, 0, &piece));
    assert_true(piece.prior_us > 0);
    assert_true(piece.measured_us < 0);
    vkattn_slicer_destroy(s);
    vkattn_slicer_destroy(NULL);
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(c.t[i]);
    th_assert_validation_clean();
}

static int split_setup(void **state) { return th_setup_with(state, NULL, 2048); }

#define SLICED_TESTS                                                                           \
    cmocka_unit_test(test_sdpa_fused), cmocka_unit_test(test_sdpa_chained),                    \
        cmocka_unit_test(test_decode), cmocka_unit_test(test_mha),                             \
        cmocka_unit_test(test_attention)

int main(void)
{
    const struct CMUnitTest tests[] = {SLICED_TESTS, cmocka_unit_test(test_two_slicers),
                                       cmocka_unit_test(test_auto_split),
                                       cmocka_unit_test(test_resplit),
                                       cmocka_unit_test(test_resplit_in_flight),
                                       cmocka_unit_test(test_bad_arguments)};
    const struct CMUnitTest split[] = {SLICED_TESTS};
    const struct CMUnitTest mobile[] = {SLICED_TESTS};
    int failed = cmocka_run_group_tests_name("slicer", tests, th_setup, th_teardown);
    failed += cmocka_run_group_tests_name("slicer_split", split, split_setup, th_teardown);
    failed += cmocka_run_group_tests_name("slicer_mobile", mobile, th_setup_mobile, th_teardown);
    return failed;
}
