/* The slicer's decisions from its pieces' times, kept free of Vulkan so a
 * unit test can feed them made-up timestamps (tests/unit/test_slice_plan.c):
 * how many pieces the next slice takes, and which splits to cut finer after a
 * pass whose pieces overran the budget (vkattn/slicer.h, "Re-split"). */
#ifndef VKA_SLICE_PLAN_H
#define VKA_SLICE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

/* A re-split asks a piece's split for pieces of this share of the budget at
 * the piece's measured rate: half, as the first split (AUTO_PIECE_SHARE in
 * slicer.c), since a piece's fixed overhead does not shrink with its work. */
#define VKA_RESPLIT_SHARE 0.5
/* At most this many pieces from one in a round: a piece's time is a fixed
 * cost plus its work, and until a round has shown the fixed cost (see
 * vka_plan_overhead) cutting by the time alone could make hundreds of pieces
 * that each still cost the fixed part (on a loaded lavapipe 0.3-0.5 ms). */
#define VKA_RESPLIT_MAX_CUT 8

typedef struct vka_plan_piece {
    double measured_us; /* < 0: not measured */
    uint64_t work;      /* multiply-adds; 0 where the op did not say */
    uint64_t limit;     /* the work per dispatch it was captured under; 0 = none */
    uint32_t split;     /* the split that made it (1-based); 0 = none */
    bool dispatch;      /* else a copy */
    double overhead_us; /* its split's fixed cost per piece (vka_plan_overhead); 0 unknown */
} vka_plan_piece;

/* A split's fixed cost per piece from two captures of it: n0 pieces taking
 * us0 together, then n1 (> n0) taking us1; 0 where that does not tell (no
 * capture before, no more pieces, or faster in total). */
double vka_plan_overhead(uint32_t n0, double us0, uint32_t n1, double us1);

/* The end (exclusive) of the slice starting at piece `next`: at least one
 * piece, then while the estimates est[] fit in budget_us; only one where
 * `probe`. */
uint32_t vka_plan_slice_end(const double *est, uint32_t n, uint32_t next, double budget_us,
                            bool probe);

typedef struct vka_resplit_plan {
    uint32_t resplit; /* pieces over budget whose split was asked for finer pieces */
    uint32_t uncut;   /* pieces over budget that cannot be cut (uncut[] marks them) */
} vka_resplit_plan;

/* For each piece measured over budget_us: where it is a dispatch whose work
 * is known and within the limit it was captured under (its op could cut it
 * as asked), and its fixed cost leaves room, lowers split_limits[split - 1]
 * (0 = none yet) to the work that takes VKA_RESPLIT_SHARE of the budget at
 * its measured rate net of the fixed cost (at least 1, and at least its work
 * / VKA_RESPLIT_MAX_CUT); otherwise (a copy, unknown work, no split, an op
 * that already could not cut it to its limit - one row, one group - or a
 * fixed cost over that share) marks uncut[i]. uncut[] is cleared first. */
vka_resplit_plan vka_plan_resplit(const vka_plan_piece *p, uint32_t n, double budget_us,
                                  uint64_t *split_limits, uint32_t n_splits, bool *uncut);

#endif /* VKA_SLICE_PLAN_H */
