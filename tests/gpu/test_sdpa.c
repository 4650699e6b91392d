/* Scaled dot-product attention vs vkattn_reference_sdpa.
 *
 * The chained path (matmul -> softmax -> dropout -> matmul) on many random
 * shapes: Tq != Tv, dk != dv, batch 1, Tq = 1, Tv = 1, grouped K/V heads
 * (H / Hkv = 1, 2, 4), every mask kind with random broadcasts, both causal
 * variants, both masked-row policies, additive bias, dropout (the same Philox
 * stream as the reference, so the same weights are dropped), weights returned
 * before and after dropout, a caller workspace and the library's, several
 * calls in one command buffer (the library workspace reused and grown while
 * an earlier call still uses it), and the AUTO / FUSED path choice.
 * Fresh random inputs (q, k, v, bias in [-1, 1]); outputs poisoned with NaN.
 *
 * Bound: max|got - ref| / max|ref| <= 2e-5 for out and weights (dk, Tv <= 128):
 * logits carry ~dk ulp of absolute error, which softmax turns into a relative
 * weight error of the same size, and out is a convex (or, with dropout,
 * 1/(1-rate)-scaled) combination of V rows.
 * The harness fails any test on a validation or synchronization-validation
 * message. */
#include "harness.h"
#include "random_case.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5

typedef struct sdpa_case {
    vkattn_sdpa_params p;
    bool caller_workspace;
    uint32_t h_kv;
    size_t nq, nk, nv, nout, nw, nbias, nmask, nvm;
    float *q, *k, *v, *bias, *mask, *vm, *ref_out, *ref_w;
    vkattn_tensor *tq, *tk, *tv, *tbias, *tmask, *tvm, *tout, *tw, *tws;
} sdpa_case;

/* Host data and reference results for c->p; GPU tensors with inputs uploaded
 * and outputs poisoned. */
static void case_prepare(vkattn_context *ctx, sdpa_case *c)
{
    vkattn_sdpa_params *p = &c->p;
    c->h_kv = p->kv_heads ? p->kv_heads : p->heads;
    const uint32_t dv = p->dv ? p->dv : p->dk;
    c->nq = (size_t)p->batch * p->heads * p->tq * p->dk;
    c->nk = (size_t)p->batch * c->h_kv * p->tv * p->dk;
    c->nv = (size_t)p->batch * c->h_kv * p->tv * dv;
    c->nout = (size_t)p->batch * p->heads * p->tq * dv;
    c->nw = (size_t)p->batch * p->heads * p->tq * p->tv;
    c->nbias = p->mask.has_bias ? rc_bcast_count(p, p->mask.bias_broadcast) : 0;
    c->nmask = p->mask.has_mask ? rc_bcast_count(p, p->mask.mask_broadcast) : 0;
    c->nvm = p->mask.has_value_mask ? (size_t)p->batch * p->tv : 0;
    c->q = tu_floats(c->nq), c->k = tu_floats(c->nk), c->v = tu_floats(c->nv);
    c->bias = tu_floats(c->nbias + 1), c->mask = tu_floats(c->nmask + 1);
    c->vm = tu_floats(c->nvm + 1);
    c->ref_out = tu_floats(c->nout), c->ref_w = tu_floats(c->nw);
    tu_fill_uniform(c->q, c->nq, -1, 1);
    tu_fill_uniform(c->k, c->nk, -1, 1);
    tu_fill_uniform(c->v, c->nv, -1, 1);
    tu_fill_uniform(c->bias, c->nbias, -1, 1);
    tu_fill_mask(c->mask, c->nmask, 0.75f);
    tu_fill_mask(c->vm, c->nvm, 0.8f);
    tu_poison(c->ref_out, c->nout);
    tu_poison(c->ref_w, c->nw);
    TH_OK(ctx, vkattn_reference_sdpa(p, NULL, c->q, c->k, c->v, c->nbias ? c->bias : NULL,
                                     c->nvm ? c->vm : NULL, c->nmask ? c->mask : NULL, c->ref_out,
                                     p->return_weights ? c->ref_w : NULL));

    c->tq = th_tensor(ctx, c->nq, c->q), c->tk = th_tensor(ctx, c->nk, c->k);
    c->tv = th_tensor(ctx, c->nv, c->v);
    c->tbias = c->nbias ? th_tensor(ctx, c->nbias, c->bias) : NULL;
    c->tmask = c->nmask ? th_tensor(ctx, c->nmask, c->mask) : NULL;
    c->tvm = c->nvm ? th_tensor(ctx, c->nvm, c->vm) : NULL;
    c->tout = th_tensor(ctx, c->nout, NULL);
    c->tw = p->return_weights ? th_tensor(ctx, c->nw, NULL) : NULL;
    c->tws = NULL;
    if (c->caller_workspace) {
        uint64_t floats = 0;
        TH_OK(ctx, vkattn_sdpa_workspace_size(ctx, p, &floats));
        /* a few spare floats: a larger workspace is fine */
        c->tws = floats ? th_tensor(ctx, floats + tu_rand_range(0, 3), NULL) : NULL;
    }
}

