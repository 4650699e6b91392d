/* Shared helpers of attnbench (see common.h). */
#include "common.h"

#include <vkattn/advanced.h>
#include <vkattn/half.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned g_validation_messages;
static char g_cache_ignored[512]; /* why the library ignored --pipeline-cache's data; "" = used */
static char g_variant_unfit[512]; /* the library's word that a --variant did not fit; "" = none */
static bool g_sdpa_decode;        /* the library's word that an sdpa call took the decode kernel */

static void log_cb(void *user, vkattn_log_level level, vkattn_log_source source, const char *msg)
{
    (void)user;
    if (source == VKATTN_LOG_SOURCE_VALIDATION && level <= VKATTN_LOG_WARN) {
        g_validation_messages++;
        fprintf(stderr, "attnbench: validation: %s\n", msg);
    }
    /* vkattn_context_create's warning is the only word on whether the seed
     * data was taken (context.c: "pipeline_cache_data (N bytes) is ignored: why") */
    const char *ignored = source == VKATTN_LOG_SOURCE_LIBRARY && level == VKATTN_LOG_WARN &&
                                  strstr(msg, "pipeline_cache_data")
                              ? strstr(msg, "is ignored: ")
                              : NULL;
    if (ignored)
        snprintf(g_cache_ignored, sizeof g_cache_ignored, "%s", ignored + strlen("is ignored: "));
    /* variant_select.c: a forced variant that does not fit ran another kernel */
    if (source == VKATTN_LOG_SOURCE_LIBRARY && level == VKATTN_LOG_WARN &&
        strstr(msg, "advanced->variants[") && !g_variant_unfit[0])
        snprintf(g_variant_unfit, sizeof g_variant_unfit, "%s", msg);
    /* sdpa.c: an AUTO call with few rows routed to the decode kernel */
    if (source == VKATTN_LOG_SOURCE_LIBRARY && level == VKATTN_LOG_DEBUG &&
        strstr(msg, "vkattn_sdpa_record: path decode"))
        g_sdpa_decode = true;
}

const char *ab_variant_unfit(void) { return g_variant_unfit[0] ? g_variant_unfit : NULL; }

bool ab_sdpa_decode_taken(void)
{
    const bool seen = g_sdpa_decode;
    g_sdpa_decode = false;
    return seen;
}

const char *ab_pipeline_cache_ignored(void)
{
    return g_cache_ignored[0] ? g_cache_ignored : NULL;
}

unsigned ab_validation_messages(void) { return g_validation_messages; }

void ab_coopmat_settings(int choice, vkattn_context_advanced *adv)
{
    static const uint32_t family[] = {VKATTN_COOPMAT_NV, VKATTN_COOPMAT_KHR, VKATTN_COOPMAT_NV2};
    if (choice <= VKATTN_COOPMAT_ON) {
        adv->cooperative_matrix = (vkattn_coopmat_mode)choice;
    } else if (choice == AB_COOPMAT_EMULATE) {
        adv->coopmat_emulate = true;
    } else {
        adv->cooperative_matrix = VKATTN_COOPMAT_ON;
        adv->coopmat_families = family[choice - AB_COOPMAT_NV];
    }
}

/* --coopmat nv|khr|nv2 on a context that does not run that family would time
 * the scalar kernels under the family's name: refused, saying why (the
 * context destroyed, *ctx NULL). */
static int forced_family_runs(int choice, vkattn_context **ctx_out)
{
    vkattn_context *ctx = *ctx_out;
    if (choice < AB_COOPMAT_NV)
        return ATTNBENCH_EXIT_OK;
    static const char *const names[] = {"nv", "khr", "nv2"};
    const uint32_t index = (uint32_t)(choice - AB_COOPMAT_NV);
    vkattn_context_info info;
    if (vkattn_context_get_info(ctx, &info) == VKATTN_SUCCESS &&
        (info.coopmat_running & (1u << index)))
        return ATTNBENCH_EXIT_OK;
    fprintf(stderr, "attnbench: --coopmat %s: not supported on %s: %s\n", names[index],
            info.device_name, info.coopmat_check[index].detail);
    vkattn_context_destroy(ctx);
    *ctx_out = NULL;
    return ATTNBENCH_EXIT_USAGE;
}

int ab_open_context(const ab_args *a, vkattn_context **ctx)
{
    return ab_open_context_seeded(a, NULL, 0, ctx);
}

