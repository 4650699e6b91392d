/* The register budget of the GPU tuning (src/ops/register_budget.h), with no
 * GPU: the tile tables of every GPU-tuning kernel family, chosen from the
 * limits of each device profile (src/vk/profile.c) over a range of shapes,
 * stay within the profile's budget of live fp32 values per invocation (128;
 * 64 under "mali" and "adreno"), and every shape still gets a tile. The host
 * sources are compiled into this test (tests/CMakeLists.txt); a family adds
 * its chooser here and its source to VKATTN_BUDGET_SOURCES there. */
#include "test_util.h"

#include <string.h>

#include "ops/gpu_tiles.h"
#include "ops/register_budget.h"
#include "vk/profile.h"

/* A large desktop GPU's limits (an H100's as vkattn saw them: 48 KiB of
 * shared memory, 1024 invocations, subgroup 32), clamped by profile `name`. */
static vkattn_context_info profile_info(const char *name)
{
    vkattn_context_info info;
    memset(&info, 0, sizeof info);
    info.max_shared_memory = 49152;
    info.max_workgroup_invocations = 1024;
    info.max_workgroup_size[0] = info.max_workgroup_size[1] = 1024;
    info.max_workgroup_size[2] = 64;
    for (int i = 0; i < 3; i++)
        info.max_workgroup_count[i] = 65535;
    info.max_storage_buffer_range = 1ull << 32;
    info.min_storage_buffer_offset_alignment = 16;
    info.max_storage_buffers_per_stage = 1u << 20;
    info.subgroup_size = info.min_subgroup_size = info.max_subgroup_size = 32;
    info.storage_buffer_16bit = info.fp16 = info.subgroup_operations = true;
    const vka_profile *p = vka_profile_find(name);
    assert_non_null(p);
    vka_profile_clamp(p, &info);
    return info;
}

static const char *const profiles[] = {"desktop", "mobile-min", "mali", "adreno"};
#define N_PROFILES (sizeof profiles / sizeof profiles[0])

static void test_budget_by_profile(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_PROFILES; i++) {
        vkattn_context_info info = profile_info(profiles[i]);
        const bool mobile = !strcmp(profiles[i], "mali") || !strcmp(profiles[i], "adreno");
        assert_int_equal(vka_register_budget(&info),
                         mobile ? VKA_REGISTER_BUDGET_MOBILE : VKA_REGISTER_BUDGET);
    }
    assert_int_equal(VKA_REGISTER_BUDGET, 128);
    assert_int_equal(VKA_REGISTER_BUDGET_MOBILE, 64);
}

/* The counts the shaders' header comments state (matmul_gpu.comp,
 * flash_tiled_body.glsl): a change to a formula must change the comment. */
static void test_stated_counts(void **state)
{
    (void)state;
    assert_int_equal(vka_matmul_gpu_live_values(128, 64, 16, 8, 4), 68);
    assert_int_equal(vka_matmul_gpu_live_values(64, 64, 16, 8, 4), 72);
    assert_int_equal(vka_matmul_gpu_live_values(64, 64, 16, 4, 4), 44);
    assert_int_equal(vka_flash_tiled_live_values(16, 32, 256, 256), 86);
    assert_int_equal(vka_flash_tiled_live_values(4, 32, 64, 64), 86);
}