static vkattn_sdpa_io case_io(const sdpa_case *c)
{
    return (vkattn_sdpa_io){.q = c->tq, .k = c->tk, .v = c->tv, .bias = c->tbias,
                            .value_mask = c->tvm, .mask = c->tmask, .out = c->tout,
                            .weights = c->tw, .workspace = c->tws};
}

static void case_describe(const sdpa_case *c, char *buf, size_t size)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    snprintf(buf, size,
             "sdpa B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u scale=%g causal=%d row=%d vm=%d "
             "mask=%d[%d%d%d] bias=%d[%d%d%d] drop=%g/%d w=%d/%d ws=%s path=%d window=%u",
             p->batch, p->heads, c->h_kv, p->tq, p->tv, p->dk, p->dv, (double)p->scale, m->causal,
             m->masked_row, m->has_value_mask, m->has_mask, m->mask_broadcast.batch,
             m->mask_broadcast.heads, m->mask_broadcast.rows, m->has_bias,
             m->bias_broadcast.batch, m->bias_broadcast.heads, m->bias_broadcast.rows,
             (double)p->dropout.rate, p->dropout.training, p->return_weights,
             p->weights_after_dropout, c->caller_workspace ? "caller" : "library", p->path,
             p->sliding_window);
}

static void case_check(const sdpa_case *c, double bound)
{
    char what[400];
    case_describe(c, what, sizeof what);
    float *got = th_download(c->tout, c->nout);
    TU_ASSERT_CLOSE(got, c->ref_out, c->nout, bound, what);
    free(got);
    if (c->p.return_weights) {
        got = th_download(c->tw, c->nw);
        strncat(what, " (weights)", sizeof what - strlen(what) - 1);
        TU_ASSERT_CLOSE(got, c->ref_w, c->nw, bound, what);
        free(got);
    }
}

static void case_free(sdpa_case *c)
{
    vkattn_tensor *ts[] = {c->tq, c->tk, c->tv, c->tbias, c->tmask, c->tvm, c->tout, c->tw, c->tws};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    float *fs[] = {c->q, c->k, c->v, c->bias, c->mask, c->vm, c->ref_out, c->ref_w};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

static void run_case(vkattn_context *ctx, sdpa_case *c)
{
    case_prepare(ctx, c);
    vkattn_sdpa_io io = case_io(c);
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c->p, &io));
    case_check(c, BOUND);
    th_assert_validation_clean();
    case_free(c);
}

/* Random params (random_case.h, batch and K/V heads 1..3), chained, with
 * the weights returned at random and the caller's workspace at random. */
static sdpa_case random_case(uint32_t max_t, uint32_t max_d)
{
    const rc_sdpa_bounds bounds = {.max_batch = 3, .max_kv_heads = 3, .max_t = max_t,
                                   .max_d = max_d};
    sdpa_case c = {.p = rc_random_sdpa(&bounds), .caller_workspace = tu_rand_range(0, 1)};
    c.p.return_weights = tu_rand_range(0, 1), c.p.weights_after_dropout = tu_rand_range(0, 1);
    c.p.path = VKATTN_SDPA_UNFUSED;
    return c;
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 40; i++) {
        sdpa_case c = random_case(40, 40);
        run_case(ctx, &c);
    }
}

