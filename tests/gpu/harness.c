
#include "harness.h"

#include <vkattn/advanced.h>
#include <vkattn/half.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned validation_messages;
static unsigned reported;

static void on_log(void *user, vkattn_log_level level, vkattn_log_source source, const char *msg)
{
    (void)user;
    if (source != VKATTN_LOG_SOURCE_VALIDATION || level > VKATTN_LOG_WARN)
        return;
    validation_messages++;
    fprintf(stderr, "VALIDATION %s: %s\n", level == VKATTN_LOG_ERROR ? "ERROR" : "WARNING", msg);
}

unsigned th_validation_count(void) { return validation_messages; }

void th_assert_validation_clean(void)
{
    if (validation_messages != reported) {
        unsigned n = validation_messages - reported;
        reported = validation_messages;
        fail_msg("%u validation message(s), see stderr", n);
    }
}

/* VKATTN_TEST_TUNING=gpu|cpu runs the other kernel shapes (CI runs the GPU
 * shapes on lavapipe in its second pass). */
/* Set by th_setup_gpu_tuning for its group (in place of the variable: the
 * process environment is not portably writable) */
static const char *tuning_override;
static bool no_subgroups_override;

void th_force_no_subgroups(bool on) { no_subgroups_override = on; }

static vkattn_tuning tuning_from_env(void)
{
    const char *t = tuning_override ? tuning_override : getenv("VKATTN_TEST_TUNING");
    if (t && strcmp(t, "gpu") == 0)
        return VKATTN_TUNING_GPU;
    if (t && strcmp(t, "cpu") == 0)
        return VKATTN_TUNING_CPU;
    return VKATTN_TUNING_AUTO;
}

vkattn_context_desc th_context_desc(void)
{
    static vkattn_context_advanced advanced; /* outlives the desc; read at create */
    /* VKATTN_TEST_NO_SUBGROUPS runs the kernels' shared-memory reductions
     * where they would use subgroup operations. */
    advanced = (vkattn_context_advanced){.tuning = tuning_from_env(),
                                         .no_subgroups = no_subgroups_override ||
                                                         getenv("VKATTN_TEST_NO_SUBGROUPS") != NULL};
    /* VKATTN_TEST_COOPMAT=on|off runs the suite with the cooperative-matrix
     * kernels on (where the device has them) or off (scripts/gpu-check.sh);
     * =emulate with their emulation on any device (slow: by hand, with
     * VKATTN_TEST_TUNING=gpu, not in CI). */
    const char *coopmat = getenv("VKATTN_TEST_COOPMAT");
    if (coopmat && strcmp(coopmat, "on") == 0)
        advanced.cooperative_matrix = VKATTN_COOPMAT_ON;
    else if (coopmat && strcmp(coopmat, "off") == 0)
        advanced.cooperative_matrix = VKATTN_COOPMAT_OFF;
    else if (coopmat && strcmp(coopmat, "emulate") == 0)
        advanced.coopmat_emulate = true;
    vkattn_context_desc desc = {
        .enable_validation = getenv("VKATTN_TEST_NO_VALIDATION") == NULL,
        .log = on_log,
        .log_level = VKATTN_LOG_WARN,
        .device_name = getenv("VKATTN_TEST_DEVICE"),
        /* VKATTN_TEST_PROFILE=mobile-min (CI's third pass) runs the suite
         * under the Vulkan 1.1 minimums; the library reads no variable. */
        .profile = getenv("VKATTN_TEST_PROFILE"),
        .advanced = &advanced,
    };
    return desc;
}

static void on_pipeline_log(void *user, vkattn_log_level level, vkattn_log_source source,
                            const char *msg)
{
    on_log(NULL, level, source, msg);
    th_pipelines *seen = user;
    char name[48];
    if (source == VKATTN_LOG_SOURCE_LIBRARY && sscanf(msg, "pipeline %47s created", name) == 1 &&
        seen->count < sizeof seen->names / sizeof seen->names[0])
        memcpy(seen->names[seen->count++], name, sizeof name);
}

vkattn_context_advanced th_advanced(void) { return *th_context_desc().advanced; }

