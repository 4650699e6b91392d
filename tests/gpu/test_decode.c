/* Decode attention against a KV cache vs vkattn_reference_sdpa_decode and vs
 * the full vkattn_sdpa (bottom-right causal), plus the cache's append, reset
 * and bad-input paths.
 *
 * Bad params: one table that the op and the reference must refuse with the
 * same code and message (they share src/shape/decode_plan.c).
 *
 * Shapes: B 1..3 with ragged lengths (0, 1, not multiples of the 64-key tile,
 * the capacity), H = Hkv and grouped heads, Tq 1..5 and 17, dk != dv, widths
 * not multiples of 4; value mask; dropout. Sequences with L_b < Tq are
 * defined: rows that see no key are zeros (L_b = 0: every row).
 *
 * Cost: on lavapipe a new pipeline (widths, rows per workgroup, mask, dropout
 * are specialization constants) costs about a second to several (dk 96 with 8
 * rows: 20 s), while batch, capacity and lengths are free. So the random
 * cases share one small pipeline shape and vary what is not compiled in; the
 * shape-specific cases are few and narrow. The whole file takes under a
 * minute on lavapipe, for three GPU passes plus ASan in CI.
 * Outputs poisoned with NaN first. Bound: max|got - ref| / max|ref| <= 2e-5
 * (fp32 logits over dk <= 96 terms and a convex combination of V rows; the
 * split only regroups the sums). */
#include "harness.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5

typedef struct dcase {
    vkattn_sdpa_decode_params p;
    uint32_t kvh, dv, lengths[3];
} dcase;

/* Fills the cache by appends of random rows (one append per distinct chunk,
 * counts for ragged lengths), decodes once per entry of `splits`
 * (params.num_splits; c's own where n_splits is 0), compares each with the
 * reference. got[i], where got is given, keeps the output of splits[i]. */
