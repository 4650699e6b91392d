/* Philox4x32-10 and the dropout decision built on it. Must stay bit-identical to
 * shaders/common/philox.glsl: both are checked against Random123's known answers. */
#include "vkattn/philox.h"

#include "core/dropout_host.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10


void vkattn_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < PHILOX_ROUNDS; r++) {
        if (r > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

uint32_t vkattn_dropout_threshold(float rate) { return vka_dropout_threshold(rate); }

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
