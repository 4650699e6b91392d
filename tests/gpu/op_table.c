/* The runner of tests/gpu/op_table.h's rows. */
#include "op_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *th_dtype_name(vkattn_dtype dt)
{
    switch (dt) {
    case VKATTN_DTYPE_F32:
        return "f32";
    case VKATTN_DTYPE_F16:
        return "f16";
    case VKATTN_DTYPE_I8:
        return "i8";
    case VKATTN_DTYPE_BF16:
        return "bf16";
    default:
        return "?";
    }
}

static void run_case(vkattn_context *ctx, const th_op_row *row, th_op_case *c)
{
    row->gen(c);
    row->run(ctx, c);
    assert_non_null(c->got);
    c->ref = tu_floats(c->n);
    row->ref(c);
    char what[320];
    snprintf(what, sizeof what, "%s [%s, case %u] %s", row->op, th_dtype_name(c->dtype),
             c->index, c->what);
    TU_ASSERT_CLOSE(c->got, c->ref, c->n, row->bound(c), what);
    if (row->check)
        row->check(c);
    th_assert_validation_clean();
    row->done(c);
    free(c->got);
    free(c->ref);
}

void th_run_op_rows(vkattn_context *ctx, const th_op_row *rows, size_t n)
{
    for (size_t r = 0; r < n; r++)
        for (unsigned d = 0; d < rows[r].ndtypes; d++) {
            const vkattn_dtype dt = rows[r].dtypes[d];
            const unsigned cases = rows[r].cases(dt);
            for (unsigned i = 0; i < cases; i++) {
                th_op_case c = {.dtype = dt, .index = i};
                run_case(ctx, &rows[r], &c);
            }
        }
}

static void expect_named(const char *name, vkattn_result got, vkattn_result want,
                         const char *message, const char *needle)
{
    if (got != want)
        fail_msg("%s returned %s; expected %s (%s)", name, vkattn_result_name(got),
                 vkattn_result_name(want), message);
    if (needle && !strstr(message, needle))
        fail_msg("%s: message \"%s\" does not mention \"%s\"", name, message, needle);
}

void th_expect_error(vkattn_context *ctx, vkattn_result got, vkattn_result want,
                     const char *needle)
{
    expect_named("the call", got, want, ctx ? vkattn_context_last_error(ctx) : vkattn_last_error(),
                 needle);
}

void th_run_bad_args(vkattn_context *ctx, const th_bad_arg *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const vkattn_result r = rows[i].call(ctx);
        expect_named(rows[i].name, r, rows[i].code, vkattn_last_error(), rows[i].message);
    }
    th_assert_validation_clean();
}

void th_run_spoils(vkattn_context *ctx, vkattn_result (*call)(vkattn_context *ctx, void *args),
                   const void *valid, size_t size, const th_spoil_fn *spoils, size_t n)
{
    void *args = malloc(size);
    assert_non_null(args);
    memcpy(args, valid, size);
    expect_named("the valid args", call(ctx, args), VKATTN_SUCCESS, vkattn_last_error(), NULL);
    for (size_t i = 0; i < n; i++) {
        memcpy(args, valid, size);
        const th_spoil want = spoils[i](args);
        const vkattn_result r = call(ctx, args);
        expect_named(want.name, r, want.code, vkattn_last_error(), want.message);
    }
    free(args);
    th_assert_validation_clean();
}
