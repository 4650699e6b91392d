/* What every GPU test shares: a context on the default device with the Khronos
 * validation layer and synchronization validation on, whose messages fail the
 * test; a skip when there is no device (unless VKATTN_REQUIRE_DEVICE is set);
 * and tensor helpers. */
#ifndef VKATTN_TEST_HARNESS_H
#define VKATTN_TEST_HARNESS_H

#include "test_util.h"

#include <string.h>

#include <vkattn/advanced.h>
#include <vkattn/vkattn.h>

/* Every group of a GPU test runs through th_run_group (the two cmocka macros
 * are redefined below), which
 *   - under VKATTN_TEST_PART=k/n runs only the k-th of n parts of the test's
 *     cases: case i (counted from 0 across the program's groups) runs in
 *     part (i + r) % n + 1, r being how many earlier groups ran the same
 *     array of cases (under other setups), so that a repeated group does not
 *     put its slow case in the same part again.
 *     CTest runs a slow test as n shorter ones (tests/TIMES.md). A group left
 *     with no case is not set up;
 *   - skips a group whose cases (the same array) already ran in this process
 *     under the same profile and tuning: e.g. "X, mobile-min"
 *     (th_setup_mobile) in the mobile-min pass repeats "X" (th_setup). Only
 *     th_setup, th_setup_mobile, th_setup_gpu_tuning and
 *     th_setup_gpu_tuning_mobile are compared; other setups always run.
 *     VKATTN_TEST_GROUPS=all runs such a group again all the same. */
