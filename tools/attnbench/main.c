/* attnbench: runs, checks and times vkattn's ops and layers on any Vulkan
 * device, through the public API only. Contract: docs/ATTNBENCH.md.
 *   attnbench                  the README demo: devices, then a checked matmul
 *   attnbench devices|peak|bench OP|check FILE.json [flags]
 * stdout carries only the table or the one JSON value; messages and progress
 * go to stderr. Exit status: 0 ok, 1 failed check or runtime error, 2 usage. */
#include "args.h"
#include "bench.h"
#include "cmds.h"
#include "common.h"
#include "peak_cache.h"
#include "sweep.h"

#include <string.h>

#include <stdio.h>

int ab_cmd_peak(const ab_args *a)
{
    vkattn_context *ctx;
    int status = ab_open_context(a, &ctx);
    if (status)
        return status;
    vkattn_context_info info;
    vkattn_context_get_info(ctx, &info);
    vkattn_peak_result peak;
    vkattn_result r = vkattn_measure_peak(ctx, &peak);
    if (r != VKATTN_SUCCESS) {
        status = ab_report(ctx, r, "measuring the peak");
    } else {
        ab_peak_note note;
        ab_peak_store(ctx, &peak, &note);
        char note_text[512];
        ab_peak_note_text(&note, note_text, sizeof note_text);
        if (a->json) {
            json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:I}", "device", info.device_name,
                                  "fma_gflops", ab_json_number(peak.fma_gflops), "copy_gbps",
                                  ab_json_number(peak.copy_gbps), "fma_ms",
                                  ab_json_number(peak.fma_ms), "copy_ms",
                                  ab_json_number(peak.copy_ms), "fma_flops",
                                  (json_int_t)peak.fma_flops, "copy_bytes",
                                  (json_int_t)peak.copy_bytes);
            if (peak.coopmat_flops) {
                json_object_set_new(o, "coopmat_gflops", ab_json_number(peak.coopmat_gflops));
                json_object_set_new(o, "coopmat_ms", ab_json_number(peak.coopmat_ms));
                json_object_set_new(o, "coopmat_flops", json_integer((json_int_t)peak.coopmat_flops));
            }
            json_object_set_new(o, "cached", ab_peak_note_json(&note));
            ab_json_print(o);
            json_decref(o);
        } else {
            printf("%s\n  fp32 FMA   %10.2f GFLOP/s  (%.3g flops in %.3f ms)\n"
                   "  copy       %10.2f GB/s     (%.3g bytes read + written in %.3f ms)\n",
                   info.device_name, peak.fma_gflops, (double)peak.fma_flops, peak.fma_ms,
                   peak.copy_gbps, (double)peak.copy_bytes, peak.copy_ms);
            if (peak.coopmat_flops)
                printf("  f16 coopmat %9.2f GFLOP/s  (%.3g flops in %.3f ms; cooperative matrices)\n",
                       peak.coopmat_gflops, (double)peak.coopmat_flops, peak.coopmat_ms);
            /* bench divides by the best kept, which a loaded run does not lower */
            printf("peak bench divides by: %s\n", note_text);
        }
    }
    vkattn_context_destroy(ctx);
    if (a->validation && ab_validation_messages() > 0)
        return ATTNBENCH_EXIT_CHECK;
    return status;
}

/* attnbench's version (the tree it was built from) and the library's that
 * the loader found, which may differ in the patch number (vkattn.h) */
static int cmd_version(void)
{
    uint32_t v = vkattn_get_version();
    printf("attnbench %s\nlibvkattn %u.%u.%u (loaded)\n", VKATTN_VERSION_STRING, v >> 22,
           (v >> 12) & 0x3FFu, v & 0xFFFu);
    return ATTNBENCH_EXIT_OK;
}

/* The README demo: quick on lavapipe (a 256^3 matmul, checked). */
int ab_cmd_demo(void)
{
    ab_args a = {.command = AB_CMD_BENCH, .op = "matmul", .given = AB_F_M | AB_F_N | AB_F_K,
                 .m = 256, .n = 256, .k = 256, .warmup = 2, .repeat = 10, .seed = 1,
                 .check = true};
    printf("Vulkan devices:\n");
    int status = ab_cmd_devices(&a);
    if (status)
        return status;
    vkattn_context *ctx;
    if ((status = ab_open_context(&a, &ctx)))
        return status;
    vkattn_peak_result peak;
    ab_peak_note note;
    bool have_peak = ab_peak_get(ctx, false, &peak, &note);
    ab_bench_result res;
    status = ab_bench_run(ctx, ab_find_op("matmul"), &a, have_peak ? &peak : NULL, &res);
    if (status == ATTNBENCH_EXIT_OK || res.checked) {
        printf("\nmatmul checked against the CPU reference on %s:\n", res.device);
        ab_print_table_header(&res);
        ab_print_table_row(&res);
        if (have_peak) {
            char text[512];
            ab_peak_note_text(&note, text, sizeof text);
            printf("\ndevice peak (`attnbench peak`): %s\n", text);
        }
        printf("%s\n", status == ATTNBENCH_EXIT_OK ? "demo ok" : "demo FAILED: error above bound");
    }
    vkattn_context_destroy(ctx);
    return status;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "sweep"))
        return ab_cmd_sweep(argc, argv); /* its own flags, then bench's parser */
    ab_args a;
    int status = ab_parse_args(argc, argv, &a);
    if (status)
        return status;
    switch (a.command) {
    case AB_CMD_DEMO: return ab_cmd_demo();
    case AB_CMD_HELP: ab_usage(true); return ATTNBENCH_EXIT_OK;
    case AB_CMD_VERSION: return cmd_version();
    case AB_CMD_DEVICES: return ab_cmd_devices(&a);
    case AB_CMD_PEAK: return ab_cmd_peak(&a);
    case AB_CMD_BENCH: return ab_cmd_bench(&a);
    case AB_CMD_CHECK: return ab_cmd_check(&a);
    }
    return ATTNBENCH_EXIT_USAGE;
}
