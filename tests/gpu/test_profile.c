/* Device profiles: each clamps the limits and features the context reports to
 * min(device, profile) and never beyond the device; a profile without push
 * descriptors or timestamps really runs without them; an op still matches the
 * CPU reference under every profile; the watchdog budget is the profile's
 * unless the desc sets one. */
#include "harness.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vkattn_context *open_profile(const char *profile, uint64_t max_dispatch_work)
{
    vkattn_context_desc desc = th_context_desc();
    desc.profile = profile;
    desc.max_dispatch_work = max_dispatch_work;
    vkattn_context *ctx = NULL;
    vkattn_result r = vkattn_context_create(&desc, &ctx);
    if (r != VKATTN_SUCCESS)
        fail_msg("profile %s: %s: %s", profile, vkattn_result_name(r), vkattn_last_error());
    return ctx;
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* A small matmul with bias against the reference: every op shares the
 * dispatch and binding path a profile changes. */
static void matmul_matches_reference(vkattn_context *ctx)
{
    const vkattn_matmul_params p = {.batch = 2, .m = 37, .n = 19, .k = 45, .has_bias = true};
    const size_t na = 2 * 37 * 45, nb = 2 * 45 * 19, nc = 2 * 37 * 19;
    float *a = tu_floats(na), *b = tu_floats(nb), *bias = tu_floats(19), *ref = tu_floats(nc);
    tu_fill_uniform(a, na, -1, 1);
    tu_fill_uniform(b, nb, -1, 1);
    tu_fill_uniform(bias, 19, -1, 1);
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, bias, ref));
    vkattn_tensor *ta = th_tensor(ctx, na, a), *tb = th_tensor(ctx, nb, b);
    vkattn_tensor *tbias = th_tensor(ctx, 19, bias), *tc = th_tensor(ctx, nc, NULL);
    vkattn_matmul_io io = {.a = ta, .b = tb, .bias = tbias, .c = tc};
    TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
    /* twice: the second call reuses whatever binding state the first made */
    TH_OK(ctx, vkattn_tensor_fill(tc, NAN));
    TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(tc, nc);
    TU_ASSERT_CLOSE(got, ref, nc, 2e-5, "matmul 2x37x19x45 under a profile");
    th_assert_validation_clean();
    vkattn_tensor_destroy(ta);
    vkattn_tensor_destroy(tb);
    vkattn_tensor_destroy(tbias);
    vkattn_tensor_destroy(tc);
    free(a), free(b), free(bias), free(ref), free(got);
}

/* The device's own limits, whatever VKATTN_TEST_PROFILE says. */
static vkattn_context_info device_info(void)
{
    vkattn_context *ctx = open_profile("desktop", 0);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    vkattn_context_destroy(ctx);
    return info;
}

static void test_every_profile_clamps(void **state)
{
    (void)TH_CTX(state);
    const vkattn_context_info dev = device_info();
    uint32_t n = 0;
    const char *const *names = vkattn_profile_names(&n);
    for (uint32_t i = 0; i < n; i++) {
        vkattn_context *ctx = open_profile(names[i], 0);
        vkattn_context_info info;
        TH_OK(ctx, vkattn_context_get_info(ctx, &info));
        assert_string_equal(info.profile, names[i]);
        assert_true(info.max_shared_memory <= dev.max_shared_memory);
        assert_true(info.max_workgroup_invocations <= dev.max_workgroup_invocations);
        assert_true(info.max_storage_buffer_range <= dev.max_storage_buffer_range);
        assert_true(info.max_storage_buffers_per_stage <= dev.max_storage_buffers_per_stage);
        assert_true(info.min_storage_buffer_offset_alignment >= dev.min_storage_buffer_offset_alignment);
        for (int k = 0; k < 3; k++) {
            assert_true(info.max_workgroup_size[k] <= dev.max_workgroup_size[k]);
            assert_true(info.max_workgroup_count[k] <= dev.max_workgroup_count[k]);
        }
        assert_true(!info.push_descriptors || dev.push_descriptors);
        assert_true(!info.timestamps || dev.timestamps);
        assert_true(!info.fp16 || dev.fp16);
        matmul_matches_reference(ctx);
        vkattn_context_destroy(ctx);
    }
}

/* mobile-min is exactly the Vulkan 1.1 minimums wherever the device offers
 * more, and takes every optional feature away. */
static void test_mobile_min(void **state)
{
    (void)TH_CTX(state);
    const vkattn_context_info dev = device_info();
    vkattn_context_info info;
    vkattn_context *ctx = open_profile("mobile-min", 0);
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_int_equal(info.max_shared_memory, min_u32(dev.max_shared_memory, 16384));
    assert_int_equal(info.max_workgroup_invocations, min_u32(dev.max_workgroup_invocations, 128));
    assert_int_equal(info.max_workgroup_size[0], min_u32(dev.max_workgroup_size[0], 128));
    assert_int_equal(info.max_workgroup_size[2], min_u32(dev.max_workgroup_size[2], 64));
    assert_int_equal(info.max_storage_buffers_per_stage, min_u32(dev.max_storage_buffers_per_stage, 4));
    assert_true(info.max_storage_buffer_range <= (1u << 27));
    assert_true(info.min_storage_buffer_offset_alignment >= 256);
    assert_false(info.push_descriptors);
    assert_false(info.storage_buffer_16bit);
    assert_false(info.fp16);
    assert_false(info.timestamps);
    assert_false(info.subgroup_operations);
    assert_int_equal(info.max_dispatch_work, 1ull << 30);

    /* no timestamps: timers say so instead of recording queries */
    vkattn_timer *timer = NULL;
    assert_int_equal(vkattn_timer_create(ctx, 2, &timer), VKATTN_ERROR_UNSUPPORTED);
    assert_null(timer);

    /* a tensor view must honour the clamped offset alignment (256) */
    vkattn_tensor *owner = th_tensor(ctx, 1024, NULL), *view = NULL;
    vkattn_buffer_view bv = vkattn_tensor_get_info(owner).buffer;
    bv.offset += 64;
    bv.size = 64 * sizeof(float);
    vkattn_tensor_desc d = {.rank = 1, .dims = {64}};
    assert_int_equal(vkattn_tensor_wrap(ctx, &d, &bv, &view), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(view);
    bv.offset += 192;
    TH_OK(ctx, vkattn_tensor_wrap(ctx, &d, &bv, &view));
    vkattn_tensor_destroy(view);
    vkattn_tensor_destroy(owner);
    th_assert_validation_clean();
    vkattn_context_destroy(ctx);
}

/* The desc's budget wins over the profile's; "desktop" has none. */
static void test_dispatch_budget(void **state)
{
    (void)TH_CTX(state);
    vkattn_context_info info;
    vkattn_context *ctx = open_profile("desktop", 0);
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_int_equal(info.max_dispatch_work, 0);
    vkattn_context_destroy(ctx);
    ctx = open_profile("mobile-min", 12345);
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_int_equal(info.max_dispatch_work, 12345);
    vkattn_context_destroy(ctx);
}

TU_MAIN(th_setup, th_teardown, test_every_profile_clamps, test_mobile_min, test_dispatch_budget)
