/* cmocka.h's subset (see there): one test at a time, a failure or skip
 * longjmps back to the runner. */
#include "cmocka.h"

#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RUN_PASS, RUN_FAIL, RUN_SKIP };

static jmp_buf *current; /* the running test's way back, NULL outside one */

void print_message(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vprintf(format, ap);
    va_end(ap);
    fflush(stdout);
}

void print_error(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vfprintf(stderr, format, ap);
    va_end(ap);
    fflush(stderr);
}

_Noreturn static void leave(int how)
{
    if (!current) {
        print_error("minicmocka: assertion outside a test\n");
        exit(1);
    }
    longjmp(*current, how);
}

_Noreturn void _mcm_fail(const char *file, int line)
{
    print_error("[   LINE   ] --- %s:%d: Failure!\n", file, line);
    leave(RUN_FAIL);
}

_Noreturn void _mcm_skip(const char *file, int line)
{
    (void)file, (void)line;
    leave(RUN_SKIP);
}

void _mcm_check(int ok, const char *expr, const char *file, int line)
{
    if (!ok) {
        print_error("%s\n", expr);
        _mcm_fail(file, line);
    }
}

void _mcm_int_equal(intmax_t a, intmax_t b, _Bool equal, const char *file, int line)
{
    if ((a == b) != equal) {
        print_error("%jd %s %jd\n", a, equal ? "!=" : "==", b);
        _mcm_fail(file, line);
    }
}

void _mcm_float_equal(double a, double b, double epsilon, const char *file, int line)
{
    double diff = fabs(a - b);
    if (a == b || diff <= epsilon || diff <= fmax(fabs(a), fabs(b)) * FLT_EPSILON)
        return;
    print_error("%f != %f (epsilon %g)\n", a, b, epsilon);
    _mcm_fail(file, line);
}

void _mcm_memory_equal(const void *a, const void *b, size_t size, const char *file, int line)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < size; i++)
        if (x[i] != y[i]) {
            print_error("blocks differ at byte %zu: 0x%02x != 0x%02x\n", i, x[i], y[i]);
            _mcm_fail(file, line);
        }
}

void _mcm_string_equal(const char *a, const char *b, _Bool equal, const char *file, int line)
{
    if ((strcmp(a, b) == 0) != equal) {
        print_error("\"%s\" %s \"%s\"\n", a, equal ? "!=" : "==", b);
        _mcm_fail(file, line);
    }
}

/* Runs fn(state) (a test, or a fixture whose nonzero return fails it). */
static int run_one(CMUnitTestFunction test, CMFixtureFunction fixture, void **state)
{
    jmp_buf back;
    jmp_buf *outer = current;
    volatile int how = RUN_PASS;
    current = &back;
    int jumped = setjmp(back);
    if (jumped)
        how = jumped;
    else if (test)
        test(state);
    else if (fixture(state) != 0)
        how = RUN_FAIL;
    current = outer;
    return how;
}

int _mcm_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                   CMFixtureFunction setup, CMFixtureFunction teardown)
{
    void *group_state = NULL;
    size_t passed = 0, failed = 0, skipped = 0;
    print_message("[==========] %s: Running %zu test(s).\n", name, count);
    if (setup && run_one(NULL, setup, &group_state) != RUN_PASS) {
        print_error("[  ERROR   ] %s: group setup failed\n", name);
        return (int)count;
    }
    for (size_t i = 0; i < count; i++) {
        const struct CMUnitTest *t = &tests[i];
        void *state = t->initial_state ? t->initial_state : group_state;
        print_message("[ RUN      ] %s\n", t->name);
        int how = t->setup_func ? run_one(NULL, t->setup_func, &state) : RUN_PASS;
        if (how == RUN_PASS)
            how = run_one(t->test_func, NULL, &state);
        if (t->teardown_func && run_one(NULL, t->teardown_func, &state) == RUN_FAIL)
            how = RUN_FAIL;
        if (how == RUN_PASS)
            passed++, print_message("[       OK ] %s\n", t->name);
        else if (how == RUN_SKIP)
            skipped++, print_message("[  SKIPPED ] %s\n", t->name);
        else
            failed++, print_error("[  FAILED  ] %s\n", t->name);
    }
    if (teardown && run_one(NULL, teardown, &group_state) == RUN_FAIL)
        failed++;
    print_message("[==========] %s: %zu test(s) run.\n[  PASSED  ] %zu test(s).\n", name, count,
                  passed);
    if (skipped)
        print_message("[  SKIPPED ] %zu test(s).\n", skipped);
    if (failed)
        print_error("[  FAILED  ] %zu test(s).\n", failed);
    return (int)failed;
}