static void run_case_splits(vkattn_context *ctx, const dcase *c, const uint32_t *splits,
                            size_t n_splits, float **got_out)
{
    const vkattn_sdpa_decode_params *p = &c->p;
    const uint32_t B = p->batch, cap = p->capacity;
    vkattn_kv_cache_desc cd = {B, c->kvh, cap, p->dk, c->dv, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nk = (size_t)B * c->kvh * cap * p->dk, nv = (size_t)B * c->kvh * cap * c->dv;
    float *k = tu_floats(nk), *v = tu_floats(nv);
    tu_fill_uniform(k, nk, -1, 1);
    tu_fill_uniform(v, nv, -1, 1);
    /* append everything in one ragged append of Tnew = max length */
    uint32_t tmax = 0;
    for (uint32_t b = 0; b < B; b++)
        tmax = c->lengths[b] > tmax ? c->lengths[b] : tmax;
    if (tmax) {
        const size_t ak = (size_t)B * c->kvh * tmax * p->dk, av = (size_t)B * c->kvh * tmax * c->dv;
        float *kn = tu_floats(ak), *vn = tu_floats(av), counts[3];
        for (uint32_t bh = 0; bh < B * c->kvh; bh++)
            for (uint32_t t = 0; t < tmax; t++) {
                memcpy(kn + ((size_t)bh * tmax + t) * p->dk, k + ((size_t)bh * cap + t) * p->dk,
                       sizeof(float) * p->dk);
                memcpy(vn + ((size_t)bh * tmax + t) * c->dv, v + ((size_t)bh * cap + t) * c->dv,
                       sizeof(float) * c->dv);
            }
        for (uint32_t b = 0; b < B; b++)
            counts[b] = (float)c->lengths[b];
        vkattn_tensor_desc kd = {4, {B, c->kvh, tmax, p->dk}}, vd = {4, {B, c->kvh, tmax, c->dv}};
        vkattn_tensor *tk, *tv, *tc = th_tensor(ctx, B, counts);
        TH_OK(ctx, vkattn_tensor_create(ctx, &kd, &tk));
        TH_OK(ctx, vkattn_tensor_create(ctx, &vd, &tv));
        TH_OK(ctx, vkattn_tensor_upload(tk, kn, 0, ak));
        TH_OK(ctx, vkattn_tensor_upload(tv, vn, 0, av));
        vkattn_kv_append_io aio = {tk, tv, tc};
        TH_OK(ctx, vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &aio));
        vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tc);
        free(kn), free(vn);
    }
    uint32_t got_len[3];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, got_len, NULL));
    for (uint32_t b = 0; b < B; b++)
        assert_int_equal(got_len[b], c->lengths[b]);

    const size_t nq = (size_t)B * p->heads * p->tq * p->dk, no = (size_t)B * p->heads * p->tq * c->dv;
    float *q = tu_floats(nq), *ref = tu_floats(no), *vm = NULL;
    tu_fill_uniform(q, nq, -1, 1);
    vkattn_tensor *tvm = NULL;
    if (p->has_value_mask) {
        vm = tu_floats((size_t)B * cap);
        tu_fill_mask(vm, (size_t)B * cap, 0.8f);
        tvm = th_tensor(ctx, (size_t)B * cap, vm);
    }
    TH_OK(ctx, vkattn_reference_sdpa_decode(p, NULL, q, k, v, c->lengths, vm, ref));
    vkattn_tensor *tq = th_tensor(ctx, nq, q);
    for (size_t i = 0; i < (n_splits ? n_splits : 1); i++) {
        vkattn_sdpa_decode_params pi = *p;
        if (n_splits)
            pi.num_splits = splits[i];
        vkattn_tensor *tout = th_tensor(ctx, no, NULL); /* poisoned */
        vkattn_sdpa_decode_io io = {tq, cache, tvm, tout};
        TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &pi, &io));
        float *got = th_download(tout, no);
        const double err = tu_max_rel_err(got, ref, no, 1e-6);
        if (!TU_WITHIN(err, BOUND))
            fail_msg("B %u H %u Hkv %u Tq %u cap %u dk %u dv %u window %u splits %u "
                     "L %u,%u,%u: rel err %g",
                     B, p->heads, c->kvh, p->tq, cap, p->dk, c->dv, p->sliding_window,
                     pi.num_splits, c->lengths[0], B > 1 ? c->lengths[1] : 0,
                     B > 2 ? c->lengths[2] : 0, err);
        if (got_out)
            got_out[i] = got;
        else
            free(got);
        vkattn_tensor_destroy(tout);
    }
    free(q), free(ref), free(vm), free(k), free(v);
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tvm);
    vkattn_kv_cache_destroy(cache);
}

static void run_case(vkattn_context *ctx, const dcase *c)
{
    run_case_splits(ctx, c, NULL, 0, NULL);
}

/* Random batch, capacity and ragged lengths (0, 1, the capacity, anything) in
 * one pipeline shape: H 4 over Hkv 2, Tq 2, dk 20, dv 12. */
static void random_lengths(dcase *c, bool value_mask)
{
    memset(c, 0, sizeof *c);
    vkattn_sdpa_decode_params *p = &c->p;
    p->batch = tu_rand_range(1, 3);
    c->kvh = p->kv_heads = 2;
    p->heads = 4;
    p->tq = 2;
    p->capacity = tu_rand_range(1, 300);
    p->dk = 20;
    c->dv = p->dv = 12;
    for (uint32_t b = 0; b < p->batch; b++) {
        const uint32_t pick = tu_rand_range(0, 5);
        c->lengths[b] = pick == 0 ? 0 : pick == 1 ? 1 : pick == 2 ? p->capacity
                                                     : tu_rand_range(0, p->capacity);
    }
    p->has_value_mask = value_mask;
}

/* params.num_splits: each count agrees with the reference - one split, a
 * few, more than the 300 keys allow (clamped to the keys), more than the cap
 * of 256 - with and without a window. And the count is really used: one
 * split and four group the sums differently, so somewhere among the 192
 * outputs the last bits differ (with every length at the capacity, each
 * split holds keys). */
static void test_num_splits(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    dcase c;
    random_lengths(&c, false);
    c.p.batch = 2;
    c.p.capacity = c.lengths[0] = c.lengths[1] = 300;
    static const uint32_t splits[] = {1, 4, 3, 1000, 0};
    float *got[5];
    run_case_splits(ctx, &c, splits, 5, got);
    const size_t no = (size_t)c.p.batch * c.p.heads * c.p.tq * c.dv;
    assert_true(memcmp(got[0], got[1], sizeof(float) * no) != 0);
    for (int i = 0; i < 5; i++)
        free(got[i]);
    c.p.sliding_window = 70;
    run_case_splits(ctx, &c, splits, 5, NULL);
    th_assert_validation_clean();
}

