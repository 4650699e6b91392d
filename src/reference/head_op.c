/* The CPU reference of the public head ops (vkattn/reference.h,
 * vkattn_reference_head_op): the plan of shape/head_op_plan.h, then the row
 * arithmetic of reference/rope.c in double, each output rounded once. */
#include <stdlib.h>

#include "core/error.h"
#include "reference/rope.h"
#include "shape/head_op_plan.h"
#include "vkattn/reference.h"

/* Which io fields the op reads and writes; the others must be NULL. */
static vkattn_result check_io(const char *fn, const vka_head_op_plan *s,
                              const vkattn_head_op_host_io *io)
{
    if (!io)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", fn);
    const struct {
        const char *name;
        const void *ptr;
        bool used;
    } f[] = {{"io->x", io->x, true},
             {"io->out", io->out, !s->backward},
             {"io->weight", io->weight, s->norm},
             {"io->positions", io->positions, s->rope},
             {"io->grad_out", io->grad_out, s->backward},
             {"io->grad_x", io->grad_x, s->backward},
             {"io->grad_weight", io->grad_weight, s->backward}};
    for (int i = 0; i < 7; i++) {
        if (f[i].used && !f[i].ptr && i != 3)
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                            f[i].name);
        if (!f[i].used && f[i].ptr)
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: %s is given but params->op %d does not use it", fn, f[i].name,
                            (int)s->op);
    }
    /* The written arrays may share only with their own input (in place). */
    const struct {
        const char *name;
        const void *ptr, *may;
    } w[] = {{"io->out", io->out, io->x},
             {"io->grad_x", io->grad_x, io->grad_out},
             {"io->grad_weight", io->grad_weight, NULL}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; w[i].ptr && j < 7; j++)
            if (f[j].ptr == w[i].ptr && f[j].ptr != w[i].may && f[j].name != w[i].name)
                return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s is also %s; only in place on its own input", fn,
                                w[i].name, f[j].name);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_head_op(const vkattn_head_op_params *p,
                                       const vkattn_head_op_host_io *io)
{
    static const char *fn = "vkattn_reference_head_op";
    vka_head_op_plan s;
    vkattn_result r;
    if ((r = vka_head_op_plan_make(NULL, fn, p, &s)) || (r = check_io(fn, &s, io)))
        return r;
    const vka_ref_head_prep hp = {.dim = s.dim, .norm = s.norm, .w = io->weight, .eps = s.eps,
                                  .rope = s.rope, .params = s.rope_params};
    double *buf = malloc(3 * (size_t)s.dim * sizeof *buf);
    if (!buf)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    double *x = buf, *dy = buf + s.dim, *dw = buf + 2 * (size_t)s.dim;
    for (uint32_t e = 0; e < s.dim; e++)
        dw[e] = 0.0;
    for (uint64_t row = 0; row < s.n / s.dim; row++) {
        const uint64_t o = row * s.dim;
        const uint32_t t = (uint32_t)(row % s.seq), b = (uint32_t)(row / s.seq / s.heads);
        const double pos = io->positions ? (double)io->positions[(uint64_t)b * s.seq + t] : t;
        for (uint32_t e = 0; e < s.dim; e++)
            x[e] = io->x[o + e];
        if (s.backward) {
            for (uint32_t e = 0; e < s.dim; e++)
                dy[e] = io->grad_out[o + e];
            vka_ref_head_prep_row_backward(&hp, pos, x, dy, dy, dw);
            for (uint32_t e = 0; e < s.dim; e++)
                io->grad_x[o + e] = (float)dy[e];
            continue;
        }
        if (s.inverse) /* the rotation's backward is its inverse */
            vka_ref_head_prep_row_backward(&hp, pos, x, x, x, NULL);
        else
            vka_ref_head_prep_row(&hp, pos, x, x);
        for (uint32_t e = 0; e < s.dim; e++)
            io->out[o + e] = (float)x[e];
    }
    if (s.backward)
        for (uint32_t e = 0; e < s.dim; e++)
            io->grad_weight[e] = (float)dw[e];
    free(buf);
    return VKATTN_SUCCESS;
}