vkattn_context *th_logged_context(const vkattn_context_advanced *adv, th_pipelines *seen)
{
    return th_logged_context_profile(adv, NULL, seen);
}

vkattn_context *th_logged_context_profile(const vkattn_context_advanced *adv, const char *profile,
                                          th_pipelines *seen)
{
    vkattn_context_desc desc = th_context_desc();
    if (profile)
        desc.profile = profile;
    vkattn_context_advanced settings = *adv;
    desc.advanced = &settings;
    /* A context's cooperative-matrix self-test creates pipelines of its own
     * (ops/coopmat_selftest.h); its outcome is kept for the process, so a
     * first context takes it and the logged one records its calls' alone. */
    vkattn_context *first = NULL;
    TH_OK(NULL, vkattn_context_create(&desc, &first));
    vkattn_context_destroy(first);
    *seen = (th_pipelines){0};
    desc.log = on_pipeline_log, desc.log_user = seen, desc.log_level = VKATTN_LOG_DEBUG;
    vkattn_context *ctx = NULL;
    TH_OK(NULL, vkattn_context_create(&desc, &ctx));
    return ctx;
}

bool th_pipeline_seen(const th_pipelines *seen, const char *name, bool prefix)
{
    for (unsigned i = 0; i < seen->count; i++)
        if (prefix ? strncmp(seen->names[i], name, strlen(name)) == 0
                   : strcmp(seen->names[i], name) == 0)
            return true;
    return false;
}

/* VKATTN_TEST_GROUPS=default runs only the groups in the environment's
 * configuration: a group whose setup picks its own tuning (the GPU-tuning
 * setups below) or a profile other than VKATTN_TEST_PROFILE (mobile-min, mali,
 * ... through th_setup_with) is skipped, its tests as without a device. CI's
 * Debian 13 pass uses it (scripts/test-debian13.sh); the Debian 12 passes run
 * every group. */
static bool variant_skipped(void **state, const char *variant)
{
    const char *groups = getenv("VKATTN_TEST_GROUPS");
    if (!groups || strcmp(groups, "default") != 0)
        return false;
    printf("# skipping this group (%s): VKATTN_TEST_GROUPS=default\n", variant);
    *state = NULL;
    return true;
}

int th_setup_gpu_tuning(void **state)
{
    if (variant_skipped(state, "GPU tuning"))
        return 0;
    tuning_override = "gpu";
    return th_setup(state);
}

int th_setup_gpu_tuning_mobile(void **state)
{
    if (variant_skipped(state, "GPU tuning, " TH_MOBILE_PROFILE))
        return 0;
    tuning_override = "gpu";
    return th_setup_mobile(state);
}

int th_setup_gpu_tuning_profile(void **state, const char *profile)
{
    if (variant_skipped(state, "GPU tuning, profile"))
        return 0;
    tuning_override = "gpu";
    return th_setup_with(state, profile, 0);
}

int th_teardown_gpu_tuning(void **state)
{
    tuning_override = NULL;
    return th_teardown(state);
}

int th_setup(void **state) { return th_setup_with(state, NULL, 0); }

int th_setup_mobile(void **state) { return th_setup_with(state, TH_MOBILE_PROFILE, 0); }

int th_setup_with(void **state, const char *profile, uint64_t max_dispatch_work)
{
    const char *env_profile = getenv("VKATTN_TEST_PROFILE");
    if (profile && !(env_profile && strcmp(profile, env_profile) == 0) &&
        variant_skipped(state, profile))
        return 0;
    tu_seed();
    vkattn_context_desc desc = th_context_desc();
    if (profile)
        desc.profile = profile;
    desc.max_dispatch_work = max_dispatch_work;
    vkattn_context *ctx = NULL;
    vkattn_result r = vkattn_context_create(&desc, &ctx);
    if (r == VKATTN_ERROR_NO_VULKAN || r == VKATTN_ERROR_NO_DEVICE) {
        if (getenv("VKATTN_REQUIRE_DEVICE")) {
            fprintf(stderr, "no device, and VKATTN_REQUIRE_DEVICE is set: %s\n", vkattn_last_error());
            return -1;
        }
        fprintf(stderr, "skipping: %s\n", vkattn_last_error());
        *state = NULL;
        return 0;
    }
    if (r != VKATTN_SUCCESS) {
        fprintf(stderr, "vkattn_context_create: %s: %s\n", vkattn_result_name(r), vkattn_last_error());
        return -1;
    }
    vkattn_context_info info;
    vkattn_context_get_info(ctx, &info);
    printf("# device: %s (profile %s, subgroup %u, shared %u B, %s tuning, %s descriptors)\n",
           info.device_name, info.profile, info.subgroup_size, info.max_shared_memory,
           info.cpu_tuning ? "CPU" : "GPU", info.push_descriptors ? "push" : "pooled");
    *state = ctx;
    return 0;
}