static void test_ragged_lengths(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 8; n++) {
        dcase c;
        random_lengths(&c, n >= 6); /* the last two with a value mask */
        run_case(ctx, &c);
    }
    th_assert_validation_clean();
}

/* A few random widths and groupings, kept narrow (dk, dv <= 48, at most 4
 * query rows per K/V head) so each new pipeline stays cheap. */
static void test_random_widths(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 3; n++) {
        dcase c;
        random_lengths(&c, false);
        c.kvh = c.p.kv_heads = tu_rand_range(1, 2);
        c.p.heads = c.kvh * tu_rand_range(1, 2);
        c.p.tq = tu_rand_range(1, 2);
        c.p.dk = tu_rand_range(1, 48);
        c.dv = c.p.dv = tu_rand_range(1, 48);
        run_case(ctx, &c);
    }
    th_assert_validation_clean();
}

/* The shapes the kernel specializes on, one case each, narrow widths. */
static void test_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const dcase cases[] = {
        /* H = Hkv, Tq 1, widths not multiples of 4, dv > dk */
        {.p = {.batch = 2, .heads = 3, .kv_heads = 3, .tq = 1, .capacity = 150, .dk = 33, .dv = 47},
         .kvh = 3, .dv = 47, .lengths = {150, 77}},
        /* Tq 17: more rows than one workgroup holds (several row blocks), L < Tq */
        {.p = {.batch = 2, .heads = 2, .kv_heads = 2, .tq = 17, .capacity = 200, .dk = 8, .dv = 5},
         .kvh = 2, .dv = 5, .lengths = {130, 9}},
        /* groups of 3 query heads per K/V head, Tq 5, dk 1 */
        {.p = {.batch = 1, .heads = 6, .kv_heads = 2, .tq = 5, .capacity = 70, .dk = 1, .dv = 9},
         .kvh = 2, .dv = 9, .lengths = {70}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(ctx, &cases[i]);
    th_assert_validation_clean();
}

static void test_long_and_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    dcase c = {.p = {.batch = 2, .heads = 8, .kv_heads = 2, .tq = 3, .capacity = 5000, .dk = 16,
                     .dv = 8, .dropout = {.rate = 0.3f, .training = true, .seed = 7, .offset = 3}},
               .kvh = 2, .dv = 8, .lengths = {4999, 130}};
    run_case(ctx, &c);
    c.p.dropout.training = false;
    c.lengths[0] = 5000, c.lengths[1] = 64;
    run_case(ctx, &c);
    th_assert_validation_clean();
}

/* Decode equals the full SDPA with bottom-right causal over the same keys,
 * dropout included (the same keep bits); with a sliding window, the full SDPA
 * with the same window (the band anchored bottom-right). */
