/* attnbench bench: set up one op, check it, time it, report it. */
#ifndef ATTNBENCH_BENCH_H
#define ATTNBENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <vkattn/peak.h> /* not in vkattn.h */
#include <vkattn/vkattn.h>

#include "args.h"
#include "frame_budget.h"
#include "ops.h"
#include "peak_cache.h"

typedef struct ab_bench_result {
    const ab_op *op;
    vkattn_dtype dtype; /* --dtype: the data tensors' */
    ab_op_info info;
    char device[256];
    uint32_t warmup, repeat;
    bool host_timing; /* the queue has no timestamps: wall time of submit + wait */
    double median_ms, min_ms, max_ms;
    double gflops, gbps;
    uint64_t device_bytes;
    uint64_t device_allocations; /* live VkDeviceMemory after the timed runs */
    bool checked, check_ok;
    double max_rel_err;
    double bound; /* the bound checked against: the op's, or its --dtype one */
    bool has_peak;
    double flops_fraction, bandwidth_fraction;
    bool has_peak_note;
    ab_peak_note peak_note; /* what the fractions divide by, measured when and where */
    /* --cold: the first call on a fresh context and layer, host wall time of
     * record + submit + wait, and the pipelines it created */
    bool cold, prepared;
    double first_call_ms;
    uint64_t first_call_pipelines;
    double prepare_ms;          /* --prepare: the op's VKATTN_PREPARE recording, before the first call */
    uint64_t prepare_pipelines; /* pipelines that prepare created */
    /* --pipeline-cache: bytes read from the file into the context, and
     * written back to it after the run */
    bool cache_file;
    uint64_t pipeline_cache_bytes_loaded, pipeline_cache_bytes_saved;
    /* --pipeline-stats: [{"pipeline", "index", "stats": {name: value}}], or
     * NULL where the driver gives none (owned; ab_cmd_bench frees it) */
    bool stats_asked;
    json_t *pipeline_stats;
    ab_frame_result frame; /* --frame-budget-us (frame.asked) */
} ab_bench_result;

/* Sets up, optionally times the first call (a->cold, after a->prepare),
 * optionally checks (a->check), warms up and times one op on ctx. With
 * a->cold, ctx must be fresh (nothing recorded on it yet).
 * peak may be NULL (fractions then stay unset). Returns an exit status; *res
 * is filled when it is 0 or a failed check (1 with res->checked). */
int ab_bench_run(vkattn_context *ctx, const ab_op *op, const ab_args *a,
                 const vkattn_peak_result *peak, ab_bench_result *res);

/* Usage errors that depend on the op (flags it does not take, combinations
 * it refuses, sizes of 0, the op's own check_args), found with no device:
 * ATTNBENCH_EXIT_USAGE after a message on stderr, else 0. */
int ab_bench_check_args(const ab_op *op, const ab_args *a);

/* One submission of what `record` records, between two marks of `timer`
 * (reset first): its GPU time in *ms. */
vkattn_result ab_time_recording(vkattn_context *ctx, vkattn_timer *timer,
                                vkattn_result (*record)(void *, VkCommandBuffer), void *user,
                                double *ms);

/* The `bench` subcommand. */
int ab_cmd_bench(const ab_args *a);

/* Output: the contract's JSON object, or a human table (header, then rows). */
json_t *ab_bench_json(const ab_bench_result *res);
/* res: the row(s) to come, for the --cold columns; NULL = none */
void ab_print_table_header(const ab_bench_result *res);
void ab_print_table_row(const ab_bench_result *res);

/* A number for JSON: non-finite values cannot be written, so +-inf becomes
 * +-DBL_MAX (an error above any bound stays above it) and NaN null. */
json_t *ab_json_number(double v);
/* Prints one JSON value and a newline on stdout. */
void ab_json_print(json_t *v);

#endif
