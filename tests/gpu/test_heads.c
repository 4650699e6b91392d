/* Head split and merge vs the CPU reference, bit for bit (a permutation copy
 * has no rounding): fixed and random shapes (batch 1, one head, head_dim 1,
 * primes, element counts not multiples of the workgroup), special values
 * (-0, inf, the largest float) that a copy must keep, a split then merge
 * recorded into one command buffer that must give back the input exactly, and
 * bad arguments. Fresh random inputs every run; outputs poisoned with NaN. */
#include "op_table.h"

#include <vkattn/reference.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t count_of(const vkattn_heads_params *p)
{
    return (size_t)p->batch * p->seq * p->heads * p->head_dim;
}

static float *random_input(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -3, 3);
    const float special[] = {-0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MIN};
    for (size_t i = 0; i < sizeof special / sizeof special[0] && i < n; i++)
        x[tu_rand_range(0, (uint32_t)n - 1)] = special[i];
    return x;
}

/* Fails unless got and want hold the same bits. */
static void assert_bits_equal(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, got[i], want[i]);
}

/* One direction on the GPU against its reference. */
static void check_case(vkattn_context *ctx, const vkattn_heads_params *p, bool split)
{
    size_t n = count_of(p);
    float *in = random_input(n), *ref = tu_floats(n);
    tu_poison(ref, n);
    if (split)
        TH_OK(ctx, vkattn_reference_heads_split(p, NULL, in, ref));
    else
        TH_OK(ctx, vkattn_reference_heads_merge(p, NULL, in, ref));
    vkattn_tensor *tin = th_tensor(ctx, n, in), *tout = th_tensor(ctx, n, NULL);
    vkattn_heads_io io = {.in = tin, .out = tout};
    if (split)
        TH_OK(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, p, &io));
    else
        TH_OK(ctx, vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(tout, n);
    char what[128];
    snprintf(what, sizeof what, "heads %s B=%u T=%u H=%u d=%u", split ? "split" : "merge",
             p->batch, p->seq, p->heads, p->head_dim);
    assert_bits_equal(got, ref, n, what);
    th_assert_validation_clean();
    vkattn_tensor_destroy(tin), vkattn_tensor_destroy(tout);
    free(in), free(ref), free(got);
}

static const uint32_t fixed[][4] = {
    {1, 1, 1, 1},  {1, 7, 1, 5},  {1, 1, 8, 3},   {2, 13, 4, 16}, {3, 1, 8, 64},
    {1, 37, 3, 1}, {2, 5, 7, 11}, {1, 129, 2, 33}, {4, 17, 12, 8}, {1, 300, 8, 64},
};

static void test_split(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        vkattn_heads_params p = {fixed[i][0], fixed[i][1], fixed[i][2], fixed[i][3]};
        check_case(ctx, &p, true);
    }
}

static void test_merge(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        vkattn_heads_params p = {fixed[i][0], fixed[i][1], fixed[i][2], fixed[i][3]};
        check_case(ctx, &p, false);
    }
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 24; i++) {
        vkattn_heads_params p = {tu_rand_range(1, 4), tu_rand_range(1, 120), tu_rand_range(1, 12),
                                 tu_rand_range(1, 70)};
        check_case(ctx, &p, i % 2 == 0);
    }
}

/* split then merge in one command buffer (the merge reads what the split
 * wrote; then a second split overwrites the merge's input after it was read):
 * exact round trip, validation clean. */