/* The sliding window (rc_random_window: 1, within the lengths, or wider than
 * both) on random chained calls: every mask kind, both causal alignments,
 * dropout, grouped K/V heads, weights returned. */
static void test_sliding_window(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 24; i++) {
        sdpa_case c = random_case(40, 24);
        c.p.sliding_window = rc_random_window(c.p.tq, c.p.tv);
        run_case(ctx, &c);
    }
}

/* The edges: one query, one key, batch 1, both at once, widths 1. */
static void test_edge_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][7] = {
        /* B, H, Hkv, Tq, Tv, dk, dv */
        {1, 1, 1, 1, 1, 1, 1},   {1, 1, 1, 1, 17, 8, 3},  {2, 4, 1, 1, 33, 16, 16},
        {1, 2, 2, 19, 1, 5, 9},  {1, 8, 2, 7, 7, 64, 32}, {3, 4, 4, 13, 29, 3, 1},
        {1, 4, 2, 65, 63, 33, 17}, {1, 1, 1, 128, 100, 128, 64},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int variant = 0; variant < 2; variant++) {
            const uint32_t *d = shapes[s];
            sdpa_case c = {
                .p = {.batch = d[0], .heads = d[1], .kv_heads = d[2], .tq = d[3], .tv = d[4],
                      .dk = d[5], .dv = d[6], .path = VKATTN_SDPA_UNFUSED,
                      .mask = {.causal = variant ? VKATTN_CAUSAL_BOTTOM_RIGHT : VKATTN_CAUSAL_NONE,
                               .has_value_mask = variant},
                      .dropout = {.rate = 0.25f, .training = variant, .seed = 77 + s},
                      .return_weights = s % 2, .weights_after_dropout = variant},
                .caller_workspace = s % 3 == 0,
            };
            run_case(ctx, &c);
        }
}

/* Each mask kind alone, then all together, for both causal variants and
 * both masked-row policies, on a shape with Tq != Tv either way. */
static void test_every_mask_kind(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int kind = 0; kind < 6; kind++)
        for (int wide = 0; wide < 2; wide++) {
            sdpa_case c = {.p = {.batch = 2, .heads = 4, .kv_heads = 2, .tq = wide ? 9 : 21,
                                 .tv = wide ? 23 : 10, .dk = 12, .dv = 7,
                                 .path = VKATTN_SDPA_UNFUSED,
                                 .mask = {.masked_row = (vkattn_masked_row)wide}}};
            vkattn_mask_params *m = &c.p.mask;
            switch (kind) {
            case 0: m->causal = VKATTN_CAUSAL_TOP_LEFT; break;
            case 1: m->causal = VKATTN_CAUSAL_BOTTOM_RIGHT; break;
            case 2: m->has_value_mask = true; break;
            case 3: m->has_mask = true, m->mask_broadcast = rc_broadcast(); break;
            case 4: m->has_bias = true, m->bias_broadcast = rc_broadcast(); break;
            default:
                *m = (vkattn_mask_params){.causal = (vkattn_causal)(1 + wide),
                                          .masked_row = (vkattn_masked_row)wide,
                                          .has_value_mask = true, .has_mask = true,
                                          .has_bias = true};
            }
            c.p.return_weights = true;
            run_case(ctx, &c);
        }
}

/* Dropout on: the returned weights before and after it, both workspaces;
 * the same stream as the reference drops the same weights. */
static void test_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 8; i++) {
        sdpa_case c = {
            .p = {.batch = 1 + i % 2, .heads = 4, .kv_heads = i % 3 ? 2 : 4, .tq = 11 + i,
                  .tv = 30 - i, .dk = 16, .dv = 9, .path = VKATTN_SDPA_UNFUSED,
                  .mask = {.causal = (vkattn_causal)(i % 3)},
                  .dropout = {.rate = i == 7 ? 1.0f : 0.1f * (i + 1), .training = true,
                              .seed = 0x123456789ull * (i + 1), .offset = i},
                  .return_weights = i % 4 != 3, .weights_after_dropout = i % 2},
            .caller_workspace = (i / 2) % 2,
        };
        run_case(ctx, &c);
    }
}

