#include "test_util.h"

#include <vkattn/half.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

uint64_t tu_seed(void)
{
    const char *env = getenv("VKATTN_TEST_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    rng_state = seed ? seed : 1;
    printf("# random seed: VKATTN_TEST_SEED=%llu\n", (unsigned long long)seed);
    fflush(stdout);
    return seed;
}

void tu_reseed(uint64_t seed) { rng_state = seed ? seed : 1; }

uint32_t tu_rand_u32(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

uint32_t tu_rand_range(uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(((uint64_t)tu_rand_u32() * (uint64_t)(hi - lo + 1)) >> 32);
}

float tu_rand_float(float lo, float hi)
{
    return lo + (hi - lo) * (float)((tu_rand_u32() >> 8) * (1.0 / 16777216.0));
}

void tu_fill_uniform(float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = tu_rand_float(lo, hi);
}

void tu_fill_mask(float *x, size_t n, float p_one)
{
    for (size_t i = 0; i < n; i++)
        x[i] = tu_rand_float(0.0f, 1.0f) < p_one ? 1.0f : 0.0f;
}

void tu_poison(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

void *tu_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail_msg("out of host memory allocating %zu bytes", bytes);
    return p;
}

float *tu_floats(size_t n) { return tu_alloc(n * sizeof(float)); }

static double diff_of(float got, float ref)
{
    if (isnan(ref) && isnan(got))
        return 0.0;
    if (isnan(got) || isnan(ref))
        return INFINITY;
    return fabs((double)got - (double)ref);
}

double tu_max_abs_err(const float *got, const float *ref, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = diff_of(got[i], ref[i]);
        if (d > m)
            m = d;
    }
    return m;
}

double tu_max_err_vs_terms(const float *got, const float *ref, const float *terms, size_t n,
                           double floor)
{
    double scale = floor;
    for (size_t i = 0; i < n; i++)
        if (isfinite(terms[i]) && fabs(terms[i]) > scale)
            scale = fabs(terms[i]);
    return tu_max_abs_err(got, ref, n) / scale;
}

double tu_max_rel_err(const float *got, const float *ref, size_t n, double floor)
{
    return tu_max_err_vs_terms(got, ref, ref, n, floor);
}

/* VKATTN_TEST_MARGINS: the largest err/bound per check site, written at exit
 * (one line per site, so a check inside an element loop stays one line). */
enum { TU_SITES = 512 };
static struct tu_site {
    const char *file;
    int line;
    double worst;
} tu_sites[TU_SITES];
static int tu_site_count;

static void tu_write_margins(void)
{
    FILE *log = fopen(getenv("VKATTN_TEST_MARGINS"), "a");
    if (!log)
        return;
    for (int i = 0; i < tu_site_count; i++) {
        const char *base = strrchr(tu_sites[i].file, '/');
        fprintf(log, "%.6g %s:%d\n", tu_sites[i].worst, base ? base + 1 : tu_sites[i].file,
                tu_sites[i].line);
    }
    fclose(log);
}

int tu_within_at(double err, double bound, const char *file, int line)
{
    static int enabled = -1;
    if (enabled < 0) {
        const char *path = getenv("VKATTN_TEST_MARGINS");
        enabled = path && *path;
        if (enabled)
            atexit(tu_write_margins);
    }
    if (enabled) {
        const double ratio = bound > 0 ? err / bound : err;
        int i = 0;
        while (i < tu_site_count && !(tu_sites[i].line == line && !strcmp(tu_sites[i].file, file)))
            i++;
        if (i == tu_site_count && i < TU_SITES)
            tu_sites[tu_site_count++] = (struct tu_site){file, line, ratio};
        else if (i < tu_site_count && !(ratio <= tu_sites[i].worst))
            tu_sites[i].worst = ratio;
    }
    return err <= bound;
}

double tu_max_rel_err_past(const float *got, const float *ref, const double *allowed, size_t n,
                           double floor)
{
    double scale = floor, worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(ref[i]) > scale)
            scale = fabs(ref[i]);
        const double past = fabs((double)got[i] - ref[i]) - (allowed ? allowed[i] : 0.0);
        if (isnan(past))
            return NAN;
        if (past > worst)
            worst = past;
    }
    return worst / scale;
}

uint32_t tu_bits_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

float tu_float_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t tu_f16_bits(float x)
{
    uint16_t bits;
    vkattn_f32_to_f16_array(&bits, &x, 1);
    return bits;
}

float tu_f16_to_f32(uint16_t bits)
{
    float x;
    vkattn_f16_to_f32_array(&x, &bits, 1);
    return x;
}
