/* Philox4x32-10 and the dropout decision built on it. Must stay bit-identical to
 * shaders/common/philox.glsl: both are checked against Random123's known answers. */
#include "vkattn/philox.h"

#include "core/dropout_host.h"

void vkattn_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    vka_philox4x32_10(counter, key, out); /* the one copy, core/dropout_host.h */
}

bool vkattn_dropout_keep(uint64_t seed, uint64_t offset, uint32_t threshold, uint32_t bh,
                         uint32_t i, uint32_t j)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t counter[4] = {j / 4, i, bh,
                                 vka_philox_offset_mix(offset)};
    uint32_t x[4];
    vkattn_philox4x32_10(counter, key, x);
    return (x[j % 4] >> 8) >= threshold;
}
