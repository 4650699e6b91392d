/* Helpers every test shares: fresh random inputs (seed printed so a failure can
 * be replayed with VKATTN_TEST_SEED), poisoning, and error measures. */
#ifndef VKATTN_TEST_UTIL_H
#define VKATTN_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Seeds the test RNG: VKATTN_TEST_SEED if set, else from the clock; prints it. */
uint64_t tu_seed(void);
/* Sets the RNG to seed (0 counts as 1), quietly: for draws from a fixed list
 * of seeds, the same every run, beside those of the run's seed. */
void tu_reseed(uint64_t seed);
uint32_t tu_rand_u32(void);
/* uniform in [lo, hi] */
uint32_t tu_rand_range(uint32_t lo, uint32_t hi);
float tu_rand_float(float lo, float hi);
void tu_fill_uniform(float *x, size_t n, float lo, float hi);
/* 0/1 mask with probability p of 1 */
void tu_fill_mask(float *x, size_t n, float p_one);
/* NaN everywhere: a result element the GPU forgot to write stays NaN. */
void tu_poison(float *x, size_t n);
/* malloc that fails the test on NULL */
void *tu_alloc(size_t bytes);
float *tu_floats(size_t n);

/* A float's bits and back (memcpy: no aliasing questions). */
uint32_t tu_bits_of(float f);
float tu_float_of(uint32_t bits);

/* One value to and from f16 bits, through vkattn/half.h's array forms. */
uint16_t tu_f16_bits(float x);
float tu_f16_to_f32(uint16_t bits);

/* max|got - ref| / max(max|ref|, floor); NaN in got where ref is finite -> INFINITY.
 * NaN in both at the same place counts as equal. */
double tu_max_rel_err(const float *got, const float *ref, size_t n, double floor);
/* max|got - ref| / max(max|terms|, floor), where terms[i] is the sum of the
 * magnitudes of what ref[i] adds up (the reference run on |inputs|, say).
 * fp32 rounding scales with that sum; |ref| does not bound it when terms of
 * both signs cancel. Same NaN rules. */
double tu_max_err_vs_terms(const float *got, const float *ref, const float *terms, size_t n,
                           double floor);
/* max(|got - ref| - allowed, 0) / max(max|ref|, floor): what is left of the
 * error past a derived per-element allowance (allowed NULL: none), relative
 * as tu_max_rel_err; NaN where got is. */
double tu_max_rel_err_past(const float *got, const float *ref, const double *allowed, size_t n,
                           double floor);
/* max |got - ref|, same NaN rules */
double tu_max_abs_err(const float *got, const float *ref, size_t n);

/* err <= bound (false for NaN). With VKATTN_TEST_MARGINS=<file> set, a test
 * also appends "worst-err/bound file:line" per check site to that file at
 * exit: a sweep over seeds (scripts/test-margins.sh) then shows which bounds
 * run close before CI draws the seed that crosses one. */
int tu_within_at(double err, double bound, const char *file, int line);
#define TU_WITHIN(err, bound) tu_within_at((err), (bound), __FILE__, __LINE__)

/* Fails the test with a message naming `what` if rel err > bound. */
#define TU_ASSERT_CLOSE(got, ref, n, bound, what)                                          \
    do {                                                                                   \
        double tu_err_ = tu_max_rel_err((got), (ref), (n), 1e-30);                         \
        if (!TU_WITHIN(tu_err_, (bound)))                                                  \
            fail_msg("%s: max relative error %.3g exceeds bound %.3g", (what), tu_err_,    \
                     (double)(bound));                                                     \
    } while (0)

/* The same against the sum of term magnitudes (tu_max_err_vs_terms). */
#define TU_ASSERT_CLOSE_TERMS(got, ref, terms, n, bound, what)                             \
    do {                                                                                   \
        double tu_err_ = tu_max_err_vs_terms((got), (ref), (terms), (n), 1e-30);           \
        if (!TU_WITHIN(tu_err_, (bound)))                                                  \
            fail_msg("%s: max error %.3g of the largest sum of term magnitudes exceeds "   \
                     "bound %.3g",                                                         \
                     (what), tu_err_, (double)(bound));                                    \
    } while (0)

/* A test's list of cmocka entries from its test functions' names:
 * {TU_TESTS(a, b)} is {cmocka_unit_test(a), cmocka_unit_test(b)} (up to 32),
 * so that a main() does not restate cmocka's boilerplate. */
