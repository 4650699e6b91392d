/* Backward of dropout vs the CPU reference, bit for bit (bound 0: a masked
 * multiply by the same f32 scale). It must keep exactly the elements its
 * forward keeps with the same seed and offset (checked against the forward run
 * on the GPU), and a different offset must give a different mask. Odd shapes, fresh random inputs,
 * outputs poisoned with NaN; bad arguments name the backward function. */
#include "op_table.h"

#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_bits_equal(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, (double)got[i],
                     (double)want[i]);
}

static void dropout_case(vkattn_context *ctx, const vkattn_dropout_op_params *p, bool in_place)
{
    const size_t n = (size_t)p->batch * (p->heads ? p->heads : 1) * p->tq * p->tv;
    float *g = tu_floats(n), *ref = tu_floats(n), *x = tu_floats(n);
    tu_fill_uniform(g, n, 0.5f, 1.5f); /* never 0: a kept element stays nonzero */
    tu_fill_uniform(x, n, 0.5f, 1.5f);
    TH_OK(NULL, vkattn_reference_dropout(p, NULL, g, ref));
    vkattn_tensor *tg = th_tensor(ctx, n, g), *tgi = in_place ? tg : th_tensor(ctx, n, NULL);
    const vkattn_dropout_backward_io io = {.grad_out = tg, .grad_in = tgi};
    TH_OK(ctx, vkattn_dropout_backward_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(tgi, n);
    char what[160];
    snprintf(what, sizeof what, "dropout backward B=%u H=%u Tq=%u Tv=%u rate=%g%s", p->batch,
             p->heads, p->tq, p->tv, (double)p->dropout.rate, in_place ? " in place" : "");
    assert_bits_equal(got, ref, n, what);
    /* the forward on the GPU with the same params keeps the same elements */
    vkattn_tensor *tx = th_tensor(ctx, n, x), *ty = th_tensor(ctx, n, NULL);
    const vkattn_dropout_io fio = {.in = tx, .out = ty};
    TH_OK(ctx, vkattn_dropout_record(ctx, VKATTN_RUN_NOW, p, &fio));
    float *y = th_download(ty, n);
    for (size_t i = 0; i < n; i++)
        if ((y[i] != 0.0f) != (got[i] != 0.0f))
            fail_msg("%s: element %zu: forward %s, backward %s", what, i,
                     y[i] != 0.0f ? "kept" : "dropped", got[i] != 0.0f ? "kept" : "dropped");
    th_assert_validation_clean();
    if (!in_place)
        vkattn_tensor_destroy(tgi);
    vkattn_tensor_destroy(tg), vkattn_tensor_destroy(tx), vkattn_tensor_destroy(ty);
    free(g), free(ref), free(x), free(got), free(y);
}

static void test_dropout_backward(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int c = 0; c < 12; c++) {
        vkattn_dropout_op_params p = {
            .batch = tu_rand_range(1, 3), .heads = tu_rand_range(0, 3),
            .tq = tu_rand_range(1, 17), .tv = tu_rand_range(1, 37),
            .dropout = {.rate = c == 0 ? 0.0f : c == 1 ? 1.0f : tu_rand_float(0.05f, 0.9f),
                        .training = c != 2,
                        .seed = (uint64_t)tu_rand_u32() << 32 | tu_rand_u32(),
                        .offset = tu_rand_u32()},
        };
        dropout_case(ctx, &p, c % 3 == 1);
    }
}

/* Another offset draws another mask: the backward really follows the offset. */
static void test_dropout_backward_offset(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_dropout_op_params p = {.batch = 1, .heads = 2, .tq = 16, .tv = 33,
                                  .dropout = {.rate = 0.5f, .training = true, .seed = 42}};
    const size_t n = 2 * 16 * 33;
    float *ones = tu_floats(n);
    for (size_t i = 0; i < n; i++)
        ones[i] = 1.0f;
    vkattn_tensor *tg = th_tensor(ctx, n, ones), *a = th_tensor(ctx, n, NULL),
                  *b = th_tensor(ctx, n, NULL);
    TH_OK(ctx, vkattn_dropout_backward_record(ctx, VKATTN_RUN_NOW, &p, &(vkattn_dropout_backward_io){tg, a}));
    p.dropout.offset = 1;
    TH_OK(ctx, vkattn_dropout_backward_record(ctx, VKATTN_RUN_NOW, &p, &(vkattn_dropout_backward_io){tg, b}));
    float *ga = th_download(a, n), *gb = th_download(b, n);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += (ga[i] != 0.0f) != (gb[i] != 0.0f);
    assert_true(differ > n / 4); /* about n / 2 for independent masks */
    th_assert_validation_clean();
    vkattn_tensor_destroy(tg), vkattn_tensor_destroy(a), vkattn_tensor_destroy(b);
    free(ones), free(ga), free(gb);
}

/* Bad arguments as "change one field" rows over one valid call: each names
 * the backward function. */
typedef struct dargs {
    VkCommandBuffer mode; /* VKATTN_RUN_NOW or VKATTN_PREPARE */
    vkattn_dropout_op_params p;
    vkattn_dropout_backward_io io;
    bool no_params, no_io;
    vkattn_tensor *short_t; /* a spare tensor one element short */
} dargs;

static vkattn_result call(vkattn_context *ctx, void *v)
{
    const dargs *a = v;
    return vkattn_dropout_backward_record(ctx, a->mode, a->no_params ? NULL : &a->p,
                                          a->no_io ? NULL : &a->io);
}

#define INV VKATTN_ERROR_INVALID_ARGUMENT
#define FN "vkattn_dropout_backward_record"
TH_SPOIL(dargs, big_rate, INV, FN, a->p.dropout.rate = 1.5f)
TH_SPOIL(dargs, big_rate_prepared, INV, FN, a->p.dropout.rate = 1.5f; a->mode = VKATTN_PREPARE)
TH_SPOIL(dargs, short_grad_in, INV, FN, a->io.grad_in = a->short_t)
TH_SPOIL(dargs, short_grad_out, INV, FN, a->io.grad_out = a->short_t)
TH_SPOIL(dargs, no_grad_out, INV, FN, a->io.grad_out = NULL)
TH_SPOIL(dargs, no_params, INV, FN, a->no_params = true)
TH_SPOIL(dargs, no_io, INV, NULL, a->no_io = true)
#undef FN
#undef INV
static const th_spoil_fn spoils[] = {big_rate,       big_rate_prepared, short_grad_in,
                                     short_grad_out, no_grad_out,       no_params,
                                     no_io};

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor *a = th_tensor(ctx, 24, NULL);
    const dargs valid = {.mode = VKATTN_RUN_NOW,
                         .p = {.batch = 1, .heads = 2, .tq = 3, .tv = 4,
                               .dropout = {.rate = 0.5f, .training = true}},
                         .io = {a, a},
                         .short_t = th_tensor(ctx, 23, NULL)};
    TH_RUN_SPOILS(ctx, call, valid, spoils);
    TH_OK(ctx, vkattn_dropout_backward_record(ctx, VKATTN_PREPARE, &valid.p, &valid.io));
    th_assert_validation_clean();
    vkattn_tensor_destroy(a), vkattn_tensor_destroy(valid.short_t);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_dropout_backward, test_dropout_backward_offset, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
