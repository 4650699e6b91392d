/* f16 <-> f32 host conversion: every f16 pattern round-trips, and f32 -> f16
 * agrees with an independent formulation (scale by the f16 spacing in double,
 * round with nearbyint, ties to even) on ties, neighbours of ties, overflow,
 * subnormals and random bit patterns. */
#include "test_util.h"

#include <fenv.h>
#include <math.h>
#include <string.h>

#include "vkattn/half.h"

/* The value of an f16 pattern from the definition of binary16. */
static double decode(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0x1f)
        return m ? NAN : s * INFINITY;
    return e == 0 ? s * ldexp(m, -24) : s * ldexp(1024 + m, e - 25);
}

/* f32 -> f16 the long way: the f16 spacing at |x| in double, nearbyint (ties to
 * even in the default rounding mode), then the pattern of the rounded value. */
static uint16_t encode(float x)
{
    const uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (isnan(x))
        return 0; /* handled by the caller */
    double a = fabs((double)x);
    if (a >= 65520.0) /* 65504 + half its spacing, a tie that rounds to even 65536 */
        return sign | 0x7c00;
    int ex = a > 0 ? ilogb(a) : -14;
    if (ex < -14)
        ex = -14;
    const double q = nearbyint(a / ldexp(1.0, ex - 10)); /* in units of the spacing */
    if (ex == -14 && q < 1024)
        return sign | (uint16_t)q; /* subnormal (or zero) */
    const double v = q * ldexp(1.0, ex - 10);
    const int e = ilogb(v); /* rounding may have carried into the next binade */
    if (e > 15)
        return sign | 0x7c00;
    return sign | (uint16_t)(((e + 15) << 10) | ((uint32_t)ldexp(v, 10 - e) - 1024));
}

static void expect(float x)
{
    const uint16_t got = tu_f16_bits(x);
    if (isnan(x)) {
        const uint16_t want = (uint16_t)(((tu_bits_of(x) >> 16) & 0x8000) | 0x7e00 |
                                         ((tu_bits_of(x) >> 13) & 0x3ff));
        if (got != want)
            fail_msg("NaN %08x: got %04x, want %04x", tu_bits_of(x), got, want);
        return;
    }
    const uint16_t want = encode(x);
    if (got != want)
        fail_msg("%.9g (%08x): got %04x, want %04x", (double)x, tu_bits_of(x), got, want);
}

static void every_f16_round_trips(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 65536; i++) {
        const uint16_t h = (uint16_t)i;
        const float f = tu_f16_to_f32(h);
        const double v = decode(h);
        if (isnan(v)) {
            if (!isnan(f) || (tu_bits_of(f) >> 31) != (h >> 15u) || ((tu_bits_of(f) >> 13) & 0x3ff) != (h & 0x3ffu))
                fail_msg("NaN %04x decodes to %08x", h, tu_bits_of(f));
            if (tu_f16_bits(f) != (h | 0x200))
                fail_msg("NaN %04x comes back as %04x", h, tu_f16_bits(f));
            continue;
        }
        if ((double)f != v || !signbit(f) != !signbit(v))
            fail_msg("%04x decodes to %.9g, want %.9g", h, (double)f, v);
        if (tu_f16_bits(f) != h)
            fail_msg("%04x comes back as %04x", h, tu_f16_bits(f));
    }
}

/* Every tie between two adjacent finite f16 values, and the f32 values just
 * beside it: ties go to the even pattern, neighbours to the nearer one. */
static void ties_and_neighbours(void **state)
{
    (void)state;
    fesetround(FE_TONEAREST);
    for (uint32_t i = 0; i < 0x7c00; i++) {
        const double lo = decode((uint16_t)i), hi = i + 1 < 0x7c00 ? decode((uint16_t)(i + 1)) : 65536.0;
        const float tie = (float)((lo + hi) / 2); /* exact in f32 */
        for (int s = 0; s < 2; s++) {
            const float t = s ? -tie : tie;
            expect(t);
            expect(nextafterf(t, INFINITY));
            expect(nextafterf(t, -INFINITY));
            expect(s ? -(float)lo : (float)lo);
        }
    }
    /* spot checks of the formulation itself */
    assert_int_equal(tu_f16_bits(65504.0f), 0x7bff);
    assert_int_equal(tu_f16_bits(65519.99f), 0x7bff);
    assert_int_equal(tu_f16_bits(65520.0f), 0x7c00);
    assert_int_equal(tu_f16_bits(-1e30f), 0xfc00);
    assert_int_equal(tu_f16_bits(INFINITY), 0x7c00);
    assert_int_equal(tu_f16_bits(1.0f + 0x1p-11f), 0x3c00);          /* tie to even */
    assert_int_equal(tu_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);      /* tie to even */
    assert_int_equal(tu_f16_bits(0x1p-25f), 0x0000);                  /* tie to 0 */
    assert_int_equal(tu_f16_bits(nextafterf(0x1p-25f, 1)), 0x0001);
    assert_int_equal(tu_f16_bits(3 * 0x1p-25f), 0x0002);              /* tie to even */
    assert_int_equal(tu_f16_bits(0x1p-14f - 0x1p-25f), 0x0400);      /* into normal */
    assert_int_equal(tu_f16_bits(-0.0f), 0x8000);
}

static void random_patterns(void **state)
{
    (void)state;
    for (int i = 0; i < 2000000; i++) {
        /* half the draws near the f16 range, where the interesting cases are */
        uint32_t x = tu_rand_u32();
        if (i & 1)
            x = (x & 0x807fffffu) | ((100u + (x >> 23) % 60u) << 23);
        expect(tu_float_of(x));
    }
    expect(tu_float_of(0x7f800001u));
    expect(tu_float_of(0xffc12345u));
}

static void arrays(void **state)
{
    (void)state;
    const float src[5] = {1.0f, -2.5f, 65536.0f, 0x1p-24f, 0.1f};
    uint16_t h[5];
    float back[5];
    vkattn_f32_to_f16_array(h, src, 5);
    vkattn_f16_to_f32_array(back, h, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(h[i], tu_f16_bits(src[i]));
    assert_true(back[0] == 1.0f && back[1] == -2.5f && isinf(back[2]) && back[3] == 0x1p-24f);
    assert_true(fabsf(back[4] - 0.1f) <= 0x1p-14f);
    vkattn_f32_to_f16_array(NULL, NULL, 0);
    vkattn_f16_to_f32_array(NULL, NULL, 0);
}

TU_MAIN(NULL, NULL, every_f16_round_trips, ties_and_neighbours, random_patterns, arrays)
