/* The table-driven op tests: an op is a row {op, case generator, op run,
 * reference, bound} that th_run_op_rows runs over the row's dtypes and its
 * cases, comparing the device's output with the CPU reference; a bad argument
 * is a row {call, code, message} that th_run_bad_args runs, or a spoil of one
 * field of a valid call with its {code, message} that th_run_spoils runs. The profile and
 * path come from the group's setup (th_setup, th_setup_mobile) and from
 * CTest's passes (default, subgroup 4 with GPU kernel shapes, mobile-min), so
 * a row is written once for every dtype and pass. docs/TESTING.md says how to
 * add a row. */
#ifndef VKATTN_TEST_OP_TABLE_H
#define VKATTN_TEST_OP_TABLE_H

#include "harness.h"

/* One case of one row under one dtype, as the row's functions fill it. */
typedef struct th_op_case {
    vkattn_dtype dtype; /* the row's dtype under test */
    unsigned index;     /* the case's number within the row, from 0 */
    void *p;            /* the row's own case data (gen allocates, done frees) */
    float *got, *ref;   /* the device's output and the reference's, n floats */
    size_t n;
    char what[200]; /* the case in words, for failure messages (gen writes it) */
} th_op_case;

typedef struct th_op_row {
    const char *op;
    vkattn_dtype dtypes[4]; /* run under each of the first ndtypes */
    unsigned ndtypes;
    /* the number of cases under dtype dt */
    unsigned (*cases)(vkattn_dtype dt);
    /* draws case c->index under c->dtype: shapes, masks, inputs (c->p, c->what) */
    void (*gen)(th_op_case *c);
    /* runs the op on the device into c->got (and checks what only the device
     * path shows, e.g. a cache's storage) */
    void (*run)(vkattn_context *ctx, th_op_case *c);
    /* the CPU reference into c->ref (c->n floats) */
    void (*ref)(th_op_case *c);
    /* the bound on max|got - ref| / max|ref| (docs: the op's header) */
    double (*bound)(const th_op_case *c);
    /* optional: further checks after the bound (NULL: none) */
    void (*check)(th_op_case *c);
    /* frees c->p's contents (got and ref are the runner's) */
    void (*done)(th_op_case *c);
} th_op_row;

/* Every row x dtype x case on ctx: gen, run, ref, the bound, check, and a
 * clean validation layer after each case. */
void th_run_op_rows(vkattn_context *ctx, const th_op_row *rows, size_t n);

/* A bad argument: call makes a call that must fail with `code` and a last
 * error containing `message` (the argument's name), releasing what it made. */
typedef struct th_bad_arg {
    const char *name;
    vkattn_result (*call)(vkattn_context *ctx);
    vkattn_result code;
    const char *message;
} th_bad_arg;

/* Fails unless got is want and, when needle is given, the last error (ctx's,
 * or the thread's when ctx is NULL) contains it: a bad-argument check outside
 * a table. */
void th_expect_error(vkattn_context *ctx, vkattn_result got, vkattn_result want,
                     const char *needle);
#define th_expect_invalid(r, arg) th_expect_error(NULL, (r), VKATTN_ERROR_INVALID_ARGUMENT, (arg))

/* Every bad-argument row on ctx; validation must stay clean. */
void th_run_bad_args(vkattn_context *ctx, const th_bad_arg *rows, size_t n);

/* A "change one field" bad argument: a spoil changes one field (or one pair
 * that must agree) of a copy of the valid args and says how the call on them
 * must fail: with `code` and a last error containing `message`. */
typedef struct th_spoil {
    const char *name; /* the spoil's name, for failure messages */
    vkattn_result code;
    const char *message;
} th_spoil;
typedef th_spoil (*th_spoil_fn)(void *args);

/* A row, one line: the spoil fn(void *args) changing the args of type T (named
 * a) by `change`, whose call must fail with code_ naming message_. */
#define TH_SPOIL(T, fn, code_, message_, change)                                                   \
    static th_spoil fn(void *args_)                                                                \
    {                                                                                              \
        T *a = args_;                                                                              \
        change;                                                                                    \
        return (th_spoil){#fn, (code_), (message_)};                                               \
    }

/* call(ctx, args) on a copy of `valid` (size bytes), which must succeed, then
 * on a spoiled copy per spoil; validation must stay clean. The spoils are thus
 * known to be what fails. */
void th_run_spoils(vkattn_context *ctx, vkattn_result (*call)(vkattn_context *ctx, void *args),
                   const void *valid, size_t size, const th_spoil_fn *spoils, size_t n);
#define TH_RUN_SPOILS(ctx, call, valid, spoils)                                                    \
    th_run_spoils((ctx), (call), &(valid), sizeof(valid), (spoils),                               \
                  sizeof(spoils) / sizeof((spoils)[0]))

/* The dtype's name in messages ("f32", "f16", "i8", "bf16"). */
const char *th_dtype_name(vkattn_dtype dt);

#endif
