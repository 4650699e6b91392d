/* See slice_plan.h. */
#include "vk/slice_plan.h"

uint32_t vka_plan_slice_end(const double *est, uint32_t n, uint32_t next, double budget_us,
                            bool probe)
{
    uint32_t end = next;
    double used = 0;
    do {
        used += est[end];
        end++;
    } while (!probe && end < n && used + est[end] <= budget_us);
    return end;
}

double vka_plan_overhead(uint32_t n0, double us0, uint32_t n1, double us1)
{
    /* us = n * fixed + work / rate, the work the same in both */
    if (!n0 || n1 <= n0 || !(us1 > us0))
        return 0;
    return (us1 - us0) / (double)(n1 - n0);
}

static bool cuttable(const vka_plan_piece *p, uint32_t n_splits)
{
    return p->dispatch && p->work > 1 && p->split >= 1 && p->split <= n_splits &&
           (!p->limit || p->work <= p->limit);
}

vka_resplit_plan vka_plan_resplit(const vka_plan_piece *p, uint32_t n, double budget_us,
                                  uint64_t *split_limits, uint32_t n_splits, bool *uncut)
{
    vka_resplit_plan plan = {0, 0};
    for (uint32_t i = 0; i < n; i++) {
        uncut[i] = false;
        if (!(p[i].measured_us > budget_us))
            continue;
        const double target = VKA_RESPLIT_SHARE * budget_us, fixed = p[i].overhead_us;
        if (!cuttable(&p[i], n_splits) || fixed >= target || p[i].measured_us <= fixed) {
            uncut[i] = true;
            plan.uncut++;
            continue;
        }
        /* its measured rate, work per us net of the fixed cost, times the
         * share of the budget left after it */
        double want = (double)p[i].work * (target - fixed) / (p[i].measured_us - fixed);
        const double least = (double)p[i].work / VKA_RESPLIT_MAX_CUT;
        if (want < least)
            want = least;
        uint64_t work = want < 1 ? 1 : (uint64_t)want;
        if (work >= p[i].work)
            work = p[i].work - 1;
        uint64_t *limit = &split_limits[p[i].split - 1];
        if (!*limit || work < *limit)
            *limit = work;
        plan.resplit++;
    }
    return plan;
}
