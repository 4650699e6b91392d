/* bf16 <-> f32 and double -> bf16 host conversion (src/core/bf16.c, compiled
 * in: internal symbols are hidden in the library): every bf16 pattern
 * round-trips; f32 -> bf16 and double -> bf16 agree with an independent
 * formulation (the two bf16 neighbours of the value, the nearer one, ties to
 * the even pattern) on ties, their neighbours, overflow, -0, subnormals, NaN
 * payloads, random patterns, and doubles that a detour through f32 would round
 * twice. */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/bf16.h"

/* The value of a bf16 pattern from the definition (binary32's top half). */
static double decode(uint16_t h)
{
    const int e = (h >> 7) & 0xff, m = h & 0x7f;
    const double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0xff)
        return m ? NAN : s * INFINITY;
    return e == 0 ? s * ldexp(m, -133) : s * ldexp(128 + m, e - 134);
}

/* A finite double -> bf16 the long way: the largest pattern lo whose value is
 * at most |v| (binary search: positive patterns are ordered as their values),
 * its successor hi (0x7f80 = inf stands for 2^128), the nearer of the two,
 * ties to the even pattern. Differences are exact (Sterbenz) or far from a
 * tie. */
static uint16_t encode(double v)
{
    const double a = fabs(v);
    unsigned lo = 0, top = 0x7f80;
    while (lo + 1 < top) {
        const unsigned mid = (lo + top) / 2;
        if (decode((uint16_t)mid) <= a)
            lo = mid;
        else
            top = mid;
    }
    const unsigned hi = lo + 1;
    const double vlo = decode((uint16_t)lo);
    const double vhi = hi == 0x7f80 ? ldexp(1, 128) : decode((uint16_t)hi);
    const double dlo = a - vlo, dhi = vhi - a;
    const unsigned p = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1 ? hi : lo);
    return (uint16_t)((signbit(v) ? 0x8000u : 0) | p);
}

static void expect_f32(float x)
{
    const uint16_t got = vka_f32_to_bf16(x);
    if (isnan(x)) {
        assert_int_equal(got, (tu_bits_of(x) >> 16) | 0x40u); /* quiet, sign and payload top */
        return;
    }
    assert_int_equal(got, encode(x));
}

static void every_bf16_round_trips(void **state)
{
    (void)state;
    for (uint32_t p = 0; p < 0x10000; p++) {
        const float f = vka_bf16_to_f32((uint16_t)p);
        assert_int_equal(tu_bits_of(f), p << 16); /* exact: the top half */
        const uint16_t back = vka_f32_to_bf16(f);
        if (isnan(f)) { /* NaN stays NaN, made quiet, sign and payload kept */
            assert_int_equal(back, p | 0x40u);
            assert_true(isnan(vka_bf16_to_f32(back)));
        } else {
            assert_int_equal(back, p);
            assert_true(f == decode((uint16_t)p));
        }
        assert_int_equal(vka_bf16_from_double(f), isnan(f) ? p | 0x40u : p);
    }
}

