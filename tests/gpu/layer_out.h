/* The host outputs of a layer test (test_gqa.c,
 * test_layer_dtypes.c): the reference's and the device's output and scores,
 * NaN-poisoned, and their comparison under the test's bounds. */
#ifndef VKATTN_TEST_LAYER_OUT_H
#define VKATTN_TEST_LAYER_OUT_H

#include "harness.h"

#include <stdlib.h>

typedef struct th_layer_out {
    float *ref, *ref_scores, *got, *got_scores;
    size_t n, nscores;
} th_layer_out;

static inline th_layer_out th_layer_out_make(size_t n, size_t nscores)
{
    th_layer_out o = {tu_floats(n), tu_floats(nscores), tu_floats(n), tu_floats(nscores), n,
                      nscores};
    tu_poison(o.ref, n), tu_poison(o.ref_scores, nscores);
    tu_poison(o.got, n), tu_poison(o.got_scores, nscores);
    return o;
}

/* got (and got_scores, when the call returned scores) from io's tensors. */
static inline void th_layer_out_download(vkattn_context *ctx, th_layer_out *o,
                                         const vkattn_layer_io *io)
{
    TH_OK(ctx, vkattn_tensor_download(io->output, o->got, 0, o->n));
    if (io->scores)
        TH_OK(ctx, vkattn_tensor_download(io->scores, o->got_scores, 0, o->nscores));
}

/* Fails unless max|got - ref| <= out_bound max(max|ref|, 1) and, with
 * scores, max|got_scores - ref_scores| <= score_bound; returns the output's
 * relative error. */
static inline double th_layer_out_check(const th_layer_out *o, bool scores, double out_bound,
                                        double score_bound, const char *what)
{
    const double err = tu_max_rel_err(o->got, o->ref, o->n, 1.0);
    if (!TU_WITHIN(err, out_bound))
        fail_msg("%s: output error %.3g exceeds %.3g", what, err, out_bound);
    if (scores) {
        const double serr = tu_max_abs_err(o->got_scores, o->ref_scores, o->nscores);
        if (!TU_WITHIN(serr, score_bound))
            fail_msg("%s: score error %.3g exceeds %.3g", what, serr, score_bound);
    }
    return err;
}

static inline void th_layer_out_free(th_layer_out *o)
{
    free(o->ref), free(o->ref_scores), free(o->got), free(o->got_scores);
}

#endif
