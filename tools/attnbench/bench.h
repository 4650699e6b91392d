/* attnbench bench: set up one op, check it, time it, report it. */
#ifndef ATTNBENCH_BENCH_H
#define ATTNBENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <vkattn/peak.h> /* not in vkattn.h */
#include <vkattn/vkattn.h>

#include "args.h"
#include "ops.h"

typedef struct ab_bench_result {
    const ab_op *op;
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
    bool has_peak;
    double flops_fraction, bandwidth_fraction;
} ab_bench_result;

/* Sets up, optionally checks (a->check), warms up and times one op on ctx.
 * peak may be NULL (fractions then stay unset). Returns an exit status; *res
 * is filled when it is 0 or a failed check (1 with res->checked). */
int ab_bench_run(vkattn_context *ctx, const ab_op *op, const ab_args *a,
                 const vkattn_peak_result *peak, ab_bench_result *res);

/* The `bench` subcommand. */
int ab_cmd_bench(const ab_args *a);

/* Output: the contract's JSON object, or a human table (header, then rows). */
json_t *ab_bench_json(const ab_bench_result *res);
void ab_print_table_header(void);
void ab_print_table_row(const ab_bench_result *res);

/* A number for JSON: non-finite values cannot be written, so +-inf becomes
 * +-DBL_MAX (an error above any bound stays above it) and NaN null. */
json_t *ab_json_number(double v);
/* Prints one JSON value and a newline on stdout. */
void ab_json_print(json_t *v);

#endif