static const uint32_t sizes[] = {1, 2, 7, 16, 31, 33, 64, 100, 128, 255, 256, 1000, 4096};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void test_matmul_gpu_tiles(void **state)
{
    (void)state;
    for (size_t p = 0; p < N_PROFILES; p++) {
        vkattn_context_info info = profile_info(profiles[p]);
        const uint32_t budget = vka_register_budget(&info);
        for (size_t i = 0; i < N_SIZES; i++)
            for (size_t j = 0; j < N_SIZES; j++) {
                vka_matmul_tiles t;
                if (!vka_matmul_gpu_tiles(&info, sizes[i], sizes[j], &t))
                    fail_msg("%s: no matmul_gpu tile for %u x %u", profiles[p], sizes[i],
                             sizes[j]);
                const uint32_t live = vka_matmul_gpu_live_values(t.bm, t.bn, t.bk, t.tm, t.tn);
                if (live > budget)
                    fail_msg("%s: matmul_gpu %ux%ux%u/%ux%u holds %u live values > %u",
                             profiles[p], t.bm, t.bn, t.bk, t.tm, t.tn, live, budget);
                assert_true(vka_matmul_tile_threads(&t) <= info.max_workgroup_invocations);
                assert_true(2u * vka_matmul_tile_shared_bytes(&t) <= info.max_shared_memory);
                assert_true(t.bm % 4 == 0 && t.bn % 4 == 0 && t.bk % 4 == 0 && t.tn % 2 == 0);
            }
    }
}

/* Every width up to 256 (the kernel's widest), dk != dv too, with and
 * without subgroup shuffles. */
static void test_flash_tiled_tiles(void **state)
{
    (void)state;
    static const uint32_t widths[] = {1, 3, 4, 8, 17, 32, 63, 64, 65, 96, 128, 129, 200, 255, 256};
    const size_t nw = sizeof widths / sizeof widths[0];
    for (size_t p = 0; p < N_PROFILES; p++) {
        vkattn_context_info info = profile_info(profiles[p]);
        const uint32_t budget = vka_register_budget(&info);
        for (int sg = 0; sg < 2; sg++)
            for (size_t i = 0; i < nw; i++)
                for (size_t j = 0; j < nw; j++) {
                    const uint32_t dk = widths[i], dv = widths[j];
                    vka_flash_tiled t;
                    const bool ok = vka_flash_tiled_tiles(&info, sg, dk, dv, &t);
                    /* mobile-min binds 4 storage buffers: the packed kernel */
                    if (!strcmp(profiles[p], "mobile-min")) {
                        assert_false(ok);
                        continue;
                    }
                    if (!ok)
                        fail_msg("%s: no flash_tiled tile for dk %u dv %u", profiles[p], dk, dv);
                    const uint32_t live = vka_flash_tiled_live_values(t.lanes, t.bc, dk, dv);
                    if (live > budget)
                        fail_msg("%s: flash_tiled lanes %u bc %u at dk %u dv %u holds %u live "
                                 "values > %u",
                                 profiles[p], t.lanes, t.bc, dk, dv, live, budget);
                    assert_true(vka_flash_tiled_shared_bytes(&t, dk, dv) <= info.max_shared_memory);
                    assert_true(t.wg % t.lanes == 0 && t.bc % 4 == 0);
                    assert_true(!t.subgroup || (sg && info.min_subgroup_size >= t.lanes));
                }
    }
    vkattn_context_info cpu = profile_info("desktop");
    cpu.cpu_tuning = true;
    vka_flash_tiled t;
    assert_false(vka_flash_tiled_tiles(&cpu, true, 64, 64, &t));
}

/* The decode kernel's split layout: rows per workgroup at every width. */
static void test_decode_rows(void **state)
{
    (void)state;
    for (size_t p = 0; p < N_PROFILES; p++) {
        vkattn_context_info info = profile_info(profiles[p]);
        const uint32_t budget = vka_register_budget(&info);
        for (uint32_t dv = 2; dv <= 256; dv += 2) {
            const uint32_t rows = vka_decode_gpu_rows(&info, 64, dv, 8);
            const uint32_t live = vka_decode_live_values(rows, 64, dv);
            if (rows < 1 || rows > 8 || live > budget)
                fail_msg("%s: decode dv %u: %u rows hold %u live values (budget %u)",
                         profiles[p], dv, rows, live, budget);
        }
    }
    assert_int_equal(vka_decode_live_values(8, 64, 256), 86);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_by_profile),
        cmocka_unit_test(test_stated_counts),
        cmocka_unit_test(test_matmul_gpu_tiles),
        cmocka_unit_test(test_flash_tiled_tiles),
        cmocka_unit_test(test_decode_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