/* vkattn_sdpa_workspace_size: scores unless the weights can hold them. */
static void test_workspace_size(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_sdpa_params p = {.batch = 2, .heads = 3, .tq = 5, .tv = 7, .dk = 4,
                            .path = VKATTN_SDPA_UNFUSED,
                            .dropout = {.rate = 0.5f, .training = true}};
    const uint64_t scores = 2 * 3 * 5 * 7;
    uint64_t n = 1;
    TH_OK(ctx, vkattn_sdpa_workspace_size(ctx, &p, &n));
    assert_int_equal(n, scores);
    p.return_weights = true; /* before dropout: dropout writes the workspace */
    TH_OK(ctx, vkattn_sdpa_workspace_size(ctx, &p, &n));
    assert_int_equal(n, scores);
    p.weights_after_dropout = true; /* dropout in place on the weights */
    TH_OK(ctx, vkattn_sdpa_workspace_size(ctx, &p, &n));
    assert_int_equal(n, 0);
    p.weights_after_dropout = false;
    p.dropout.training = false; /* no dropout: the weights hold everything */
    TH_OK(ctx, vkattn_sdpa_workspace_size(ctx, &p, &n));
    assert_int_equal(n, 0);
}

/* Several calls in one command buffer on the library workspace: the second
 * needs more, so the workspace grows while the first call (recorded, not yet
 * executed) still uses the old one; the third reuses it after a read by the
 * second. All exact and clean under synchronization validation. */
static void test_one_command_buffer_library_workspace(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    sdpa_case cs[3] = {
        {.p = {.batch = 1, .heads = 2, .tq = 5, .tv = 6, .dk = 8, .path = VKATTN_SDPA_UNFUSED}},
        {.p = {.batch = 2, .heads = 4, .kv_heads = 1, .tq = 31, .tv = 40, .dk = 8, .dv = 5,
               .path = VKATTN_SDPA_UNFUSED, .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT},
               .dropout = {.rate = 0.3f, .training = true, .seed = 5},
               .return_weights = true}},
        {.p = {.batch = 1, .heads = 2, .tq = 9, .tv = 3, .dk = 2, .dv = 6,
               .path = VKATTN_SDPA_UNFUSED, .mask = {.has_value_mask = true}}},
    };
    uint64_t before = 0, after = 0;
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    /* with few bindings per shader (mobile-min) softmax also grows the pack
     * buffer for the value mask: only the workspace's growth is checked */
    const bool packs = info.max_storage_buffers_per_stage < 8;
    for (int i = 0; i < 3; i++)
        case_prepare(ctx, &cs[i]);
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    for (int i = 0; i < 3; i++) {
        vkattn_sdpa_io io = case_io(&cs[i]);
        TH_OK(ctx, vkattn_context_memory_usage(ctx, &before, NULL));
        TH_OK(ctx, vkattn_sdpa_record(ctx, cmd, &cs[i].p, &io));
        TH_OK(ctx, vkattn_context_memory_usage(ctx, &after, NULL));
        if (i == 1)
            assert_true(after > before); /* grown while call 0 still uses the old one */
        if (i == 2 && !packs)
            assert_true(after == before); /* reused, not reallocated */
    }
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    for (int i = 0; i < 3; i++) {
        case_check(&cs[i], BOUND);
        case_free(&cs[i]);
    }
    th_assert_validation_clean();
}

/* AUTO and FUSED: the public entry hands calls without returned weights to
 * the fused kernel where it can; results agree with the reference either way. */
static void test_path_choice(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 6; i++) {
        sdpa_case c = random_case(24, 32);
        c.p.return_weights = false;
        c.p.path = i % 2 ? VKATTN_SDPA_FUSED : VKATTN_SDPA_AUTO;
        uint64_t n = 0;
        vkattn_result r = vkattn_sdpa_workspace_size(ctx, &c.p, &n);
        if (c.p.path == VKATTN_SDPA_FUSED && (r == VKATTN_ERROR_UNSUPPORTED || r == VKATTN_ERROR_DEVICE_LIMIT)) {
            printf("# fused path unsupported here: %s\n", vkattn_context_last_error(ctx));
            continue;
        }
        TH_OK(ctx, r);
        if (c.p.path == VKATTN_SDPA_FUSED)
            assert_int_equal(n, 0);
        run_case(ctx, &c);
    }
    /* AUTO with weights returned is always the chained path */
    sdpa_case c = random_case(16, 16);
    c.p.path = VKATTN_SDPA_AUTO;
    c.p.return_weights = true;
    run_case(ctx, &c);
}

