/* Live-value counts of the GPU-tuning kernels (see register_budget.h). */
#include "ops/register_budget.h"

#include <string.h>

uint32_t vka_register_budget(const vkattn_context_info *info)
{
    if (info && (strcmp(info->profile, "mali") == 0 || strcmp(info->profile, "adreno") == 0))
        return VKA_REGISTER_BUDGET_MOBILE;
    return VKA_REGISTER_BUDGET;
}

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

uint32_t vka_matmul_gpu_live_values(uint32_t bm, uint32_t bn, uint32_t bk, uint32_t tm,
                                    uint32_t tn)
{
    const uint32_t threads = (bm / tm) * (bn / tn);
    const uint32_t prefetch = div_up(bm * bk / 4, threads) + div_up(bn * bk / 4, threads);
    return tm * tn + tm + tn + 4 * prefetch + VKA_REGISTER_SCALARS;
}

uint32_t vka_flash_tiled_live_values(uint32_t lanes, uint32_t bc, uint32_t dk, uint32_t dv)
{
    const uint32_t nq = div_up(div_up(dk, 4), lanes), no = div_up(div_up(dv, 4), lanes);
    return 4 * nq + 4 * no + bc + 8 + 2 + VKA_REGISTER_SCALARS;
}

uint32_t vka_decode_live_values(uint32_t rows, uint32_t wg, uint32_t dv)
{
    return 3 * rows + rows + 4 * div_up(rows * div_up(dv, 4), wg) + 8 + 2 + VKA_REGISTER_SCALARS;
}
uint32_t vka_flash_backward_kv_live_values(uint32_t lanes, uint32_t dk, uint32_t dv)
{
    const uint32_t nk = div_up(div_up(dk, 4), lanes), nv = div_up(div_up(dv, 4), lanes);
    return 8 * (nk + nv) + 8 + 8 + 8 + 4 + VKA_REGISTER_SCALARS;
}

uint32_t vka_flash_backward_q_live_values(uint32_t lanes, uint32_t dk, uint32_t dv)
{
    const uint32_t nk = div_up(div_up(dk, 4), lanes), nv = div_up(div_up(dv, 4), lanes);
    return 8 * nk + 4 * nv + 8 + 4 + 4 + 2 + 4 + VKA_REGISTER_SCALARS;
}

uint32_t vka_flash_backward_stats_live_values(void) { return 1 + 8 + 2 + VKA_REGISTER_SCALARS; }

uint32_t vka_matmul_coopmat_live_values(uint32_t sg, uint32_t fm, uint32_t fn, uint32_t groups)
{
    return fm * fn * (256 / sg) + (fm + fn) * (128 / sg) + 4 * groups + VKA_REGISTER_SCALARS;
}

uint32_t vka_flash_coopmat_live_values(uint32_t bc, uint32_t dv)
{
    return 8 * div_up(dv, 16) + bc / 2 + 8 + 4 + 4 + 2 + VKA_REGISTER_SCALARS;
}

uint32_t vka_flash_backward_coopmat_live_values(void)
{
    return 8 + 4 + 4 + 8 + 2 + 8 + VKA_REGISTER_SCALARS;
}