int th_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                 CMFixtureFunction setup, CMFixtureFunction teardown);
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group, setup, teardown)                                             \
    th_run_group(#group, group, sizeof(group) / sizeof((group)[0]), setup, teardown)
#undef cmocka_run_group_tests_name
#define cmocka_run_group_tests_name(name, group, setup, teardown)                                  \
    th_run_group(name, group, sizeof(group) / sizeof((group)[0]), setup, teardown)

/* The desc th_setup creates its context with (validation, the failing
 * logger, VKATTN_TEST_* choices), for tests that need a second context with
 * one field changed. */
vkattn_context_desc th_context_desc(void);

/* Which kernels a context used: the names of the pipelines it created, from
 * its debug log ("pipeline NAME created"); validation warnings still count
 * as th_validation_count's. */
typedef struct th_pipelines {
    char names[64][48];
    unsigned count;
} th_pipelines;
/* The advanced settings th_context_desc gives, to adjust. */
vkattn_context_advanced th_advanced(void);
/* A context as th_context_desc's with *adv as its advanced settings, logging
 * every pipeline it creates into *seen (which must outlive it); a failed
 * create fails the test. */
vkattn_context *th_logged_context(const vkattn_context_advanced *adv, th_pipelines *seen);
/* The same under `profile` (NULL: VKATTN_TEST_PROFILE's), e.g. the group's. */
vkattn_context *th_logged_context_profile(const vkattn_context_advanced *adv, const char *profile,
                                          th_pipelines *seen);
/* th_logged_context under one tuning (the other settings th_advanced's), for
 * the tests of which kernel each tuning picks. */
static inline vkattn_context *th_tuning_context(int tuning, th_pipelines *seen)
{
    vkattn_context_advanced adv = th_advanced();
    adv.tuning = (vkattn_tuning)tuning;
    return th_logged_context(&adv, seen);
}
/* Whether a pipeline named `name` (prefix: whose name starts with it) was created. */
bool th_pipeline_seen(const th_pipelines *seen, const char *name, bool prefix);

/* The variant setups below (GPU tuning; th_setup_with given a profile other
 * than VKATTN_TEST_PROFILE's, th_setup_mobile) skip their group under
 * VKATTN_TEST_GROUPS=default (its tests skip as without a device).
 * cmocka group setup/teardown that run the group as under VKATTN_TEST_TUNING=gpu
 * whatever the environment says (the harness's own setting, not the
 * environment: setenv is POSIX-only), so that every CI mode runs the GPU
 * tuning's kernels. */
int th_setup_gpu_tuning(void **state);
int th_teardown_gpu_tuning(void **state);
/* The same under the mobile-min profile (no 16-bit storage, 4 storage
 * buffers); th_teardown_gpu_tuning ends it. */
int th_setup_gpu_tuning_mobile(void **state);
/* The same under any device profile ("mali", ...); th_teardown_gpu_tuning
 * ends it. */
int th_setup_gpu_tuning_profile(void **state, const char *profile);
/* Contexts made after th_force_no_subgroups(true) run as under
 * VKATTN_TEST_NO_SUBGROUPS, until th_force_no_subgroups(false). */
void th_force_no_subgroups(bool on);

/* cmocka group setup/teardown: *state becomes the vkattn_context. */
int th_setup(void **state);
/* The same with a given profile (NULL: the environment's) and dispatch budget
 * (0: the profile's). */
int th_setup_with(void **state, const char *profile, uint64_t max_dispatch_work);
/* The mobile-min profile: 16 KiB shared memory, 128 invocations, 4 storage
 * buffers per stage, descriptor sets from pools, no timestamps. */
#define TH_MOBILE_PROFILE "mobile-min"
int th_setup_mobile(void **state);
int th_teardown(void **state);
/* The cmocka group `tests` under th_setup, then under th_setup_mobile as
 * "NAME, mobile-min": the failures of both. */
#define TH_RUN_WITH_MOBILE(name, tests)                                                        \
    (cmocka_run_group_tests_name(name, tests, th_setup, th_teardown) +                         \
     cmocka_run_group_tests_name(name ", mobile-min", tests, th_setup_mobile, th_teardown))

/* Fails the test if the validation layer said anything at WARN or ERROR since
 * the last call (the messages are printed). */
void th_assert_validation_clean(void);
/* Number of WARN/ERROR validation messages so far. */
unsigned th_validation_count(void);

/* Fails the test unless r is VKATTN_SUCCESS, printing the context's error. */
#define TH_OK(ctx, expr)                                                                       \
    do {                                                                                       \
        vkattn_result th_r_ = (expr);                                                          \
        if (th_r_ != VKATTN_SUCCESS)                                                           \
            fail_msg("%s -> %s: %s", #expr, vkattn_result_name(th_r_), vkattn_last_error());   \
    } while (0)

/* The context's counters (vkattn_context_get_stats). */
static inline vkattn_context_stats th_stats(vkattn_context *ctx)
{
    vkattn_context_stats s;
    TH_OK(ctx, vkattn_context_get_stats(ctx, &s));
    return s;
}

/* 1-D tensor of n floats with `data` uploaded (NULL: poisoned with NaN). */
vkattn_tensor *th_tensor(vkattn_context *ctx, size_t n, const float *data);
/* The same of element type t (f16: data rounded to nearest even on upload). */
vkattn_tensor *th_typed_tensor(vkattn_context *ctx, size_t n, vkattn_dtype t, const float *data);

/* x[i] rounded to the nearest f16, in place: what an f16 tensor holds. */
void th_round_f16(float *x, size_t n);
/* x rounded to the nearest bf16 (ties to even), computed in double from the
 * rule (8 significand bits, f32's exponents), not by the library's bit
 * arithmetic; NaN and infinities kept. */
float th_bf16_round(float x);
/* The bits of th_bf16_round(x): what a bf16 tensor holds for x. */
uint16_t th_bf16_bits(float x);
/* x[i] rounded to what a tensor of type t holds (f32: unchanged). */
void th_round_to(float *x, size_t n, vkattn_dtype t);
/* How far storing an f32 result y into a tensor of type t may move it, for
 * |y| <= x: f16 one spacing (2^-10 relative, 2^-24 below the normal range;
 * Vulkan leaves the device's f32 -> f16 rounding open), bf16 half a spacing
 * (2^-8 relative, 2^-134 below the normal range; vkattn rounds to nearest
 * even itself), f32 0. */
double th_store_err(vkattn_dtype t, double x);
/* n floats uniform in [-a, a], rounded to f16. */
float *th_half_uniform(size_t n, float a);
/* n floats uniform in [-1, 1], rounded to f16 or bf16 when t is: exactly
 * what a tensor of type t holds (free it). */
static inline float *th_operand(size_t n, vkattn_dtype t)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1);
    th_round_to(x, n, t);
    return x;
}
/* Downloads n floats into a new array (free it). */
float *th_download(vkattn_tensor *t, size_t n);

/* Fails unless expr returns `code` and the last error mentions `needle`. */
#define TH_EXPECT_ERROR(expr, code, needle)                                                    \
    do {                                                                                       \
        vkattn_result th_r_ = (expr);                                                          \
        if (th_r_ != (code))                                                                   \
            fail_msg("%s returned %s; expected %s (%s)", #expr, vkattn_result_name(th_r_),     \
                     vkattn_result_name(code), vkattn_last_error());                           \
        if (!strstr(vkattn_last_error(), (needle)))                                            \
            fail_msg("%s: message \"%s\" does not mention \"%s\"", #expr, vkattn_last_error(), \
                     (needle));                                                                \
    } while (0)

/* The test's context, or skip() when the group found no device. */
#define TH_CTX(state) (*(state) ? (vkattn_context *)*(state) : (skip(), (vkattn_context *)NULL))

#endif