int ab_open_context_seeded(const ab_args *a, const void *cache_data, size_t cache_size,
                           vkattn_context **ctx)
{
    *ctx = NULL;
    /* precedence: --device, then $VKATTN_DEVICE, then the library's default */
    bool by_index = a->has_device;
    uint32_t index = a->device;
    const char *name = a->device_name, *what = "--device";
    const char *env = getenv("VKATTN_DEVICE");
    if (!by_index && !name && env) {
        what = "$VKATTN_DEVICE";
        int st = ab_parse_device(what, env, &by_index, &index, &name);
        if (st)
            return st;
    }
    vkattn_context_advanced advanced = {
        .tuning = (vkattn_tuning)a->tuning,
        .capture_pipeline_stats = a->pipeline_stats,
    };
    ab_coopmat_settings(a->coopmat, &advanced);
    memcpy(advanced.variants, a->variants, sizeof advanced.variants);
    g_cache_ignored[0] = '\0';
    g_variant_unfit[0] = '\0';
    vkattn_context_desc desc = {
        .advanced = &advanced,
        .use_device_index = by_index,
        .device_index = index,
        .device_name = name,
        .enable_validation = a->validation,
        .log = log_cb,
        .log_level = VKATTN_LOG_DEBUG, /* log_cb reads the few lines it needs */
        .profile = a->profile,
        .pipeline_cache_data = cache_data,
        .pipeline_cache_size = cache_size,
    };
    if (by_index) {
        uint32_t count = 0;
        vkattn_result r = vkattn_enumerate_devices(NULL, &count);
        if (r == VKATTN_SUCCESS && index >= count) {
            fprintf(stderr, "attnbench: %s %u: there %s %u device%s (see `attnbench devices`)\n",
                    what, index, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
            return ATTNBENCH_EXIT_USAGE;
        }
    }
    vkattn_result r = vkattn_context_create(&desc, ctx);
    if (r == VKATTN_ERROR_NO_DEVICE && name) {
        fprintf(stderr, "attnbench: %s %s: no usable device's name contains it (see `attnbench "
                        "devices`): %s\n", what, name, vkattn_last_error());
        return ATTNBENCH_EXIT_USAGE;
    }
    if (r != VKATTN_SUCCESS)
        return ab_report(NULL, r, "creating the Vulkan context");
    return forced_family_runs(a->coopmat, ctx);
}

int ab_report(vkattn_context *ctx, vkattn_result r, const char *what)
{
    const char *msg = ctx ? vkattn_context_last_error(ctx) : vkattn_last_error();
    if (!msg || !*msg)
        msg = vkattn_last_error();
    fprintf(stderr, "attnbench: %s: %s: %s\n", what, vkattn_result_name(r),
            msg && *msg ? msg : vkattn_result_message(r));
    return ATTNBENCH_EXIT_CHECK;
}

double ab_now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void ab_progress(const char *fmt, ...)
{
    static double start, last;
    double now = ab_now_s();
    if (start == 0)
        start = now;
    /* quiet for the first 2 s, then at most one line per second */
    if (now - start < 2.0 || now - last < 1.0)
        return;
    last = now;
    va_list ap;
    va_start(ap, fmt);
    fputs("attnbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

uint64_t ab_rng_next(ab_rng *r)
{
    /* splitmix64: tiny, good enough for benchmark inputs, same on every host */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float ab_rng_float(ab_rng *r, float lo, float hi)
{
    double u = (double)(ab_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

void ab_fill_uniform(ab_rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ab_rng_float(r, lo, hi);
}

void ab_fill_mask(ab_rng *r, float *x, size_t n, double ratio)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ab_rng_float(r, 0.0f, 1.0f) < ratio ? 0.0f : 1.0f;
}

float *ab_floats(size_t n)
{
    /* a count whose bytes overflow would wrap to a small block that the
     * caller then writes n floats into */
    if (n > SIZE_MAX / sizeof(float)) {
        fprintf(stderr, "attnbench: %zu floats are more than a host array can hold\n", n);
        return NULL;
    }
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        fprintf(stderr, "attnbench: out of host memory (%zu floats)\n", n);
    return p;
}

vkattn_result ab_tensor_typed(vkattn_context *ctx, uint32_t rank, const uint32_t *dims,
                              vkattn_dtype dtype, const float *data, vkattn_tensor **out)
{
    vkattn_tensor_desc desc = {.rank = rank, .dtype = dtype};
    for (uint32_t i = 0; i < rank && i < VKATTN_MAX_RANK; i++)
        desc.dims[i] = dims[i];
    vkattn_result r = vkattn_tensor_create(ctx, &desc, out);
    if (r == VKATTN_SUCCESS && data)
        r = vkattn_tensor_upload(*out, data, 0, vkattn_tensor_get_info(*out).count);
    if (r != VKATTN_SUCCESS) {
        vkattn_tensor_destroy(*out);
        *out = NULL;
    }
    return r;
}

vkattn_result ab_tensor(vkattn_context *ctx, uint32_t rank, const uint32_t *dims, const float *data,
                        vkattn_tensor **out)
{
    return ab_tensor_typed(ctx, rank, dims, VKATTN_DTYPE_F32, data, out);
}

vkattn_result ab_tensor4(vkattn_context *ctx, uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3,
                         const float *data, vkattn_tensor **out)
{
    uint32_t dims[4] = {d0, d1, d2, d3};
    uint32_t rank = d3 ? 4 : d2 ? 3 : d1 ? 2 : 1;
    return ab_tensor(ctx, rank, dims, data, out);
}

static double diff(float got, float ref)
{
    if (isnan(got) && isnan(ref))
        return 0.0;
    if (!isfinite(got) && isfinite(ref))
        return INFINITY;
    if (!isfinite(ref))
        return got == ref ? 0.0 : INFINITY;
    return fabs((double)got - (double)ref);
}

bool ab_within_tolerance(const float *got, const float *want, size_t n, double atol, double rtol)
{
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= atol + rtol * fabs((double)want[i])))
            return false;
    }
    return true;
}

double ab_worse_err(double a, double b) { return isnan(b) || b > a ? b : a; }

double ab_max_abs_err(const float *got, const float *ref, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = diff(got[i], ref[i]);
        if (d > m || isnan(d))
            m = d;
    }
    return m;
}

double ab_max_rel_err(const float *got, const float *ref, size_t n)
{
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > scale)
            scale = fabs(ref[i]);
    double e = ab_max_abs_err(got, ref, n);
    return scale > 0.0 ? e / scale : e;
}