static void test_round_trip(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 6; i++) {
        vkattn_heads_params p = {tu_rand_range(1, 3), tu_rand_range(1, 90), tu_rand_range(1, 9),
                                 tu_rand_range(1, 48)};
        size_t n = count_of(&p);
        float *in = random_input(n), *split = tu_floats(n);
        TH_OK(ctx, vkattn_reference_heads_split(&p, NULL, in, split));
        vkattn_tensor *a = th_tensor(ctx, n, in), *b = th_tensor(ctx, n, NULL);
        vkattn_tensor *c = th_tensor(ctx, n, NULL);
        VkCommandBuffer cmd;
        TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
        vkattn_heads_io to_heads = {.in = a, .out = b}, back = {.in = b, .out = c};
        vkattn_heads_io again = {.in = c, .out = b};
        TH_OK(ctx, vkattn_heads_split_record(ctx, cmd, &p, &to_heads));
        TH_OK(ctx, vkattn_heads_merge_record(ctx, cmd, &p, &back));
        TH_OK(ctx, vkattn_heads_split_record(ctx, cmd, &p, &again));
        TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
        float *merged = th_download(c, n), *resplit = th_download(b, n);
        assert_bits_equal(merged, in, n, "split then merge");
        assert_bits_equal(resplit, split, n, "split of the merged tensor");
        th_assert_validation_clean();
        vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(c);
        free(in), free(split), free(merged), free(resplit);
    }
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_result INVALID = VKATTN_ERROR_INVALID_ARGUMENT;
    vkattn_heads_params p = {.batch = 2, .seq = 3, .heads = 2, .head_dim = 4};
    vkattn_tensor *in = th_tensor(ctx, 48, NULL), *out = th_tensor(ctx, 48, NULL);
    vkattn_heads_io io = {.in = in, .out = out};
    TH_OK(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &p, &io));

    assert_int_equal(vkattn_heads_split_record(NULL, VKATTN_RUN_NOW, &p, &io), INVALID);
    assert_int_equal(vkattn_heads_merge_record(NULL, VKATTN_RUN_NOW, &p, &io), INVALID);
    th_expect_error(ctx, vkattn_heads_split_record(ctx, VK_NULL_HANDLE, &p, &io), INVALID, "cmd is NULL");
    th_expect_error(ctx, vkattn_heads_merge_record(ctx, VK_NULL_HANDLE, &p, &io), INVALID,
           "vkattn_heads_merge_record: cmd is NULL");
    th_expect_error(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, NULL, &io), INVALID, "params is NULL");
    th_expect_error(ctx, vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, &p, NULL), INVALID, "io is NULL");
    const char *names[4] = {"batch is 0", "seq is 0", "heads is 0", "head_dim is 0"};
    for (int i = 0; i < 4; i++) {
        vkattn_heads_params z = p;
        uint32_t *fields[4] = {&z.batch, &z.seq, &z.heads, &z.head_dim};
        *fields[i] = 0;
        th_expect_error(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &z, &io), INVALID, names[i]);
        th_expect_error(ctx, vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, &z, &io), INVALID, names[i]);
    }
    vkattn_heads_params big = p;
    big.seq = 4; /* 64 elements; the tensors hold 48 */
    th_expect_error(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &big, &io), INVALID, "io->in");
    vkattn_heads_io bad = {.in = in, .out = in};
    th_expect_error(ctx, vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, &p, &bad), INVALID, "in place");
    bad = (vkattn_heads_io){.in = in, .out = NULL};
    th_expect_error(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &p, &bad), INVALID, "io->out is NULL");

    vkattn_heads_params huge = {UINT32_MAX, UINT32_MAX, UINT32_MAX, 2};
    th_expect_error(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &huge, &io), VKATTN_ERROR_SIZE_OVERFLOW, "overflows");
    huge = (vkattn_heads_params){1, 65536, 65536, 1};
    th_expect_error(ctx, vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, &huge, &io), VKATTN_ERROR_DEVICE_LIMIT, "32-bit");

    TH_OK(ctx, vkattn_heads_merge_record(ctx, VKATTN_RUN_NOW, &p, &io)); /* still usable */
    vkattn_tensor_destroy(in), vkattn_tensor_destroy(out);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_split, test_merge, test_random_shapes, test_round_trip, test_bad_arguments)};
    /* Then under the mobile-min limits (128 invocations per workgroup). */
    return TH_RUN_WITH_MOBILE("heads", tests);
}
