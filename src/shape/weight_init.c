/* See weight_init.h. The numbers are Keras 3.15's VarianceScaling
 * (keras/src/initializers/random_initializers.py); the stream is vkattn's. */
#include "shape/weight_init.h"

#include <math.h>

#include "core/dropout_host.h"
#include "core/error.h"

vkattn_result vka_check_initializer(struct vkattn_context *ctx, const char *caller,
                                    const char *name, vkattn_initializer v)
{
    if ((unsigned)v > VKATTN_INIT_ONES)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is %d; must be a vkattn_initializer: VKATTN_INIT_DEFAULT (0), "
                        "GLOROT_UNIFORM, GLOROT_NORMAL, HE_UNIFORM, HE_NORMAL, LECUN_UNIFORM, "
                        "LECUN_NORMAL, ZEROS or ONES",
                        caller, name, (int)v);
    return VKATTN_SUCCESS;
}

/* Word `word` of Philox block `attempt` of element e: counter (e lo, e hi,
 * stream, attempt), key the seed with its low word xor "init", so a layer
 * given the same seed for its dropout (Python does) draws another stream. */
static void block(uint64_t seed, uint32_t stream, uint64_t e, uint32_t attempt, uint32_t out[4])
{
    const uint32_t counter[4] = {(uint32_t)e, (uint32_t)(e >> 32), stream, attempt};
    const uint32_t key[2] = {(uint32_t)seed ^ 0x74696E69u, (uint32_t)(seed >> 32)};
    vka_philox4x32_10(counter, key, out);
}

/* A uniform in the open (0, 1): 24 bits, centred in their interval. */
static double unit(uint32_t x)
{
    return ((double)(x >> 8) + 0.5) * 0x1p-24;
}

void vka_weight_init_values(vkattn_initializer kind, uint64_t fan_in, uint64_t fan_out,
                            uint64_t seed, uint32_t stream, uint64_t first, uint64_t n,
                            float *out)
{
    if (kind == VKATTN_INIT_ZEROS || kind == VKATTN_INIT_ONES) {
        for (uint64_t i = 0; i < n; i++)
            out[i] = kind == VKATTN_INIT_ONES ? 1.0f : 0.0f;
        return;
    }
    const double fi = fan_in < 1 ? 1.0 : (double)fan_in, fo = fan_out < 1 ? 1.0 : (double)fan_out;
    const bool glorot = kind == VKATTN_INIT_GLOROT_UNIFORM || kind == VKATTN_INIT_GLOROT_NORMAL;
    const bool he = kind == VKATTN_INIT_HE_UNIFORM || kind == VKATTN_INIT_HE_NORMAL;
    const double scale = (he ? 2.0 : 1.0) / (glorot ? (fi + fo) / 2.0 : fi);
    const bool uniform = kind == VKATTN_INIT_GLOROT_UNIFORM || kind == VKATTN_INIT_HE_UNIFORM ||
                         kind == VKATTN_INIT_LECUN_UNIFORM;
    uint32_t x[4];
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t e = first + i;
        if (uniform) {
            block(seed, stream, e, 0, x);
            out[i] = (float)(sqrt(3.0 * scale) * (2.0 * unit(x[0]) - 1.0));
            continue;
        }
        /* Keras's truncated normal: stddev corrected for the cut at 2 sigma,
         * redrawn (Box-Muller on a fresh block) until inside; P(redraw) =
         * 0.0455, so 64 attempts all failing has probability < 1e-85 */
        const double stddev = sqrt(scale) / 0.87962566103423978;
        double z = 0.0;
        for (uint32_t attempt = 0; attempt < 64; attempt++) {
            block(seed, stream, e, attempt, x);
            const double r = sqrt(-2.0 * log(unit(x[0])));
            const double t = r * cos(6.283185307179586 * unit(x[1]));
            if (fabs(t) <= 2.0) {
                z = t;
                break;
            }
        }
        out[i] = (float)(stddev * z);
    }
}
