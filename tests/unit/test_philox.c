/* Philox4x32-10 against Random123's known answers, and the dropout stream built
 * on it: thresholds, keep rate, and independence from offset and seed. */
#include "test_util.h"

#include <math.h>
#include <stdbool.h>

#include "vkattn/philox.h"

static void expect_block(const uint32_t c[4], const uint32_t k[2], const uint32_t want[4])
{
    uint32_t got[4];
    vkattn_philox4x32_10(c, k, got);
    for (int i = 0; i < 4; i++)
        if (got[i] != want[i])
            fail_msg("word %d: got %08x, want %08x", i, got[i], want[i]);
}

static void known_answers(void **state)
{
    (void)state;
    /* Random123 kat_vectors, philox4x32 with 10 rounds. */
    const uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0};
    const uint32_t w0[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    const uint32_t c1[4] = {~0u, ~0u, ~0u, ~0u}, k1[2] = {~0u, ~0u};
    const uint32_t w1[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
    const uint32_t c2[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
    const uint32_t k2[2] = {0xa4093822, 0x299f31d0};
    const uint32_t w2[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    expect_block(c0, k0, w0);
    expect_block(c1, k1, w1);
    expect_block(c2, k2, w2);
}

static void output_may_alias_counter(void **state)
{
    (void)state;
    uint32_t c[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
    const uint32_t k[2] = {0xa4093822, 0x299f31d0};
    vkattn_philox4x32_10(c, k, c);
    assert_int_equal(c[0], 0xd16cfe09);
    assert_int_equal(c[3], 0x24126ea1);
}

static void thresholds(void **state)
{
    (void)state;
    assert_int_equal(vkattn_dropout_threshold(0.0f), 0);
    assert_int_equal(vkattn_dropout_threshold(-0.5f), 0);
    assert_int_equal(vkattn_dropout_threshold(NAN), 0);
    assert_int_equal(vkattn_dropout_threshold(0.5f), 1u << 23);
    assert_int_equal(vkattn_dropout_threshold(0.25f), 1u << 22);
    assert_int_equal(vkattn_dropout_threshold(1.0f), 1u << 24);
    assert_int_equal(vkattn_dropout_threshold(2.0f), 1u << 24);
    assert_int_equal(vkattn_dropout_threshold(INFINITY), 1u << 24);
    /* 0.1f = 0.100000001490116...; times 2^24 = 1677721.625, ceil 1677722 */
    assert_int_equal(vkattn_dropout_threshold(0.1f), 1677722);
    /* the smallest positive rate still drops something (x >> 8 == 0) */
    assert_int_equal(vkattn_dropout_threshold(1e-30f), 1);
    /* the largest rate below 1 still keeps something */
    assert_int_equal(vkattn_dropout_threshold(nextafterf(1.0f, 0.0f)), (1u << 24) - 1);
}

/* The keep decision is exactly the formula of docs/SEMANTICS.md, lane by lane. */
static void keep_matches_formula(void **state)
{
    (void)state;
    const uint64_t seed = 0x0123456789abcdefull, offset = 0xfedcba9876543210ull;
    const uint32_t key[2] = {0x89abcdef, 0x01234567};
    const uint32_t mix = 0x76543210u ^ (0xfedcba98u * 0x9E3779B9u);
    const uint32_t threshold = vkattn_dropout_threshold(0.5f);
    for (uint32_t j = 0; j < 12; j++) {
        const uint32_t counter[4] = {j / 4, 7, 3, mix};
        uint32_t x[4];
        vkattn_philox4x32_10(counter, key, x);
        bool want = (x[j % 4] >> 8) >= threshold;
        assert_int_equal(vkattn_dropout_keep(seed, offset, threshold, 3, 7, j), want);
        /* threshold 0 keeps everything, 2^24 drops everything */
        assert_true(vkattn_dropout_keep(seed, offset, 0, 3, 7, j));
        assert_false(vkattn_dropout_keep(seed, offset, 1u << 24, 3, 7, j));
    }
}

/* Over 1M elements the kept fraction is within 4 sigma of 1 - rate. */
static void keep_rate(void **state)
{
    (void)state;
    const float rates[3] = {0.1f, 0.5f, 0.9f};
    const uint32_t rows = 1000, cols = 1000;
    for (int r = 0; r < 3; r++) {
        uint32_t t = vkattn_dropout_threshold(rates[r]);
        uint64_t kept = 0;
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t j = 0; j < cols; j++)
                kept += vkattn_dropout_keep(42, 7, t, i % 5, i, j);
        double n = (double)rows * cols, p = 1.0 - rates[r];
        double sigma = sqrt(n * p * (1.0 - p));
        if (fabs((double)kept - n * p) > 4.0 * sigma)
            fail_msg("rate %g: kept %llu of %.0f, expected %.0f +- %.0f", (double)rates[r],
                     (unsigned long long)kept, n, n * p, 4.0 * sigma);
    }
}

/* Fraction of 64K elements whose decision differs between two streams. */
static double differing(uint64_t seed_a, uint64_t off_a, uint64_t seed_b, uint64_t off_b)
{
    const uint32_t t = vkattn_dropout_threshold(0.5f);
    uint32_t diff = 0;
    for (uint32_t i = 0; i < 256; i++)
        for (uint32_t j = 0; j < 256; j++)
            diff += vkattn_dropout_keep(seed_a, off_a, t, 1, i, j) !=
                    vkattn_dropout_keep(seed_b, off_b, t, 1, i, j);
    return diff / 65536.0;
}

/* Independent masks at rate 0.5 differ in half the elements. */
static void streams_are_independent(void **state)
{
    (void)state;
    assert_true(differing(1, 5, 1, 5) == 0.0);
    const double lo = 0.49, hi = 0.51; /* 0.5 +- 5 sigma */
    double d = differing(1, 5, 1, 6); /* next training step */
    assert_true(d > lo && d < hi);
    d = differing(1, 5, 1, 5 + (1ull << 32)); /* offsets differing in the high word */
    assert_true(d > lo && d < hi);
    d = differing(1, 5, 2, 5); /* another seed */
    assert_true(d > lo && d < hi);
    d = differing(1, 5, 1 + (1ull << 32), 5); /* seeds differing in the high word */
    assert_true(d > lo && d < hi);
}

/* Neighbouring rows, heads and lanes are not copies of each other. */
static void indices_are_independent(void **state)
{
    (void)state;
    const uint32_t t = vkattn_dropout_threshold(0.5f);
    uint32_t same_row = 0, same_head = 0, same_lane = 0;
    for (uint32_t i = 0; i < 256; i++)
        for (uint32_t j = 0; j < 256; j++) {
            bool k = vkattn_dropout_keep(9, 0, t, 0, i, j);
            same_row += k == vkattn_dropout_keep(9, 0, t, 0, i + 1, j);
            same_head += k == vkattn_dropout_keep(9, 0, t, 1, i, j);
            same_lane += k == vkattn_dropout_keep(9, 0, t, 0, i, j ^ 1);
        }
    /* 32768 +- 4 sigma (sigma = 128) */
    assert_true(same_row > 32256 && same_row < 33280);
    assert_true(same_head > 32256 && same_head < 33280);
    assert_true(same_lane > 32256 && same_lane < 33280);
}

TU_MAIN(NULL, NULL,
    known_answers, output_may_alias_counter, thresholds, keep_matches_formula, keep_rate,
    streams_are_independent, indices_are_independent)