static void equals_full_sdpa(vkattn_context *ctx, uint32_t window)
{
    const uint32_t B = 2, H = 4, HKV = 2, TQ = 4, L = 200, CAP = 256, DK = 16, DV = 12;
    vkattn_kv_cache_desc cd = {B, HKV, CAP, DK, DV, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nk = (size_t)B * HKV * L * DK, nv = (size_t)B * HKV * L * DV;
    float *k = tu_floats(nk), *v = tu_floats(nv);
    tu_fill_uniform(k, nk, -1, 1), tu_fill_uniform(v, nv, -1, 1);
    vkattn_tensor_desc kd = {4, {B, HKV, L, DK}}, vd = {4, {B, HKV, L, DV}};
    vkattn_tensor *tk, *tv;
    TH_OK(ctx, vkattn_tensor_create(ctx, &kd, &tk));
    TH_OK(ctx, vkattn_tensor_create(ctx, &vd, &tv));
    TH_OK(ctx, vkattn_tensor_upload(tk, k, 0, nk));
    TH_OK(ctx, vkattn_tensor_upload(tv, v, 0, nv));
    vkattn_kv_append_io aio = {tk, tv, NULL};
    TH_OK(ctx, vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &aio));
    const size_t nq = (size_t)B * H * TQ * DK, no = (size_t)B * H * TQ * DV;
    float *q = tu_floats(nq);
    tu_fill_uniform(q, nq, -1, 1);
    vkattn_tensor *tq = th_tensor(ctx, nq, q), *o1 = th_tensor(ctx, no, NULL),
                  *o2 = th_tensor(ctx, no, NULL);
    const vkattn_dropout_params drop = {.rate = 0.25f, .training = true, .seed = 99, .offset = 5};
    vkattn_sdpa_decode_params dp = {.batch = B, .heads = H, .kv_heads = HKV, .tq = TQ,
                                    .capacity = CAP, .dk = DK, .dv = DV, .dropout = drop,
                                    .sliding_window = window};
    vkattn_sdpa_decode_io dio = {tq, cache, NULL, o1};
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &dp, &dio));
    vkattn_sdpa_params sp = {.batch = B, .heads = H, .kv_heads = HKV, .tq = TQ, .tv = L, .dk = DK,
                             .dv = DV, .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
                             .dropout = drop, .sliding_window = window};
    vkattn_sdpa_io sio = {.q = tq, .k = tk, .v = tv, .out = o2};
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &sp, &sio));
    float *a = th_download(o1, no), *b = th_download(o2, no);
    const double err = tu_max_rel_err(a, b, no, 1e-6);
    if (!TU_WITHIN(err, BOUND))
        fail_msg("decode vs full sdpa (window %u): rel err %g", window, err);
    /* the same elements are dropped: zeros agree where the output is exactly 0 */
    free(a), free(b), free(q), free(k), free(v);
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(o1), vkattn_tensor_destroy(o2);
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv);
    vkattn_kv_cache_destroy(cache);
    th_assert_validation_clean();
}

static void test_equals_full_sdpa(void **state)
{
    /* none, the diagonal only, a band of 37 (span not a multiple of 4), the
     * whole cache and more */
    static const uint32_t windows[] = {0, 1, 37, 64, 200, 1000};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
        equals_full_sdpa(TH_CTX(state), windows[i]);
}

/* Ragged lengths with a sliding window against the reference. */
static void test_window(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 6; n++) {
        dcase c;
        random_lengths(&c, n % 2 == 1);
        c.p.sliding_window = n == 0 ? 1 : tu_rand_range(1, 90);
        if (n == 5)
            c.p.dropout = (vkattn_dropout_params){.rate = 0.3f, .training = true, .seed = 3};
        run_case(ctx, &c);
    }
    th_assert_validation_clean();
}

/* Steps of append (1 token) + decode recorded with *_record, the lengths
 * advancing on the device, checked against the reference each step; then a
 * reset of one sequence. */