vkattn_result ab_run_once(vkattn_context *ctx, vkattn_result (*record)(void *, VkCommandBuffer),
                          void *state)
{
    VkCommandBuffer cmd;
    vkattn_result r = vkattn_context_begin_commands(ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_result rec = record(state, cmd);
    /* submitting is also how an open recording is closed after a failure */
    vkattn_result sub = vkattn_context_submit_and_wait(ctx, cmd);
    return rec != VKATTN_SUCCESS ? rec : sub;
}

vkattn_result ab_buf_make(vkattn_context *ctx, ab_buf *b, uint32_t rank, const uint32_t *dims,
                          ab_rng *rng, float lo, float hi)
{
    return ab_buf_make_as(ctx, b, rank, dims, rng, lo, hi, VKATTN_DTYPE_F32);
}

vkattn_result ab_buf_make_as(vkattn_context *ctx, ab_buf *b, uint32_t rank, const uint32_t *dims,
                             ab_rng *rng, float lo, float hi, vkattn_dtype dtype)
{
    ab_buf_spec spec = {.b = b, .rank = rank, .dtype = dtype,
                        .fill = rng ? AB_FILL_UNIFORM : AB_FILL_NONE, .lo = lo, .hi = hi};
    for (uint32_t i = 0; i < rank && i < VKATTN_MAX_RANK; i++)
        spec.dims[i] = dims[i];
    return ab_bufs_make(ctx, rng, &spec, 1);
}

vkattn_result ab_buf_mask(vkattn_context *ctx, ab_buf *b, uint32_t rank, const uint32_t *dims,
                          ab_rng *rng, double ratio)
{
    ab_buf_spec spec = {.b = b, .rank = rank, .fill = AB_FILL_MASK, .ratio = ratio};
    for (uint32_t i = 0; i < rank && i < VKATTN_MAX_RANK; i++)
        spec.dims[i] = dims[i];
    return ab_bufs_make(ctx, rng, &spec, 1);
}

vkattn_result ab_bufs_create(vkattn_context *ctx, const ab_buf_spec *specs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ab_buf_spec *sp = &specs[i];
        if (sp->absent)
            continue;
        memset(sp->b, 0, sizeof *sp->b);
        vkattn_tensor_desc desc = {.rank = sp->rank, .dtype = sp->dtype};
        for (uint32_t d = 0; d < sp->rank && d < VKATTN_MAX_RANK; d++)
            desc.dims[d] = sp->dims[d];
        vkattn_result r = vkattn_tensor_create(ctx, &desc, &sp->b->t);
        if (r != VKATTN_SUCCESS)
            return r;
        sp->b->n = (size_t)vkattn_tensor_get_info(sp->b->t).count;
    }
    return VKATTN_SUCCESS;
}

