/* The slicer's re-split (src/vk/slice_plan.c, compiled into this test: the
 * library hides its internal symbols), fed by a fake timing source instead
 * of GPU timestamps, so nothing here depends on a device's speed: a split
 * whose pieces take 5x the budget is asked for pieces that fit, and the next
 * frame's slices, planned from the re-split pieces' times, keep to the
 * budget; a dispatch its op cannot cut (one row) and a copy are reported as
 * uncut, and planning again changes nothing (no loop). */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "vk/slice_plan.h"

#define BUDGET_US 100.0
#define MAX_PIECES 64

/* The fake device: a piece takes 10 us plus 1 us per 1000 multiply-adds. */
static double fake_us(uint64_t work) { return 10.0 + (double)work / 1000.0; }

/* The call as the ops would capture it under split_limits (0 = the
 * capture's own limit, 500000): a 150 us copy; split 1 cuts 1e6
 * multiply-adds into dispatches within its limit (5.1x the budget each at
 * 500000); split 2 is one row of 400000 that its op cannot cut further. */
static uint32_t capture(const uint64_t limits[2], vka_plan_piece *p)
{
    uint32_t n = 0;
    p[n++] = (vka_plan_piece){.measured_us = 150, .dispatch = false};
    const uint64_t l1 = limits[0] ? limits[0] : 500000, total = 1000000;
    for (uint64_t done = 0; done < total; done += l1) {
        const uint64_t w = total - done < l1 ? total - done : l1;
        assert_true(n < MAX_PIECES);
        p[n++] = (vka_plan_piece){.measured_us = fake_us(w), .work = w, .limit = l1, .split = 1,
                                  .dispatch = true};
    }
    const uint64_t l2 = limits[1] ? limits[1] : 500000;
    p[n++] = (vka_plan_piece){.measured_us = fake_us(400000), .work = 400000, .limit = l2,
                              .split = 2, .dispatch = true};
    return n;
}

static void over_budget_split_is_cut_and_next_frame_fits(void **state)
{
    (void)state;
    vka_plan_piece p[MAX_PIECES];
    bool uncut[MAX_PIECES];
    uint64_t limits[2] = {0, 0};
    /* the learning pass: split 1's two pieces 5.1x over, split 2's one row
     * 4.1x over (within its limit, so its op is asked), the copy uncut */
    uint32_t n = capture(limits, p);
    assert_int_equal(n, 4);
    vka_resplit_plan plan = vka_plan_resplit(p, n, BUDGET_US, limits, 2, uncut);
    assert_int_equal(plan.resplit, 3);
    assert_int_equal(plan.uncut, 1);
    assert_true(uncut[0] && !uncut[1] && !uncut[2] && !uncut[3]);
    /* half the budget at the measured rate, 500000 * 50 / 510 = 49019, but
     * no more than 8 pieces from one in a round: 62500 */
    assert_int_equal(limits[0], 62500);
    assert_int_equal(limits[1], 50000); /* 48780 by the rate, 400000 / 8 */

    /* the next capture: split 1 in 16 pieces of 72.5 us, each within the
     * budget; the row still one dispatch, now over the limit it was asked
     * for; the two captures of split 1 show its fixed cost, 10 us a piece */
    n = capture(limits, p);
    assert_int_equal(n, 1 + 16 + 1);
    assert_true(fabs(vka_plan_overhead(2, 2 * fake_us(500000), 16, 16 * fake_us(62500)) - 10) <
                1e-9);
    const uint64_t before[2] = {limits[0], limits[1]};
    plan = vka_plan_resplit(p, n, BUDGET_US, limits, 2, uncut);
    assert_int_equal(plan.resplit, 0);
    assert_int_equal(plan.uncut, 2); /* the copy and the row: reported */
    assert_true(uncut[0] && uncut[n - 1]);
    for (uint32_t i = 1; i + 1 < n; i++)
        assert_false(uncut[i]);
    assert_memory_equal(limits, before, sizeof before);

    /* the next frame's slices from those times: each fits, except a slice
     * of one uncut piece */
    double est[MAX_PIECES];
    for (uint32_t i = 0; i < n; i++)
        est[i] = p[i].measured_us;
    uint32_t slices = 0;
    for (uint32_t next = 0; next < n; slices++) {
        const uint32_t end = vka_plan_slice_end(est, n, next, BUDGET_US, false);
        assert_true(end > next && end <= n);
        double sum = 0;
        for (uint32_t i = next; i < end; i++)
            sum += est[i];
        if (sum > BUDGET_US) {
            assert_int_equal(end - next, 1);
            assert_true(uncut[next]);
        }
        next = end;
    }
    /* the copy, the 16 pieces one a slice, the row */
    assert_int_equal(slices, 18);

    /* planning again on the same times changes nothing: no loop */
    plan = vka_plan_resplit(p, n, BUDGET_US, limits, 2, uncut);
    assert_int_equal(plan.resplit, 0);
    assert_int_equal(plan.uncut, 2);
    assert_memory_equal(limits, before, sizeof before);
}

