/* QK-norm and the rotary embedding of one head row, in double (rope.h). */
#include "reference/rope.h"

#include <math.h>
#include <string.h>

double vka_ref_rope_angle(const vkattn_rope_params *params, double p, uint32_t i)
{
    const double exponent = -2.0 * (double)i / (double)params->rotary_dim;
    return p / (double)params->scaling_factor * pow((double)params->max_wavelength, exponent);
}

void vka_ref_rope_pair(const vkattn_rope_params *params, uint32_t i, uint32_t *a, uint32_t *b)
{
    if (params->layout == VKATTN_ROPE_INTERLEAVED) {
        *a = 2 * i;
        *b = 2 * i + 1;
    } else {
        *a = i;
        *b = i + params->rotary_dim / 2;
    }
}

/* 1 / sqrt(mean(x^2) + eps) */
static double rms_factor(const vka_ref_head_prep *hp, const double *x)
{
    double ss = 0.0;
    for (uint32_t e = 0; e < hp->dim; e++)
        ss += x[e] * x[e];
    return 1.0 / sqrt(ss / hp->dim + hp->eps);
}

/* y = x turned by +angle (sign 1) or back by it (sign -1), pair by pair */
static void rotate(const vka_ref_head_prep *hp, double p, double sign, double *y)
{
    for (uint32_t i = 0; i < hp->params.rotary_dim / 2; i++) {
        uint32_t a, b;
        vka_ref_rope_pair(&hp->params, i, &a, &b);
        const double t = vka_ref_rope_angle(&hp->params, p, i);
        const double c = cos(t), s = sign * sin(t), x1 = y[a], x2 = y[b];
        y[a] = x1 * c - x2 * s; /* Hugging Face's x * cos + rotate_half(x) * sin */
        y[b] = x2 * c + x1 * s;
    }
}

void vka_ref_head_prep_row(const vka_ref_head_prep *hp, double p, const double *x, double *y)
{
    if (hp->norm) {
        const double s = rms_factor(hp, x);
        for (uint32_t e = 0; e < hp->dim; e++)
            y[e] = x[e] * s * hp->w[e];
    } else if (y != x) {
        memcpy(y, x, hp->dim * sizeof *y);
    }
    if (hp->rope)
        rotate(hp, p, 1.0, y);
}

void vka_ref_head_prep_row_backward(const vka_ref_head_prep *hp, double p, const double *x,
                                    const double *dy, double *dx, double *dw)
{
    if (dx != dy)
        memcpy(dx, dy, hp->dim * sizeof *dx);
    if (hp->rope) /* a rotation's transpose is its inverse */
        rotate(hp, p, -1.0, dx);
    if (!hp->norm)
        return;
    const double s = rms_factor(hp, x);
    double dot = 0.0; /* sum du * x */
    for (uint32_t e = 0; e < hp->dim; e++) {
        dw[e] += dx[e] * x[e] * s;
        dx[e] *= hp->w[e]; /* du */
        dot += dx[e] * x[e];
    }
    const double k = s * s * s * dot / hp->dim;
    for (uint32_t e = 0; e < hp->dim; e++)
        dx[e] = s * dx[e] - k * x[e];
}