#define TU_TESTS(...) TU_CAT_(TU_FE_, TU_NARG_(__VA_ARGS__))(TU_UNIT_, __VA_ARGS__)
/* main() of a test of one cmocka group "tests": the named test functions
 * under setup and teardown (NULL: none). */
#define TU_MAIN(setup, teardown, ...)                                                          \
    int main(void)                                                                             \
    {                                                                                          \
        const struct CMUnitTest tests[] = {TU_TESTS(__VA_ARGS__)};                             \
        return cmocka_run_group_tests(tests, setup, teardown);                                 \
    }
#define TU_UNIT_(f) cmocka_unit_test(f),
#define TU_CAT_(a, b) TU_CAT2_(a, b)
#define TU_CAT2_(a, b) a##b##_
#define TU_NARG_(...) TU_NARG_N_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, \
    20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TU_NARG_N_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
    _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, n, ...) n
#define TU_FE_1_(m, x) m(x)
#define TU_FE_2_(m, x, ...) m(x) TU_FE_1_(m, __VA_ARGS__)
#define TU_FE_3_(m, x, ...) m(x) TU_FE_2_(m, __VA_ARGS__)
#define TU_FE_4_(m, x, ...) m(x) TU_FE_3_(m, __VA_ARGS__)
#define TU_FE_5_(m, x, ...) m(x) TU_FE_4_(m, __VA_ARGS__)
#define TU_FE_6_(m, x, ...) m(x) TU_FE_5_(m, __VA_ARGS__)
#define TU_FE_7_(m, x, ...) m(x) TU_FE_6_(m, __VA_ARGS__)
#define TU_FE_8_(m, x, ...) m(x) TU_FE_7_(m, __VA_ARGS__)
#define TU_FE_9_(m, x, ...) m(x) TU_FE_8_(m, __VA_ARGS__)
#define TU_FE_10_(m, x, ...) m(x) TU_FE_9_(m, __VA_ARGS__)
#define TU_FE_11_(m, x, ...) m(x) TU_FE_10_(m, __VA_ARGS__)
#define TU_FE_12_(m, x, ...) m(x) TU_FE_11_(m, __VA_ARGS__)
#define TU_FE_13_(m, x, ...) m(x) TU_FE_12_(m, __VA_ARGS__)
#define TU_FE_14_(m, x, ...) m(x) TU_FE_13_(m, __VA_ARGS__)
#define TU_FE_15_(m, x, ...) m(x) TU_FE_14_(m, __VA_ARGS__)
#define TU_FE_16_(m, x, ...) m(x) TU_FE_15_(m, __VA_ARGS__)
#define TU_FE_17_(m, x, ...) m(x) TU_FE_16_(m, __VA_ARGS__)
#define TU_FE_18_(m, x, ...) m(x) TU_FE_17_(m, __VA_ARGS__)
#define TU_FE_19_(m, x, ...) m(x) TU_FE_18_(m, __VA_ARGS__)
#define TU_FE_20_(m, x, ...) m(x) TU_FE_19_(m, __VA_ARGS__)
#define TU_FE_21_(m, x, ...) m(x) TU_FE_20_(m, __VA_ARGS__)
#define TU_FE_22_(m, x, ...) m(x) TU_FE_21_(m, __VA_ARGS__)
#define TU_FE_23_(m, x, ...) m(x) TU_FE_22_(m, __VA_ARGS__)
#define TU_FE_24_(m, x, ...) m(x) TU_FE_23_(m, __VA_ARGS__)
#define TU_FE_25_(m, x, ...) m(x) TU_FE_24_(m, __VA_ARGS__)
#define TU_FE_26_(m, x, ...) m(x) TU_FE_25_(m, __VA_ARGS__)
#define TU_FE_27_(m, x, ...) m(x) TU_FE_26_(m, __VA_ARGS__)
#define TU_FE_28_(m, x, ...) m(x) TU_FE_27_(m, __VA_ARGS__)
#define TU_FE_29_(m, x, ...) m(x) TU_FE_28_(m, __VA_ARGS__)
#define TU_FE_30_(m, x, ...) m(x) TU_FE_29_(m, __VA_ARGS__)
#define TU_FE_31_(m, x, ...) m(x) TU_FE_30_(m, __VA_ARGS__)
#define TU_FE_32_(m, x, ...) m(x) TU_FE_31_(m, __VA_ARGS__)

#endif
