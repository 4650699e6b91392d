/* attnbench bench --frame-budget-us B: the call recorded sliced
 * (vkattn/slicer.h), one submission per frame, against the unsliced call. */
#ifndef ATTNBENCH_FRAME_BUDGET_H
#define ATTNBENCH_FRAME_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <vkattn/peak.h>
#include <vkattn/vkattn.h>

#include "args.h"
#include "ops.h"

typedef struct ab_frame_result {
    bool asked;
    uint32_t budget_us;
    uint32_t pieces, slices;            /* slices of one timed pass */
    double slice_median_ms, slice_max_ms; /* over every timed slice */
    double total_ms;                    /* median over the timed passes of their sum */
    double overhead;                    /* total_ms / unsliced median - 1 */
    /* The cost model (docs/INTEGRATION.md): median over pieces of
     * |estimate - measured| / measured, for the first estimates (bytes and
     * the ceilings) and for the refined ones (the timestamps of the pass before) */
    double first_error, refined_error;
    int identical; /* output memcmp-equal to the unsliced call: 1, 0; -1 not checked */
    /* Re-split (vkattn_slicer_info): re-captures, pieces over the budget cut
     * finer, and the indices (in the last capture) of those that cannot be */
    uint32_t resplits, resplit_pieces, n_uncut;
    uint32_t *uncut; /* owned */
    json_t *piece_list; /* [{"bytes", "first_estimate_us", "measured_us"}] (owned; NULL = none) */
} ab_frame_result;

/* One warm-up pass (the estimates learn from its timestamps), then
 * a->repeat timed passes, the last on a poisoned output compared with the
 * unsliced call's. unsliced_ms: the unsliced call's median. Returns an exit
 * status. */
int ab_frame_budget_run(vkattn_context *ctx, const ab_op *op, void *state, const ab_args *a,
                        const ab_op_info *info, const vkattn_peak_result *peak,
                        double unsliced_ms, ab_frame_result *out);

json_t *ab_frame_json(const ab_frame_result *f);
void ab_frame_free(ab_frame_result *f);

#endif
