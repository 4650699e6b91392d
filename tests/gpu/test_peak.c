/* vkattn_measure_peak: finite, positive ceilings whose parts agree
 * (gflops = flops / ms, GB/s = bytes / ms), the copy counting two buffers of
 * equal size, argument errors, and a clean validation log (the measurement
 * records its own dispatches and timestamps). */
#include "harness.h"

#include <vkattn/peak.h>

#include <math.h>
#include <string.h>

static void test_measure(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_peak_result p;
    memset(&p, 0xff, sizeof p);
    vkattn_context_info dev;
    TH_OK(ctx, vkattn_context_get_info(ctx, &dev));
    if (!dev.timestamps) { /* e.g. the mobile-min profile: nothing to time with */
        assert_int_equal(vkattn_measure_peak(ctx, &p), VKATTN_ERROR_UNSUPPORTED);
        th_assert_validation_clean();
        return;
    }
    TH_OK(ctx, vkattn_measure_peak(ctx, &p));
    assert_true(isfinite(p.fma_gflops) && p.fma_gflops > 0);
    assert_true(isfinite(p.copy_gbps) && p.copy_gbps > 0);
    assert_true(p.fma_ms > 0 && p.copy_ms > 0);
    assert_true(p.fma_flops > 0 && p.copy_bytes > 0);
    /* the figures are what their parts say */
    assert_true(fabs(p.fma_gflops - (double)p.fma_flops / (p.fma_ms * 1e6)) <= 1e-9 * p.fma_gflops);
    assert_true(fabs(p.copy_gbps - (double)p.copy_bytes / (p.copy_ms * 1e6)) <= 1e-9 * p.copy_gbps);
    /* bytes read + written of vec4-aligned buffers: a multiple of 32 */
    assert_int_equal(p.copy_bytes % 32, 0);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_true(p.copy_bytes / 2 <= info.max_storage_buffer_range);
    /* the copy buffers are freed again */
    uint64_t current = 0, peak = 0;
    TH_OK(ctx, vkattn_context_memory_usage(ctx, &current, &peak));
    assert_true(peak >= current + p.copy_bytes);
    th_assert_validation_clean();
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_peak_result p;
    assert_int_equal(vkattn_measure_peak(NULL, &p), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_measure_peak(ctx, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "vkattn_measure_peak"));
}

TU_MAIN(th_setup, th_teardown, test_measure, test_bad_arguments)