int th_teardown(void **state)
{
    vkattn_context_destroy(*state);
    /* A failed test leaks its tensors (cmocka leaves it mid-way); their
     * messages at vkDestroyDevice fail this group, not the next one too. */
    const bool clean = validation_messages == reported;
    reported = validation_messages;
    return clean ? 0 : -1;
}

vkattn_tensor *th_typed_tensor(vkattn_context *ctx, size_t n, vkattn_dtype t, const float *data)
{
    vkattn_tensor_desc desc = {.rank = 1, .dims = {(uint32_t)n}, .dtype = t};
    vkattn_tensor *d = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &desc, &d));
    if (data)
        TH_OK(ctx, vkattn_tensor_upload(d, data, 0, n));
    else
        TH_OK(ctx, vkattn_tensor_fill(d, NAN));
    return d;
}

vkattn_tensor *th_tensor(vkattn_context *ctx, size_t n, const float *data)
{
    return th_typed_tensor(ctx, n, VKATTN_DTYPE_F32, data);
}

void th_round_f16(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = tu_f16_to_f32(tu_f16_bits(x[i]));
}

float th_bf16_round(float x)
{
    if (x == 0.0f || !isfinite(x))
        return x;
    /* the spacing at |x|: 2^(e - 7), 2^-133 below the normal range; rint
     * rounds ties to even, and a carry into the next binade stays exact */
    const int e = ilogb(x) < -126 ? -126 : ilogb(x);
    const double sp = ldexp(1.0, e - 7);
    return (float)(rint((double)x / sp) * sp);
}

void th_round_to(float *x, size_t n, vkattn_dtype t)
{
    if (t == VKATTN_DTYPE_F16)
        th_round_f16(x, n);
    for (size_t i = 0; t == VKATTN_DTYPE_BF16 && i < n; i++)
        x[i] = th_bf16_round(x[i]);
}

double th_store_err(vkattn_dtype t, double x)
{
    if (t != VKATTN_DTYPE_F16 && t != VKATTN_DTYPE_BF16)
        return 0.0;
    const bool f16 = t == VKATTN_DTYPE_F16;
    const int emin = f16 ? -14 : -126, mant = f16 ? 10 : 7;
    const int e = x == 0.0 || ilogb(x) < emin ? emin : ilogb(fabs(x));
    return ldexp(f16 ? 1.0 : 0.5, e - mant);
}

uint16_t th_bf16_bits(float x)
{
    const float r = th_bf16_round(x);
    uint32_t u;
    memcpy(&u, &r, sizeof u);
    return (uint16_t)(u >> 16);
}

float *th_half_uniform(size_t n, float a)
{
    float *x = tu_floats(n ? n : 1);
    tu_fill_uniform(x, n, -a, a);
    th_round_f16(x, n);
    return x;
}

float *th_download(vkattn_tensor *t, size_t n)
{
    float *out = tu_floats(n);
    vkattn_result r = vkattn_tensor_download(t, out, 0, n);
    if (r != VKATTN_SUCCESS)
        fail_msg("download: %s: %s", vkattn_result_name(r), vkattn_last_error());
    return out;
}

/* ---- th_run_group: parts and repeated groups (harness.h) */

static unsigned cases_seen; /* cases of earlier groups, for the part numbering */
static const struct CMUnitTest *arrays_seen[64]; /* every group's array, in order */
static unsigned n_arrays_seen;