vkattn_result ab_bufs_fill(ab_rng *rng, const ab_buf_spec *specs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ab_buf_spec *sp = &specs[i];
        ab_buf *b = sp->b;
        if (sp->absent)
            continue;
        if (!(b->host = ab_floats(b->n)))
            return VKATTN_ERROR_OUT_OF_HOST_MEMORY;
        if (sp->fill == AB_FILL_NONE)
            continue;
        if (sp->fill == AB_FILL_MASK) {
            ab_fill_mask(rng, b->host, b->n, sp->ratio);
        } else {
            ab_fill_uniform(rng, b->host, b->n, sp->lo, sp->hi);
        }
        vkattn_result r = vkattn_tensor_upload(b->t, b->host, 0, b->n);
        /* the library rounded a 16-bit tensor's values: the host twin takes
         * them back, so the reference sees exactly what the device reads */
        if (r == VKATTN_SUCCESS && sp->dtype != VKATTN_DTYPE_F32)
            r = vkattn_tensor_download(b->t, b->host, 0, b->n);
        if (r != VKATTN_SUCCESS)
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result ab_bufs_make(vkattn_context *ctx, ab_rng *rng, const ab_buf_spec *specs, size_t n)
{
    /* every tensor first: the library checks each size against the device
     * before any host array is allocated, let alone filled */
    vkattn_result r = ab_bufs_create(ctx, specs, n);
    return r != VKATTN_SUCCESS ? r : ab_bufs_fill(rng, specs, n);
}

void ab_buf_free(ab_buf *b)
{
    vkattn_tensor_destroy(b->t);
    free(b->host);
    memset(b, 0, sizeof *b);
}

int ab_check_outputs(vkattn_context *ctx, vkattn_result (*record)(void *, VkCommandBuffer),
                     void *state, ab_buf *const *outs, float *const *refs, size_t n_outs,
                     double *err)
{
    vkattn_result r = VKATTN_SUCCESS;
    for (size_t i = 0; i < n_outs && r == VKATTN_SUCCESS; i++)
        r = vkattn_tensor_fill(outs[i]->t, NAN);
    if (r == VKATTN_SUCCESS)
        r = ab_run_once(ctx, record, state);
    for (size_t i = 0; i < n_outs && r == VKATTN_SUCCESS; i++)
        r = vkattn_tensor_download(outs[i]->t, outs[i]->host, 0, outs[i]->n);
    if (r != VKATTN_SUCCESS)
        return ab_report(ctx, r, "--check run");
    *err = 0.0;
    for (size_t i = 0; i < n_outs; i++) {
        double e = ab_max_rel_err(outs[i]->host, refs[i], outs[i]->n);
        if (e > *err || isnan(e))
            *err = e;
    }
    return ATTNBENCH_EXIT_OK;
}

uint16_t ab_f16_bits(float x)
{
    uint16_t bits;
    vkattn_f32_to_f16_array(&bits, &x, 1);
    return bits;
}

float ab_f16_to_f32(uint16_t bits)
{
    float x;
    vkattn_f16_to_f32_array(&x, &bits, 1);
    return x;
}

float ab_half_value(vkattn_dtype dtype, uint16_t bits)
{
    if (dtype != VKATTN_DTYPE_BF16)
        return ab_f16_to_f32(bits);
    const uint32_t u = (uint32_t)bits << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

const char *ab_dtype_name(vkattn_dtype dtype)
{
    return dtype == VKATTN_DTYPE_F16 ? "f16" : dtype == VKATTN_DTYPE_BF16 ? "bf16" : "f32";
}

void ab_round_values(ab_rounder *r, float *x, size_t n)
{
    if (r->dtype == VKATTN_DTYPE_F32 || r->result != VKATTN_SUCCESS || !x || !n)
        return;
    vkattn_tensor *t = NULL;
    const uint32_t dims[1] = {(uint32_t)n};
    vkattn_result res = n > UINT32_MAX ? VKATTN_ERROR_INVALID_ARGUMENT
                                       : ab_tensor_typed(r->ctx, 1, dims, r->dtype, x, &t);
    if (res == VKATTN_SUCCESS)
        res = vkattn_tensor_download(t, x, 0, n);
    vkattn_tensor_destroy(t);
    r->result = res;
}