static void test_steps(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t B = 2, H = 2, CAP = 100, D = 16, STEPS = 5;
    vkattn_kv_cache_desc cd = {B, H, CAP, D, 0, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const uint32_t start[2] = {70, 3};
    TH_OK(ctx, vkattn_kv_cache_set_lengths(cache, start));
    const size_t nc = (size_t)B * H * CAP * D;
    float *k = tu_floats(nc), *v = tu_floats(nc);
    tu_fill_uniform(k, nc, -1, 1), tu_fill_uniform(v, nc, -1, 1);
    TH_OK(ctx, vkattn_tensor_upload(vkattn_kv_cache_get_desc(cache).keys, k, 0, nc));
    TH_OK(ctx, vkattn_tensor_upload(vkattn_kv_cache_get_desc(cache).values, v, 0, nc));
    vkattn_tensor_desc nd = {4, {B, H, 1, D}};
    vkattn_tensor *tk, *tv, *tq = th_tensor(ctx, (size_t)B * H * D, NULL),
                  *tout = th_tensor(ctx, (size_t)B * H * D, NULL);
    TH_OK(ctx, vkattn_tensor_create(ctx, &nd, &tk));
    TH_OK(ctx, vkattn_tensor_create(ctx, &nd, &tv));
    vkattn_sdpa_decode_params p = {.batch = B, .heads = H, .tq = 1, .capacity = CAP, .dk = D};
    uint32_t len[2] = {start[0], start[1]};
    for (uint32_t s = 0; s < STEPS; s++) {
        float kn[64], vn[64], q[64], ref[64];
        tu_fill_uniform(kn, 64, -1, 1), tu_fill_uniform(vn, 64, -1, 1), tu_fill_uniform(q, 64, -1, 1);
        for (uint32_t bh = 0; bh < B * H; bh++) {
            memcpy(k + ((size_t)bh * CAP + len[bh / H]) * D, kn + bh * D, sizeof(float) * D);
            memcpy(v + ((size_t)bh * CAP + len[bh / H]) * D, vn + bh * D, sizeof(float) * D);
        }
        len[0]++, len[1]++;
        TH_OK(ctx, vkattn_tensor_upload(tk, kn, 0, 64));
        TH_OK(ctx, vkattn_tensor_upload(tv, vn, 0, 64));
        TH_OK(ctx, vkattn_tensor_upload(tq, q, 0, 64));
        VkCommandBuffer cmd;
        TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
        vkattn_kv_append_io aio = {tk, tv, NULL};
        TH_OK(ctx, vkattn_kv_cache_append_record(cache, cmd, &aio));
        vkattn_sdpa_decode_io io = {tq, cache, NULL, tout};
        TH_OK(ctx, vkattn_sdpa_decode_record(ctx, cmd, &p, &io));
        TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
        TH_OK(ctx, vkattn_reference_sdpa_decode(&p, NULL, q, k, v, len, NULL, ref));
        float *got = th_download(tout, 64);
        assert_true(tu_max_rel_err(got, ref, 64, 1e-6) <= BOUND);
        free(got);
    }
    uint32_t got_len[2];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, got_len, NULL));
    assert_int_equal(got_len[0], len[0]);
    assert_int_equal(got_len[1], len[1]);
    TH_OK(ctx, vkattn_kv_cache_reset_record(cache, VKATTN_RUN_NOW, 0));
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, got_len, NULL));
    assert_int_equal(got_len[0], 0);
    assert_int_equal(got_len[1], len[1]);
    free(k), free(v);
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tq);
    vkattn_tensor_destroy(tout);
    vkattn_kv_cache_destroy(cache);
    th_assert_validation_clean();
}

/* kv_heads 0 (= heads) and dv 0 (= dk), the zero defaults, taken alike by
 * the op and the reference: the cache is made with the widths they stand for. */