/* AUTO (fused where supported), then chained, then AUTO again in one command
 * buffer: whatever each path binds (the context's read-only dummy buffer for
 * absent operands included), the sequence must be clean under
 * synchronization validation. */
static void test_paths_in_one_command_buffer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    sdpa_case cs[3];
    for (int i = 0; i < 3; i++) {
        cs[i] = (sdpa_case){.p = {.batch = 2, .heads = 4, .kv_heads = 2, .tq = 7 + i, .tv = 12,
                                  .dk = 8, .dv = 6, .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT},
                                  .path = i == 1 ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO}};
        case_prepare(ctx, &cs[i]);
    }
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    for (int i = 0; i < 3; i++) {
        vkattn_sdpa_io io = case_io(&cs[i]);
        TH_OK(ctx, vkattn_sdpa_record(ctx, cmd, &cs[i].p, &io));
    }
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    for (int i = 0; i < 3; i++) {
        case_check(&cs[i], BOUND);
        case_free(&cs[i]);
    }
    th_assert_validation_clean();
}

/* The score tensor must fit one binding: H heads of 2048 x 2048 scores are
 * 16 MiB each; the largest H that fits passes the size check (128 MiB exactly
 * on lavapipe: H = 8), one more fails with DEVICE_LIMIT, before any tensor is
 * looked at or allocated (tiny dummy tensors here). */
static void test_score_tensor_limit(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    const uint64_t per_head = 2048ull * 2048 * sizeof(float);
    const uint64_t h_ok = info.max_storage_buffer_range / per_head;
    if (h_ok < 1 || h_ok >= 0xFFFFu)
        skip();
    vkattn_sdpa_params p = {.batch = 1, .heads = (uint32_t)h_ok, .tq = 2048, .tv = 2048, .dk = 1,
                            .path = VKATTN_SDPA_UNFUSED};
    uint64_t n = 0;
    TH_OK(ctx, vkattn_sdpa_workspace_size(ctx, &p, &n));
    assert_int_equal(n, h_ok * 2048 * 2048);
    p.heads++;
    assert_int_equal(vkattn_sdpa_workspace_size(ctx, &p, &n), VKATTN_ERROR_DEVICE_LIMIT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "fused"));
    vkattn_tensor *t = th_tensor(ctx, 4, NULL), *o = th_tensor(ctx, 4, NULL);
    vkattn_sdpa_io io = {.q = t, .k = t, .v = t, .out = o};
    assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_DEVICE_LIMIT);
    p.path = VKATTN_SDPA_AUTO; /* weights need the score tensor whatever the path */
    p.return_weights = true;
    io.weights = o;
    io.out = th_tensor(ctx, 4, NULL);
    assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_DEVICE_LIMIT);
    assert_int_equal(vkattn_sdpa_workspace_size(ctx, &p, &n), VKATTN_ERROR_DEVICE_LIMIT);
    /* AUTO without weights: fused (no workspace) where the kernel takes the
     * shape; where it does not (dk = 300 is wider than it may serve), the
     * chained path's limit, with a message that does not suggest the fused path */
    p.return_weights = false;
    for (uint32_t dk = 1; dk <= 300; dk += 299) {
        p.dk = dk;
        vkattn_result r = vkattn_sdpa_workspace_size(ctx, &p, &n);
        if (r == VKATTN_SUCCESS) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(r, VKATTN_ERROR_DEVICE_LIMIT);
            assert_non_null(strstr(vkattn_context_last_error(ctx), "cannot serve"));
        }
    }
    vkattn_tensor_destroy(t), vkattn_tensor_destroy(o), vkattn_tensor_destroy(io.out);
    th_assert_validation_clean();
}

static void expect_invalid(vkattn_context *ctx, const vkattn_sdpa_params *p,
                           const vkattn_sdpa_io *io, const char *needle)
{
    assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, p, io), VKATTN_ERROR_INVALID_ARGUMENT);
    if (needle && !strstr(vkattn_context_last_error(ctx), needle))
        fail_msg("expected \"%s\" in: %s", needle, vkattn_context_last_error(ctx));
}

