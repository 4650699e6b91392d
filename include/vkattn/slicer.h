/* vkattn/slicer.h - one call recorded across frames, a time budget at a time.
 *
 * A game lends a model a millisecond or two of GPU time per frame; one long
 * attention call (a long-context MultiHeadAttention, a prefill) takes longer.
 * A slicer captures the call once - every op and layer, through its own
 * *_record - as an ordered list of pieces (each dispatch or copy with the
 * barriers before it; dispatches vkattn already splits under
 * max_dispatch_work stay split), and each vkattn_slicer_record_next records
 * the next pieces that fit the budget into the app's command buffer. The
 * state between frames stays in device memory; the result is bit for bit the
 * unsliced call's, whatever the budget (the same commands run in the same
 * order; dropout's Philox stream does not depend on where a slice ends).
 *
 * Call sequence:
 *   static vkattn_result rec(void *user, VkCommandBuffer cmd)
 *   {   struct my_call *c = user; return vkattn_mha_record(c->mha, cmd, &c->call, &c->io); }
 *   vkattn_slicer_desc d = {.record = rec, .user = &my_call, .budget_us = 1500};
 *   vkattn_slicer_create(ctx, &d, &slicer);      // prepares and captures; at load time
 *   each frame: vkattn_slicer_record_next(slicer, frame_cmd, &done); submit frame_cmd
 *               if (done) { ...use the output after that submission...; vkattn_slicer_reset(slicer); }
 *   vkattn_slicer_destroy(slicer);
 *
 * Creation does everything that allocates or compiles: it calls `record`
 * twice - once dry (as VKATTN_PREPARE: pipelines, scratch, descriptor sets), once
 * capturing. record_next allocates and compiles nothing. Only a reset may
 * call `record` again, to re-split (below).
 *
 * Cost model (docs/INTEGRATION.md): a piece's first estimate is a fixed
 * per-dispatch overhead plus the longer of its bytes at the device's copy
 * bandwidth and its multiply-adds (where the op knows them: matmul, fused
 * attention and its backward, decode, additive scores) at a fraction of its FMA rate (desc.peak, else modest
 * defaults); with timestamps, each slice
 * also times its pieces, and once a piece has run its measured time replaces
 * the estimate, while pieces not yet run are scaled by measured/estimated of
 * those that have. Until a piece has been measured, a slice records one piece
 * (unless the first estimates put the whole call under a tenth of the
 * budget). Slicing follows the estimates, so the first pass through a call
 * may miss the budget where they are poor; replays (reset) keep to it.
 *
 * Re-split. The split is chosen from the first estimates, which on a loaded
 * machine were 13x off. So once every piece has a measured time, each reset
 * looks for pieces measured over the budget: a dispatch whose op counts its
 * work and cut it as asked gets its split made finer - the call is captured
 * again (dry pass included) with that op's pieces at half the budget by
 * their measured rate, at most 8 from one per re-split - and the new pieces
 * start from the old ones' times. A later reset fits each re-split op's
 * fixed cost per piece from the two captures and re-splits again net of it,
 * or, where that cost alone takes half the budget, goes back to the op's
 * split before (finer pieces would only add it). At most 4 re-captures per
 * slicer. A piece over the budget that cannot be cut - a copy, a dispatch
 * whose op does not count its work, one its op cannot cut further (one row,
 * one workgroup), or one whose fixed cost fills the budget - keeps a slice of
 * its own and is reported (vkattn_slicer_piece.uncut,
 * vkattn_slicer_info.uncut_pieces), never cut again. The re-capture
 * allocates (scratch, descriptor sets, a query pool, the command list) and
 * runs in reset only, never in record_next. Slices of the old capture may
 * still be running: it is kept until their timestamps are read back (the
 * GPU is done with it), one at a time, so a further re-split waits for
 * that. Results stay bit for bit the unsliced call's: splits along rows or
 * keys are bit-identical.
 *
 * Contracts. The callback may only call vkattn *_record functions (one or
 * several) with the `cmd` it is given - it is no real command buffer (a
 * callback that passes VKATTN_PREPARE or VKATTN_RUN_NOW instead records
 * nothing to slice, and creation refuses it: VKATTN_ERROR_INVALID_ARGUMENT). The
 * call's tensors, layers and kv caches must outlive the slicer, and the slices
 * must run in order on one queue, after the app's writes of the inputs are
 * visible to compute shaders (the first slice's barriers order against earlier
 * vkattn work only, as *_record does). While a pass is under way (between the
 * first record_next and done), the layer used must not run another call: its
 * scratch holds the state between slices; context scratch the call needs is
 * the slicer's own, so other ops and layers may run between slices. Outputs
 * are written by compute shaders, like the call's own *_record. Timestamps are
 * read back when a later record_next (or get_piece) finds them available: the
 * app should have submitted a slice before it records the next.
 *
 * Thread safety: a slicer is externally synchronized. Creation captures on
 * the calling thread; one slicer at a time is created per context
 * (concurrently recording other calls is fine), and where it times pieces it
 * submits once on the context's one-shot command buffer (none may be open:
 * vkattn_context_begin_commands). A reset that re-splits captures likewise
 * on the calling thread and submits once the same way (while that command
 * buffer is open, it leaves the re-split to a later reset).
 */
#ifndef VKATTN_SLICER_H
#define VKATTN_SLICER_H

#include "vkattn/context.h"

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_slicer vkattn_slicer;
struct vkattn_peak_result; /* vkattn/peak.h */

/* Records one call into `cmd` through vkattn *_record functions only. */
typedef vkattn_result (*vkattn_record_fn)(void *user, VkCommandBuffer cmd);

