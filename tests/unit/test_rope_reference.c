/* The head preparation of the multi-head references (src/reference/rope.c,
 * compiled into this test: internal symbols are hidden in the library):
 * QK-norm then the rotary embedding of one head row, forward against a second
 * formulation written differently (complex multiplication for INTERLEAVED,
 * Hugging Face's cos/sin tables and rotate_half for HALF, KerasHub's
 * inverse frequencies), and the backward against central finite differences.
 * Host only; well under a second. */
#include "test_util.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include "reference/rope.h"

#define DIM 10

static double rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* KerasHub: inverse_freq = 1 / max_wavelength ^ (arange(0, rot, 2) / rot) / scaling */
static double inv_freq(const vkattn_rope_params *p, uint32_t i)
{
    return 1.0 / pow(p->max_wavelength, (2.0 * i) / p->rotary_dim) / p->scaling_factor;
}

/* The second formulation: RMS-norm, then rotate_half or complex products. */
static void other_prep(const vka_ref_head_prep *hp, double pos, const double *x, double *y)
{
    double n[DIM];
    double ms = 0.0;
    for (int e = 0; e < DIM; e++)
        ms += x[e] * x[e] / DIM;
    for (int e = 0; e < DIM; e++)
        n[e] = hp->norm ? hp->w[e] * (x[e] / sqrt(ms + hp->eps)) : x[e];
    memcpy(y, n, sizeof n);
    if (!hp->rope)
        return;
    const vkattn_rope_params *p = &hp->params;
    const uint32_t r = p->rotary_dim, half = r / 2;
    if (p->layout == VKATTN_ROPE_INTERLEAVED) {
        for (uint32_t i = 0; i < half; i++) {
            const double complex z = (n[2 * i] + I * n[2 * i + 1]) * cexp(I * pos * inv_freq(p, i));
            y[2 * i] = creal(z);
            y[2 * i + 1] = cimag(z);
        }
        return;
    }
    /* emb = cat(freqs, freqs); y = n * cos(emb) + rotate_half(n) * sin(emb) */
    double rot_half[DIM];
    for (uint32_t e = 0; e < half; e++) {
        rot_half[e] = -n[e + half];
        rot_half[e + half] = n[e];
    }
    for (uint32_t e = 0; e < r; e++) {
        const double f = pos * inv_freq(p, e % half);
        y[e] = n[e] * cos(f) + rot_half[e] * sin(f);
    }
}

typedef struct prep_case {
    bool norm, rope;
    uint32_t rotary_dim;
    vkattn_rope_layout layout;
    float scaling;
    double pos;
} prep_case;

static const prep_case cases[] = {
    {true, false, 0, VKATTN_ROPE_HALF, 1.0f, 0.0},
    {false, true, DIM, VKATTN_ROPE_HALF, 1.0f, 7.0},
    {false, true, DIM, VKATTN_ROPE_INTERLEAVED, 1.0f, 7.0},
    {true, true, 6, VKATTN_ROPE_HALF, 1.0f, 4095.0},
    {true, true, 6, VKATTN_ROPE_INTERLEAVED, 4.0f, 33.0},
    {true, true, DIM, VKATTN_ROPE_HALF, 2.5f, 1.0},
};

static vka_ref_head_prep prep_of(const prep_case *pc, const float *w)
{
    return (vka_ref_head_prep){
        .dim = DIM, .norm = pc->norm, .w = w, .eps = 1e-6, .rope = pc->rope,
        .params = {.max_wavelength = 10000.0f, .scaling_factor = pc->scaling,
                   .rotary_dim = pc->rotary_dim, .layout = pc->layout}};
}

static void forward_matches_second_formulation(void **state)
{
    (void)state;
    uint32_t seed = 7;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        float w[DIM];
        double x[DIM], y[DIM], want[DIM];
        for (int e = 0; e < DIM; e++) {
            w[e] = (float)(1.0 + 0.5 * rnd(&seed));
            x[e] = rnd(&seed);
        }
        const vka_ref_head_prep hp = prep_of(&cases[c], w);
        vka_ref_head_prep_row(&hp, cases[c].pos, x, y);
        other_prep(&hp, cases[c].pos, x, want);
        for (int e = 0; e < DIM; e++)
            if (fabs(y[e] - want[e]) > 1e-12) {
                print_error("case %zu feature %d: %.17g, the second formulation %.17g\n", c, e,
                            y[e], want[e]);
                fail();
            }
        /* in place gives the same */
        vka_ref_head_prep_row(&hp, cases[c].pos, x, x);
        assert_memory_equal(x, y, sizeof y);
    }
}

