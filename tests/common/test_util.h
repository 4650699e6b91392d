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
/* max |got - ref|, same NaN rules */
double tu_max_abs_err(const float *got, const float *ref, size_t n);

/* Fails the test with a message naming `what` if rel err > bound. */
#define TU_ASSERT_CLOSE(got, ref, n, bound, what)                                          \
    do {                                                                                   \
        double tu_err_ = tu_max_rel_err((got), (ref), (n), 1e-30);                         \
        if (!(tu_err_ <= (bound)))                                                         \
            fail_msg("%s: max relative error %.3g exceeds bound %.3g", (what), tu_err_,    \
                     (double)(bound));                                                     \
    } while (0)

/* The same against the sum of term magnitudes (tu_max_err_vs_terms). */
#define TU_ASSERT_CLOSE_TERMS(got, ref, terms, n, bound, what)                             \
    do {                                                                                   \
        double tu_err_ = tu_max_err_vs_terms((got), (ref), (terms), (n), 1e-30);           \
        if (!(tu_err_ <= (bound)))                                                         \
            fail_msg("%s: max error %.3g of the largest sum of term magnitudes exceeds "   \
                     "bound %.3g",                                                         \
                     (what), tu_err_, (double)(bound));                                    \
    } while (0)

#endif
