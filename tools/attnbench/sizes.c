/* Size products of bench's flags (sizes.h). */
#include "sizes.h"

#include "common.h"

#include <stdio.h>

/* f[0] x ... x f[n-1], saturating at UINT64_MAX (any count past a limit
 * fails alike). */
static uint64_t product(size_t n, const ab_factor *f)
{
    uint64_t p = 1;
    for (size_t i = 0; i < n; i++) {
        if (f[i].value != 0 && p > UINT64_MAX / f[i].value)
            return UINT64_MAX;
        p *= f[i].value;
    }
    return p;
}

/* "--a x --b = 3 x 4" */
static void print_factors(size_t n, const ab_factor *f)
{
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i ? " x " : "", f[i].flag);
    fputs(" = ", stderr);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%llu", i ? " x " : "", (unsigned long long)f[i].value);
}

bool ab_elements_fit(const char *op, const char *what, size_t n, const ab_factor *f)
{
    if (product(n, f) <= AB_MAX_ELEMENTS)
        return true;
    fprintf(stderr, "attnbench: %s: %s: ", op, what);
    print_factors(n, f);
    fprintf(stderr, " elements, more than an array holds (at most %llu; its bytes would "
                    "overflow); give smaller sizes\n",
            (unsigned long long)AB_MAX_ELEMENTS);
    return false;
}

bool ab_width_fits(const char *op, const char *what, size_t n, const ab_factor *f)
{
    const uint64_t p = product(n, f);
    if (p <= UINT32_MAX)
        return true;
    fprintf(stderr, "attnbench: %s: %s: ", op, what);
    print_factors(n, f);
    if (p < UINT64_MAX)
        fprintf(stderr, " = %llu", (unsigned long long)p);
    fprintf(stderr, ", more than a 32-bit width holds (at most %lu); give smaller sizes\n",
            (unsigned long)UINT32_MAX);
    return false;
}

int ab_setup_refused(vkattn_context *ctx, vkattn_result r, const char *op, const ab_args *a,
                     const char *what)
{
    if (r != VKATTN_ERROR_DEVICE_LIMIT && r != VKATTN_ERROR_SIZE_OVERFLOW)
        return ab_report(ctx, r, what);
    static const uint32_t sizes[] = {AB_F_BATCH, AB_F_HEADS, AB_F_KV_HEADS, AB_F_TQ,
                                     AB_F_TV,    AB_F_DK,    AB_F_DV,       AB_F_M,
                                     AB_F_N,     AB_F_K,     AB_F_UNITS,    AB_F_DMODEL};
    const uint32_t values[] = {a->batch, a->heads, a->kv_heads, a->tq, a->tv,    a->dk,
                               a->dv,    a->m,     a->n,        a->k,  a->units, a->dmodel};
    fprintf(stderr, "attnbench: %s: this device cannot take the sizes given (", op);
    bool any = false;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (a->given & sizes[i]) {
            fprintf(stderr, "%s%s %u", any ? " " : "", ab_flag_name(sizes[i]), values[i]);
            any = true;
        }
    const char *msg = vkattn_context_last_error(ctx);
    fprintf(stderr, "%s): %s: %s\n", any ? "" : "the defaults", vkattn_result_name(r),
            msg && *msg ? msg : vkattn_result_message(r));
    return ATTNBENCH_EXIT_USAGE;
}