static void uncuttable_pieces(void **state)
{
    (void)state;
    const vka_plan_piece p[] = {
        {.measured_us = 500, .work = 0, .split = 1, .dispatch = true},         /* work unknown */
        {.measured_us = 500, .work = 1000, .split = 0, .dispatch = true},      /* no split */
        {.measured_us = 500, .work = 1000, .limit = 10, .split = 1, .dispatch = true}, /* one row */
        {.measured_us = 500, .work = 1000, .split = 3, .dispatch = true},      /* split unknown */
        {.measured_us = 50, .work = 1000, .split = 1, .dispatch = true},       /* fits */
        {.measured_us = -1, .work = 1000, .split = 1, .dispatch = true},       /* not measured */
        /* a fixed cost of 60 us a piece: no cut fits half of 100 us */
        {.measured_us = 500, .work = 1000, .split = 2, .dispatch = true, .overhead_us = 60},
    };
    const uint32_t n = sizeof p / sizeof p[0];
    bool uncut[sizeof p / sizeof p[0]];
    uint64_t limits[2] = {0, 0};
    vka_resplit_plan plan = vka_plan_resplit(p, n, BUDGET_US, limits, 2, uncut);
    assert_int_equal(plan.resplit, 0);
    assert_int_equal(plan.uncut, 5);
    assert_true(uncut[0] && uncut[1] && uncut[2] && uncut[3] && !uncut[4] && !uncut[5] &&
                uncut[6]);
    assert_int_equal(limits[0], 0);
    assert_int_equal(limits[1], 0);
}

/* A split's fixed cost from two captures; none without a capture before,
 * without more pieces, or where more were not slower in total. */
static void overhead_fit(void **state)
{
    (void)state;
    assert_true(vka_plan_overhead(2, 100, 4, 140) == 20);
    assert_true(vka_plan_overhead(0, 0, 4, 140) == 0); /* no capture before */
    assert_true(vka_plan_overhead(4, 140, 4, 150) == 0);
    assert_true(vka_plan_overhead(2, 140, 4, 100) == 0);
}

static void slice_end(void **state)
{
    (void)state;
    const double est[] = {30, 30, 30, 30, 250, 10};
    assert_int_equal(vka_plan_slice_end(est, 6, 0, BUDGET_US, false), 3);
    assert_int_equal(vka_plan_slice_end(est, 6, 0, BUDGET_US, true), 1); /* a probe */
    assert_int_equal(vka_plan_slice_end(est, 6, 3, BUDGET_US, false), 4);
    assert_int_equal(vka_plan_slice_end(est, 6, 4, BUDGET_US, false), 5); /* alone */
    assert_int_equal(vka_plan_slice_end(est, 6, 5, BUDGET_US, false), 6);
}

TU_MAIN(NULL, NULL,
    over_budget_split_is_cut_and_next_frame_fits, uncuttable_pieces, overhead_fit, slice_end)