/* loss = dy . prep(x; w): its gradients against central differences */
static double loss(const vka_ref_head_prep *hp, double pos, const double *x, const double *dy)
{
    double y[DIM], l = 0.0;
    vka_ref_head_prep_row(hp, pos, x, y);
    for (int e = 0; e < DIM; e++)
        l += dy[e] * y[e];
    return l;
}

static void backward_matches_finite_differences(void **state)
{
    (void)state;
    uint32_t seed = 11;
    const double h = 1e-5;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        float w[DIM];
        double x[DIM], dy[DIM], dx[DIM], dw[DIM] = {0};
        for (int e = 0; e < DIM; e++) {
            w[e] = (float)(1.0 + 0.5 * rnd(&seed));
            x[e] = rnd(&seed);
            dy[e] = rnd(&seed);
        }
        vka_ref_head_prep hp = prep_of(&cases[c], w);
        const double pos = cases[c].pos;
        vka_ref_head_prep_row_backward(&hp, pos, x, dy, dx, dw);
        for (int e = 0; e < DIM; e++) {
            double xp[DIM], xm[DIM];
            memcpy(xp, x, sizeof x);
            memcpy(xm, x, sizeof x);
            xp[e] += h, xm[e] -= h;
            const double fd = (loss(&hp, pos, xp, dy) - loss(&hp, pos, xm, dy)) / (2 * h);
            if (fabs(fd - dx[e]) > 1e-7 * (1.0 + fabs(fd))) {
                print_error("case %zu dx[%d]: %.12g, finite differences %.12g\n", c, e, dx[e],
                            fd);
                fail();
            }
            if (!hp.norm)
                continue;
            /* w is f32: step it through a double copy of the prep's weights */
            float wp[DIM], wm[DIM];
            memcpy(wp, w, sizeof w);
            memcpy(wm, w, sizeof w);
            const float hw = 1.0f / 1024; /* exact in f32 near 1 */
            wp[e] += hw, wm[e] -= hw;
            vka_ref_head_prep hpp = hp, hpm = hp;
            hpp.w = wp, hpm.w = wm;
            const double fdw = (loss(&hpp, pos, x, dy) - loss(&hpm, pos, x, dy)) /
                               ((double)wp[e] - (double)wm[e]);
            /* linear in w: the difference quotient is exact up to rounding */
            if (fabs(fdw - dw[e]) > 1e-9 * (1.0 + fabs(fdw))) {
                print_error("case %zu dw[%d]: %.12g, finite differences %.12g\n", c, e, dw[e],
                            fdw);
                fail();
            }
        }
    }
}

static void angle_and_pairs(void **state)
{
    (void)state;
    const vkattn_rope_params p = {.max_wavelength = 10000.0f, .scaling_factor = 2.0f,
                                  .rotary_dim = 8, .layout = VKATTN_ROPE_HALF};
    assert_true(fabs(vka_ref_rope_angle(&p, 6.0, 0) - 3.0) < 1e-15);
    assert_true(fabs(vka_ref_rope_angle(&p, 6.0, 2) - 3.0 / 100.0) < 1e-15);
    uint32_t a, b;
    vka_ref_rope_pair(&p, 3, &a, &b);
    assert_int_equal(a, 3), assert_int_equal(b, 7);
    const vkattn_rope_params q = {.rotary_dim = 8, .layout = VKATTN_ROPE_INTERLEAVED};
    vka_ref_rope_pair(&q, 3, &a, &b);
    assert_int_equal(a, 6), assert_int_equal(b, 7);
}

TU_MAIN(NULL, NULL,
    forward_matches_second_formulation, backward_matches_finite_differences, angle_and_pairs)