/* Zero fields are defaults; the struct grows only by appending fields. */
typedef struct vkattn_slicer_desc {
    /* required; called during create, and by reset where it re-splits:
     * `user` and what it points to must live as long as the slicer */
    vkattn_record_fn record;
    void *user;              /* passed to record */
    /* GPU time each record_next may spend, microseconds; > 0 and finite. A
     * piece longer than the budget makes a slice of its own. */
    double budget_us;
    /* The device's ceilings (vkattn_measure_peak) for the first estimates;
     * NULL: 10 GB/s, 100 GFLOP/s and 20 us per dispatch. Copied during
     * create; its copy_gbps and fma_gflops must be > 0. */
    const struct vkattn_peak_result *peak;
    /* Write no timestamps (estimates are never refined); also where the
     * queue family has none. */
    bool no_timestamps;
    /* Multiply-adds one dispatch of the call may do, for finer pieces than
     * the context's max_dispatch_work (vkattn_context_desc): long dispatches
     * are split along rows or keys as under that budget, bit-identical to
     * one dispatch, down to one row per dispatch. 0 = chosen from budget_us:
     * where a piece's first estimate exceeds half the budget, the call is
     * captured again with the work that makes such pieces half the budget by
     * the estimates (never less than one dispatch overhead's worth), so
     * pieces stay as large as the budget allows; set_budget does not split
     * again (a reset re-splits what overruns, either way). Else pick it so that a piece takes well under budget_us: a
     * multiply-add is 2 flops of vkattn_peak_result.fma_gflops, and attention
     * reaches only a fraction of that rate (docs/INTEGRATION.md, "Sliced
     * recording"). */
    uint64_t max_piece_work;
} vkattn_slicer_desc;

/* Prepares and captures the call (see above). Results:
 * VKATTN_ERROR_INVALID_ARGUMENT naming the argument (ctx, desc, out,
 * desc->record, desc->budget_us, desc->peak's fields; another slicer being
 * created on ctx; a callback that recorded nothing into its cmd), the
 * callback's own failure (re-reported as
 * "vkattn_slicer_create: ..."), out of memory, Vulkan failures. *out is NULL
 * on failure, and nothing was recorded anywhere. */
VKATTN_API vkattn_result vkattn_slicer_create(vkattn_context *ctx, const vkattn_slicer_desc *desc,
                                              vkattn_slicer **out);
/* NULL-safe. Only once the GPU is done with every slice recorded, and before
 * the context is destroyed (the slicer's scratch belongs to it). */
VKATTN_API void vkattn_slicer_destroy(vkattn_slicer *slicer);

/* Records the next pieces of the pass into `cmd` (a primary or secondary
 * command buffer in the recording state, outside a render pass): at least
 * one, then as many as the estimates fit in the budget. *done is true once
 * the last piece is recorded (also when the pass was already done: then
 * nothing is recorded). Results: VKATTN_ERROR_INVALID_ARGUMENT naming slicer,
 * cmd or done; nothing is recorded on failure. */
VKATTN_API vkattn_result vkattn_slicer_record_next(vkattn_slicer *slicer, VkCommandBuffer cmd,
                                                   bool *done);

/* Starts a new pass of the same call (the next record_next records the first
 * piece again), re-splitting pieces that overran the budget (above).
 * VKATTN_ERROR_INVALID_ARGUMENT for NULL; where a re-split's capture fails
 * (the callback's failure, out of memory, Vulkan failures) that error, with
 * the pass reset on the old pieces, which stay (no re-split is tried again). */
VKATTN_API vkattn_result vkattn_slicer_reset(vkattn_slicer *slicer);

/* Changes the budget for the slices recorded from now on; as desc.budget_us. */
VKATTN_API vkattn_result vkattn_slicer_set_budget(vkattn_slicer *slicer, double budget_us);

typedef struct vkattn_slicer_info {
    uint32_t pieces;          /* of the whole call */
    uint32_t next_piece;      /* the first piece the next record_next records */
    uint32_t slices;          /* record_next calls that recorded, since create or reset */
    uint32_t measured_pieces; /* pieces with a measured time */
    double budget_us;
    double estimated_us;      /* the whole call, by the current estimates */
    bool timestamps;          /* pieces are timed */
    /* Re-split (see above): captures of the call made again with finer
     * splits, the pieces whose overrun caused them (summed), and the pieces
     * over budget that cannot be cut (vkattn_slicer_piece.uncut) */
    uint32_t resplits;
    uint32_t resplit_pieces;
    uint32_t uncut_pieces;
} vkattn_slicer_info;

/* Reads back available timestamps, then fills *info. INVALID_ARGUMENT for NULL. */
VKATTN_API vkattn_result vkattn_slicer_get_info(vkattn_slicer *slicer, vkattn_slicer_info *info);

typedef struct vkattn_slicer_piece {
    double estimated_us; /* the current estimate (the measured time once there is one) */
    double prior_us;     /* the first estimate, from bytes and the ceilings */
    double measured_us;  /* the last measured GPU time; < 0 where none yet */
    uint64_t bytes;      /* bytes of the buffer ranges the piece binds (its share of
                            them where it is one of a dispatch split along batch and
                            heads) */
    uint32_t slice;      /* the slice that last recorded it (counting from 0 since reset) */
    bool dispatch;       /* a compute dispatch (else a copy) */
    /* Measured over the budget, and no finer split exists: a copy, a dispatch
     * whose op does not count its work, or one its op cannot cut further
     * (one row, one workgroup); it keeps a slice of its own */
    bool uncut;
} vkattn_slicer_piece;

/* Reads back available timestamps, then describes piece `index`.
 * INVALID_ARGUMENT naming slicer, index (out of range) or piece. */
VKATTN_API vkattn_result vkattn_slicer_get_piece(vkattn_slicer *slicer, uint32_t index,
                                                 vkattn_slicer_piece *piece);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_SLICER_H */