/* A group's cases: its array (in main, so one address per array) and, should
 * an address be reused, its size and first case. */
static struct {
    const struct CMUnitTest *tests;
    size_t count;
    CMUnitTestFunction first;
    char config[96];
} groups_run[64];
static unsigned n_groups_run;

/* The profile and tuning a known setup gives its context; false for any
 * other setup (which may change anything). */
static bool group_config(CMFixtureFunction setup, char *out, size_t size)
{
    const char *env_profile = getenv("VKATTN_TEST_PROFILE");
    const char *env_tuning = getenv("VKATTN_TEST_TUNING");
    const char *profile, *tuning;
    if (setup == th_setup) {
        profile = env_profile, tuning = env_tuning;
    } else if (setup == th_setup_mobile) {
        profile = TH_MOBILE_PROFILE, tuning = env_tuning;
    } else if (setup == th_setup_gpu_tuning) {
        profile = env_profile, tuning = "gpu";
    } else if (setup == th_setup_gpu_tuning_mobile) {
        profile = TH_MOBILE_PROFILE, tuning = "gpu";
    } else {
        return false;
    }
    snprintf(out, size, "profile=%s tuning=%s", profile ? profile : "",
             tuning ? tuning : "");
    return true;
}

static int run_cmocka_group(const char *name, const struct CMUnitTest *tests, size_t count,
                            CMFixtureFunction setup, CMFixtureFunction teardown)
{
#if defined(VKATTN_MINICMOCKA_H)
    return _mcm_run_group(name, tests, count, setup, teardown);
#else
    return _cmocka_run_group_tests(name, tests, count, setup, teardown);
#endif
}

int th_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                 CMFixtureFunction setup, CMFixtureFunction teardown)
{
    /* A group repeating an earlier group's cases under another setup starts
     * one part further for each time they ran before: dealt from the same
     * part, its slow case would land in the same part again. */
    unsigned repeats = 0;
    for (unsigned i = 0; i < n_arrays_seen; i++)
        repeats += arrays_seen[i] == tests;
    if (n_arrays_seen < sizeof arrays_seen / sizeof arrays_seen[0])
        arrays_seen[n_arrays_seen++] = tests;
    const unsigned first = cases_seen + repeats;
    cases_seen += (unsigned)count;
    unsigned part = 1, parts = 1;
    const char *env_part = getenv("VKATTN_TEST_PART");
    if (env_part) {
        char end = 0;
        if (sscanf(env_part, "%u/%u%c", &part, &parts, &end) != 2 || part < 1 || part > parts) {
            fprintf(stderr, "VKATTN_TEST_PART=%s: expected k/n with 1 <= k <= n\n", env_part);
            return 1;
        }
    }
    char config[96];
    const char *groups = getenv("VKATTN_TEST_GROUPS");
    const bool repeat = groups && strcmp(groups, "all") == 0;
    if (!repeat && group_config(setup, config, sizeof config)) {
        for (unsigned i = 0; i < n_groups_run; i++)
            if (groups_run[i].tests == tests && groups_run[i].count == count &&
                groups_run[i].first == tests[0].test_func &&
                strcmp(groups_run[i].config, config) == 0) {
                printf("# group %s: skipped, its cases already ran under %s\n", name, config);
                return 0;
            }
        if (n_groups_run < sizeof groups_run / sizeof groups_run[0]) {
            groups_run[n_groups_run].tests = tests;
            groups_run[n_groups_run].count = count;
            groups_run[n_groups_run].first = tests[0].test_func;
            snprintf(groups_run[n_groups_run].config, sizeof groups_run[0].config, "%s", config);
            n_groups_run++;
        }
    }
    if (parts == 1)
        return run_cmocka_group(name, tests, count, setup, teardown);
    struct CMUnitTest *mine = malloc(count * sizeof *mine);
    if (!mine)
        return 1;
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if ((first + i) % parts == part - 1)
            mine[n++] = tests[i];
    int failed = 0;
    if (n == 0)
        printf("# group %s: no case in part %u/%u\n", name, part, parts);
    else
        failed = run_cmocka_group(name, mine, n, setup, teardown);
    free(mine);
    return failed;
}