/* The fused path's log-sum-exp: for an allowed key j of row i,
 * lse_i = logit_ij - log(w_ij); checked at the row's largest weight. Rows with
 * no allowed key (value mask + causal bottom-right with Tq > Tv) give -inf. */
static void test_log_sum_exp(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 4; n++) {
        sdpa_case c = {.p = {.batch = tu_rand_range(1, 2), .heads = 2, .kv_heads = n % 2 ? 1 : 2,
                             .tq = tu_rand_range(1, 40), .tv = tu_rand_range(1, 40),
                             .dk = tu_rand_range(1, 24), .dv = tu_rand_range(1, 24),
                             .scale = n == 0 ? 0.0f : 0.3f, .return_weights = false}};
        c.p.mask.has_value_mask = n >= 2;
        c.p.mask.causal = n == 3 ? VKATTN_CAUSAL_BOTTOM_RIGHT : VKATTN_CAUSAL_NONE;
        if (n == 3)
            c.p.tq = c.p.tv + 3;
        case_prepare(ctx, &c);
        const size_t rows = (size_t)c.p.batch * c.p.heads * c.p.tq;
        vkattn_tensor *tlse = th_tensor(ctx, rows, NULL);
        vkattn_sdpa_io io = case_io(&c);
        io.lse = tlse;
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c.p, &io));
        case_check(&c, BOUND);
        float *lse = th_download(tlse, rows);

        /* reference weights (before dropout: there is none) */
        vkattn_sdpa_params pw = c.p;
        pw.return_weights = true;
        float *out = tu_floats(c.nout), *w = tu_floats(c.nw);
        TH_OK(ctx, vkattn_reference_sdpa(&pw, NULL, c.q, c.k, c.v, NULL, c.nvm ? c.vm : NULL, NULL, out, w));
        const double scale = c.p.scale ? c.p.scale : 1.0 / sqrt((double)c.p.dk);
        const uint32_t group = c.p.heads / c.h_kv;
        for (size_t r = 0; r < rows; r++) {
            const size_t b = r / ((size_t)c.p.heads * c.p.tq), h = r / c.p.tq % c.p.heads;
            const size_t i = r % c.p.tq, kvh = b * c.h_kv + h / group;
            size_t best = 0;
            for (size_t j = 1; j < c.p.tv; j++)
                if (w[r * c.p.tv + j] > w[r * c.p.tv + best])
                    best = j;
            if (w[r * c.p.tv + best] == 0.0f) {
                assert_true(isinf(lse[r]) && lse[r] < 0);
                continue;
            }
            double dot = 0;
            for (size_t d = 0; d < c.p.dk; d++)
                dot += (double)c.q[r * c.p.dk + d] * c.k[(kvh * c.p.tv + best) * c.p.dk + d];
            (void)i;
            double want = dot * scale - log((double)w[r * c.p.tv + best]);
            if (!TU_WITHIN(fabs(lse[r] - want), 1e-5 * (1.0 + fabs(want))))
                fail_msg("lse row %zu: got %.9g, want %.9g", r, (double)lse[r], want);
        }
        free(lse), free(out), free(w);
        vkattn_tensor_destroy(tlse);

        /* the chained path cannot write it */
        c.p.path = VKATTN_SDPA_UNFUSED;
        vkattn_tensor *t2 = th_tensor(ctx, rows, NULL);
        io.lse = t2;
        assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c.p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_context_last_error(ctx), "io->lse"));
        vkattn_tensor_destroy(t2);
        th_assert_validation_clean();
        case_free(&c);
    }
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* B=1, H=2, Tq=3, Tv=4, dk=5, dv=5: q 30, k 40, v 40, out 30, weights 24 */
    vkattn_tensor *q = th_tensor(ctx, 30, NULL), *k = th_tensor(ctx, 40, NULL);
    vkattn_tensor *v = th_tensor(ctx, 40, NULL), *out = th_tensor(ctx, 30, NULL);
    vkattn_tensor *w = th_tensor(ctx, 24, NULL), *small = th_tensor(ctx, 23, NULL);
    const vkattn_sdpa_params good = {.batch = 1, .heads = 2, .tq = 3, .tv = 4, .dk = 5,
                                     .path = VKATTN_SDPA_UNFUSED};
    const vkattn_sdpa_io io = {.q = q, .k = k, .v = v, .out = out};
    vkattn_sdpa_params p = good;
    vkattn_sdpa_io b = io;

    assert_int_equal(vkattn_sdpa_record(NULL, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_sdpa_record(ctx, VK_NULL_HANDLE, &p, &io),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    expect_invalid(ctx, NULL, &io, "params is NULL");
    expect_invalid(ctx, &p, NULL, "io is NULL");
    assert_int_equal(vkattn_sdpa_workspace_size(ctx, &p, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    p.tv = 0, expect_invalid(ctx, &p, &io, "tv is 0"), p = good;
    p.dk = 0, expect_invalid(ctx, &p, &io, "dk is 0"), p = good;
    p.batch = 0, expect_invalid(ctx, &p, &io, "batch is 0"), p = good;
    p.kv_heads = 3, expect_invalid(ctx, &p, &io, "kv_heads"), p = good;
    p.scale = NAN, expect_invalid(ctx, &p, &io, "scale"), p = good;
    p.scale = INFINITY, expect_invalid(ctx, &p, &io, "scale"), p = good;
    p.mask.causal = (vkattn_causal)3, expect_invalid(ctx, &p, &io, "causal"), p = good;
    p.mask.masked_row = (vkattn_masked_row)2, expect_invalid(ctx, &p, &io, "masked_row"), p = good;
    p.path = (vkattn_sdpa_path)3, expect_invalid(ctx, &p, &io, "path"), p = good;
    const float bad_rates[] = {-0.1f, 1.5f, NAN};
    for (int i = 0; i < 3; i++) {
        p.dropout.rate = bad_rates[i];
        p.dropout.training = i % 2;
        expect_invalid(ctx, &p, &io, "rate");
        uint64_t n;
        assert_int_equal(vkattn_sdpa_workspace_size(ctx, &p, &n), VKATTN_ERROR_INVALID_ARGUMENT);
    }
    p = good;
    /* tensors: missing, too small, unexpected, aliased */
    b.k = NULL, expect_invalid(ctx, &p, &b, "io->k is NULL"), b = io;
    b.out = small, expect_invalid(ctx, &p, &b, "io->out"), b = io;
    b.v = small, expect_invalid(ctx, &p, &b, "io->v"), b = io;
    p.mask.has_bias = true, expect_invalid(ctx, &p, &b, "io->bias"), p = good;
    b.mask = w, expect_invalid(ctx, &p, &b, "has_mask"), b = io;
    b.weights = w, expect_invalid(ctx, &p, &b, "return_weights"), b = io;
    p.return_weights = true, expect_invalid(ctx, &p, &b, "io->weights"), p = good;
    p.return_weights = true, b.weights = small, expect_invalid(ctx, &p, &b, "io->weights");
    p = good, b = io;
    b.out = q, expect_invalid(ctx, &p, &b, "io->out"), b = io;
    p.return_weights = true, b.weights = w, b.workspace = w;
    p.dropout = (vkattn_dropout_params){.rate = 0.5f, .training = true};
    expect_invalid(ctx, &p, &b, "io->workspace"); /* weights also bound as workspace */
    b.workspace = small; /* 23 < 24 floats */
    expect_invalid(ctx, &p, &b, "io->workspace");
    p = good, b = io;
    p.return_weights = true, p.path = VKATTN_SDPA_FUSED, b.weights = w;
    expect_invalid(ctx, &p, &b, "return_weights");
    p = good, b = io;
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &b));
    vkattn_tensor *ts[] = {q, k, v, out, w, small};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: it needs the library workspace to grow mid-buffer */
        cmocka_unit_test(test_one_command_buffer_library_workspace),
        cmocka_unit_test(test_edge_shapes),
        cmocka_unit_test(test_every_mask_kind),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_random_shapes),
        cmocka_unit_test(test_sliding_window),
        cmocka_unit_test(test_workspace_size),
        cmocka_unit_test(test_path_choice),
        cmocka_unit_test(test_paths_in_one_command_buffer),
        cmocka_unit_test(test_score_tensor_limit),
        cmocka_unit_test(test_log_sum_exp),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