static void test_zero_defaults(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const dcase cases[] = {
        /* both defaults, widths not multiples of 4 */
        {.p = {.batch = 2, .heads = 2, .tq = 2, .capacity = 90, .dk = 6}, .kvh = 2, .dv = 6,
         .lengths = {90, 41}},
        /* dv 0 with grouped heads and a scale given */
        {.p = {.batch = 1, .heads = 4, .kv_heads = 2, .tq = 1, .capacity = 70, .dk = 20,
               .scale = 0.3f},
         .kvh = 2, .dv = 20, .lengths = {53}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(ctx, &cases[i]);
    th_assert_validation_clean();
}

/* Params the op and the reference both refuse, since both resolve them with
 * one plan (src/shape/decode_plan.c): the same code, and the same message
 * after the function's name, naming the field as params->field. `needle` is
 * part of that message (NaN prints as "nan" or "-nan"). */
typedef struct bad_params {
    vkattn_sdpa_decode_params p;
    vkattn_result code;
    const char *needle;
} bad_params;

#define DP(b, h, tq_, cap, dk_, ...)                                                          \
    {.batch = b, .heads = h, .tq = tq_, .capacity = cap, .dk = dk_, __VA_ARGS__}
static const bad_params bad_rows[] = {
    {DP(0, 2, 1, 4, 4), VKATTN_ERROR_INVALID_ARGUMENT, "params->batch is 0; must be >= 1"},
    {DP(1, 0, 1, 4, 4), VKATTN_ERROR_INVALID_ARGUMENT, "params->heads is 0; must be >= 1"},
    {DP(1, 2, 0, 4, 4), VKATTN_ERROR_INVALID_ARGUMENT, "params->tq is 0; must be >= 1"},
    {DP(1, 2, 1, 0, 4), VKATTN_ERROR_INVALID_ARGUMENT, "params->capacity is 0; must be >= 1"},
    {DP(1, 2, 1, 4, 0), VKATTN_ERROR_INVALID_ARGUMENT, "params->dk is 0; must be >= 1"},
    {DP(1, 2, 65, 4, 4), VKATTN_ERROR_INVALID_ARGUMENT, "params->tq is 65; must be <= 64"},
    {DP(1, 3, 1, 4, 4, .kv_heads = 2), VKATTN_ERROR_INVALID_ARGUMENT,
     "params->kv_heads is 2; must divide heads (3)"},
    {DP(1, 2, 1, 4, 4, .kv_heads = 4), VKATTN_ERROR_INVALID_ARGUMENT,
     "params->kv_heads is 4; must divide heads (2)"},
    {DP(1, 2, 1, 4, 4, .scale = INFINITY), VKATTN_ERROR_INVALID_ARGUMENT,
     "params->scale is inf; must be finite"},
    {DP(1, 2, 1, 4, 4, .scale = NAN), VKATTN_ERROR_INVALID_ARGUMENT, "nan; must be finite"},
    {DP(1, 2, 1, 4, 4, .dropout = {.rate = 1.5f}), VKATTN_ERROR_INVALID_ARGUMENT,
     "params->dropout.rate is 1.5; must be in [0, 1]"},
    {DP(1, 2, 1, 4, 4, .dropout = {.rate = -0.25f, .training = true}),
     VKATTN_ERROR_INVALID_ARGUMENT, "params->dropout.rate is -0.25; must be in [0, 1]"},
    {DP(1, 2, 1, 4, 4, .dropout = {.rate = NAN}), VKATTN_ERROR_INVALID_ARGUMENT,
     "nan; must be in [0, 1]"},
    {DP(1, 2, 1, 0x80000000u, 4, .sliding_window = 8), VKATTN_ERROR_DEVICE_LIMIT,
     "params->sliding_window with tq + capacity = 2147483649 exceeds the kernels' 32-bit"},
    {DP(UINT32_MAX, UINT32_MAX, 64, 1, UINT32_MAX), VKATTN_ERROR_SIZE_OVERFLOW,
     "an operand's element count overflows 64 bits"},
};
#undef DP

/* The message after "function: ", or NULL where it does not start so. */
static const char *after_name(const char *msg, const char *fn)
{
    const size_t n = strlen(fn);
    return strncmp(msg, fn, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : NULL;
}

/* One row through the op and the reference; a failure is written to `why`. */
static bool bad_row_agrees(vkattn_context *ctx, const vkattn_sdpa_decode_io *io,
                           const bad_params *row, char *why, size_t why_size)
{
    /* host operands large enough that a reference which wrongly accepts a
     * row (lengths 0: no key read) stays in bounds */
    static float host[4096], host_out[4096];
    const uint32_t lengths[1] = {0};
    const vkattn_result got = vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &row->p, io);
    char op_msg[512];
    snprintf(op_msg, sizeof op_msg, "%s", got ? vkattn_last_error() : "");
    const vkattn_result ref =
        vkattn_reference_sdpa_decode(&row->p, NULL, host, host, host, lengths, NULL, host_out);
    const char *a = after_name(op_msg, "vkattn_sdpa_decode_record");
    const char *b = after_name(ref ? vkattn_last_error() : "", "vkattn_reference_sdpa_decode");
    if (got == row->code && ref == row->code && a && b && !strcmp(a, b) && strstr(a, row->needle))
        return true;
    snprintf(why, why_size, "op %s \"%s\", reference %s \"%s\"; expected %s \"...%s...\"",
             vkattn_result_name(got), a ? a : op_msg, vkattn_result_name(ref), b ? b : "",
             vkattn_result_name(row->code), row->needle);
    return false;
}

static void test_bad_params_agree(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_kv_cache_desc cd = {1, 2, 4, 4, 0, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    vkattn_tensor *tq = th_tensor(ctx, 64, NULL), *to = th_tensor(ctx, 64, NULL);
    const vkattn_sdpa_decode_io io = {tq, cache, NULL, to};
    char why[1024];
    size_t i = 0;
    while (i < sizeof bad_rows / sizeof bad_rows[0] &&
           bad_row_agrees(ctx, &io, &bad_rows[i], why, sizeof why))
        i++;
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(to);
    vkattn_kv_cache_destroy(cache);
    if (i < sizeof bad_rows / sizeof bad_rows[0])
        fail_msg("bad params row %zu: %s", i, why);
    th_assert_validation_clean();
}

/* Bad input: a specific code, the lengths unchanged; a device-side overflow
 * (ragged counts the host cannot see) writes nothing and sets the flag. */
static void test_bad_input(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_kv_cache_desc cd = {2, 2, 8, 4, 0, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const uint32_t start[2] = {6, 2};
    TH_OK(ctx, vkattn_kv_cache_set_lengths(cache, start));
    vkattn_tensor_desc nd = {4, {2, 2, 3, 4}}, wrong = {4, {2, 1, 3, 4}};
    vkattn_tensor *tk, *tv, *tw;
    TH_OK(ctx, vkattn_tensor_create(ctx, &nd, &tk));
    TH_OK(ctx, vkattn_tensor_create(ctx, &nd, &tv));
    TH_OK(ctx, vkattn_tensor_create(ctx, &wrong, &tw));
    TH_OK(ctx, vkattn_tensor_fill(tk, 1.0f));
    TH_OK(ctx, vkattn_tensor_fill(tv, 1.0f));
    vkattn_kv_append_io io = {tk, tv, NULL};
    /* 6 + 3 > 8: refused on the host */
    assert_int_equal(vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_kv_append_io bad = {tw, tv, NULL};
    assert_int_equal(vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &bad), VKATTN_ERROR_INVALID_ARGUMENT);
    uint32_t len[2];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, len, NULL));
    assert_int_equal(len[0], 6), assert_int_equal(len[1], 2);
    bool flag = true;
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, NULL, &flag));
    assert_false(flag);
    /* with counts {3, 1} only the device knows: sequence 0 overflows */
    const float counts[2] = {3, 1};
    vkattn_tensor *tc = th_tensor(ctx, 2, counts);
    vkattn_kv_append_io rag = {tk, tv, tc};
    TH_OK(ctx, vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &rag));
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, len, NULL));
    assert_int_equal(len[0], 6), assert_int_equal(len[1], 3);
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, NULL, &flag));
    assert_true(flag);
    float *kc = th_download(vkattn_kv_cache_get_desc(cache).keys, 2 * 2 * 8 * 4);
    /* nothing past the capacity of sequence 0 head 1 got written into sequence 1 */
    TH_OK(ctx, vkattn_kv_cache_reset_record(cache, VKATTN_RUN_NOW, VKATTN_KV_CACHE_ALL));
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, NULL, &flag));
    assert_false(flag);
    free(kc);
    /* decode params that do not match the cache */
    vkattn_tensor *tq = th_tensor(ctx, 64, NULL), *to = th_tensor(ctx, 64, NULL);
    vkattn_sdpa_decode_params p = {.batch = 2, .heads = 2, .tq = 1, .capacity = 8, .dk = 5};
    vkattn_sdpa_decode_io dio = {tq, cache, NULL, to};
    assert_int_equal(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &dio), VKATTN_ERROR_INVALID_ARGUMENT);
    p.dk = 4, p.heads = 3;
    assert_int_equal(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &dio), VKATTN_ERROR_INVALID_ARGUMENT);
    p.heads = 2, p.tq = 65;
    assert_int_equal(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &dio), VKATTN_ERROR_INVALID_ARGUMENT);
    p.tq = 1;
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_PREPARE, &p, &dio));
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tw);
    vkattn_tensor_destroy(tc), vkattn_tensor_destroy(tq), vkattn_tensor_destroy(to);
    vkattn_kv_cache_destroy(cache);
    th_assert_validation_clean();
}

TU_MAIN(th_setup, th_teardown,
    test_ragged_lengths, test_random_widths, test_shapes, test_long_and_dropout,
    test_equals_full_sdpa, test_steps, test_window, test_bad_input, test_zero_defaults,
    test_bad_params_agree, test_num_splits)