static void ties_and_neighbours(void **state)
{
    (void)state;
    assert_int_equal(vka_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);     /* tie down to even */
    assert_int_equal(vka_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* tie up to even */
    assert_int_equal(vka_f32_to_bf16(-(1.0f + 0x1p-8f)), 0xbf80);
    assert_int_equal(vka_f32_to_bf16(nextafterf(1.0f + 0x1p-8f, 2)), 0x3f81); /* just over */
    assert_int_equal(vka_f32_to_bf16(nextafterf(1.0f + 3 * 0x1p-8f, 0)), 0x3f81); /* just under */
    assert_int_equal(vka_f32_to_bf16(-0.0f), 0x8000);
    assert_int_equal(vka_f32_to_bf16(0.0f), 0x0000);
    /* overflow: the largest finite 0x7f7f, the tie past it rounds to inf */
    const float max = tu_float_of(0x7f7f0000u), tie = tu_float_of(0x7f7f8000u);
    assert_int_equal(vka_f32_to_bf16(max), 0x7f7f);
    assert_int_equal(vka_f32_to_bf16(nextafterf(tie, 0)), 0x7f7f);
    assert_int_equal(vka_f32_to_bf16(tie), 0x7f80);
    assert_int_equal(vka_f32_to_bf16(-tie), 0xff80);
    assert_int_equal(vka_f32_to_bf16(FLT_MAX), 0x7f80);
    assert_int_equal(vka_f32_to_bf16(-INFINITY), 0xff80);
    /* subnormals kept: the smallest, a tie between subnormals, into the normals */
    assert_int_equal(vka_f32_to_bf16(0x1p-133f), 0x0001);
    assert_int_equal(vka_f32_to_bf16(0x1p-134f), 0x0000); /* tie to 0 */
    assert_int_equal(vka_f32_to_bf16(3 * 0x1p-134f), 0x0002);
    assert_int_equal(vka_f32_to_bf16(0x1p-126f - 0x1p-134f), 0x0080);
    assert_int_equal(vka_f32_to_bf16(-0x1p-149f), 0x8000);
    /* NaN payloads: a signalling NaN whose payload is all below bf16 must not
     * become inf */
    assert_int_equal(vka_f32_to_bf16(tu_float_of(0x7f800001u)), 0x7fc0);
    assert_int_equal(vka_f32_to_bf16(tu_float_of(0xff800001u)), 0xffc0);
    assert_int_equal(vka_f32_to_bf16(tu_float_of(0x7fa12345u)), 0x7fe1);
    assert_int_equal(vka_f32_to_bf16(tu_float_of(0xffc00000u)), 0xffc0);
    const float cases[] = {1.0f + 0x1p-8f, max, tie, 0x1p-133f, 3 * 0x1p-134f, 0.1f, -3.3e38f};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_f32(cases[i]);
}

static void random_patterns(void **state)
{
    (void)state;
    uint32_t s = 12345;
    for (int i = 0; i < 200000; i++) {
        s = s * 1664525u + 1013904223u;
        expect_f32(tu_float_of(s));
    }
}

/* Once from double: values a detour through f32 would round twice. */
static void double_rounds_once(void **state)
{
    (void)state;
    /* f32 rounds 1 + 2^-8 + 2^-30 to the tie 1 + 2^-8, which goes to even 1.0;
     * the value is above the tie: 1 + 2^-7 */
    assert_int_equal(vka_bf16_from_double(1.0 + 0x1p-8 + 0x1p-30), 0x3f81);
    assert_int_equal(vka_f32_to_bf16((float)(1.0 + 0x1p-8 + 0x1p-30)), 0x3f80);
    /* and the other way: f32 rounds up onto the tie, which goes up to even */
    assert_int_equal(vka_bf16_from_double(1.0 + 3 * 0x1p-8 - 0x1p-30), 0x3f81);
    assert_int_equal(vka_f32_to_bf16((float)(1.0 + 3 * 0x1p-8 - 0x1p-30)), 0x3f82);
    /* the overflow tie, just under it, past f32's range, -0, subnormals */
    const double tie = ldexp(2.0 - 0x1p-8, 127);
    assert_int_equal(vka_bf16_from_double(tie), 0x7f80);
    assert_int_equal(vka_bf16_from_double(-tie), 0xff80);
    assert_int_equal(vka_bf16_from_double(nextafter(tie, 0)), 0x7f7f);
    assert_int_equal(vka_bf16_from_double(1e300), 0x7f80);
    assert_int_equal(vka_bf16_from_double(-0.0), 0x8000);
    assert_int_equal(vka_bf16_from_double(0x1p-134), 0x0000);
    assert_int_equal(vka_bf16_from_double(0x1p-134 + 0x1p-160), 0x0001); /* f32 would tie */
    assert_int_equal(vka_bf16_from_double(-1e-300), 0x8000);
    assert_int_equal(vka_bf16_from_double(0x1p-126 - 0x1p-134), 0x0080);
    /* NaN: quiet, sign kept */
    assert_int_equal(vka_bf16_from_double(NAN) & 0x7fc0, 0x7fc0);
    assert_int_equal(vka_bf16_from_double(-NAN) & 0x8000, 0x8000);
    uint64_t s = 99;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        /* exponents around bf16's range, full 52-bit significands */
        double v;
        uint64_t x = (s >> 12) | ((uint64_t)(1023 - 140 + (s >> 56) % 275) << 52);
        memcpy(&v, &x, sizeof v);
        if (s & 1)
            v = -v;
        if (fabs(v) >= tie)
            continue;
        assert_int_equal(vka_bf16_from_double(v), encode(v));
    }
}

static void arrays(void **state)
{
    (void)state;
    const float src[4] = {1.0f, -2.5f, 0.1f, 3.0e38f};
    uint16_t h[4];
    float back[4];
    vka_f32_to_bf16_array(h, src, 4);
    vka_bf16_to_f32_array(back, h, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(h[i], vka_f32_to_bf16(src[i]));
    assert_true(back[0] == 1.0f && back[1] == -2.5f && fabsf(back[2] - 0.1f) <= 0x1p-10f);
    vka_f32_to_bf16_array(NULL, NULL, 0);
    vka_bf16_to_f32_array(NULL, NULL, 0);
}

TU_MAIN(NULL, NULL, every_bf16_round_trips, ties_and_neighbours, random_patterns,
        double_rounds_once, arrays)
