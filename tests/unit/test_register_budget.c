/* The register budget of the GPU tuning (src/ops/register_budget.h), with no
 * GPU: the tile tables of every GPU-tuning kernel family, chosen from the
 * limits of each device profile (src/vk/profile.c) over a range of shapes,
 * stay within the profile's budget of live fp32 values per invocation (128;
 * 64 under "mali" and "adreno"), and every shape still gets a tile. The host
 * sources are compiled into this test (tests/CMakeLists.txt); a family adds
 * its chooser here and its source to VKATTN_BUDGET_SOURCES there. */
#include "test_util.h"

#include <string.h>

#include "ops/flash_backward_gpu_tiles.h"
#include "ops/gpu_tiles.h"
#include "ops/register_budget.h"
#include "ops/tuning_table.h"
#include "ops/variants.h"
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
    assert_int_equal(vka_matmul_coopmat_live_values(32, 2, 4, 4), 116);
    assert_int_equal(vka_flash_coopmat_live_values(32, 128), 110);
    /* flash_backward_coopmat_body.glsl: 46 at any width, within even the mobile 64 */
    assert_int_equal(vka_flash_backward_coopmat_live_values(), 46);
    assert_true(vka_flash_backward_coopmat_live_values() <= VKA_REGISTER_BUDGET_MOBILE);
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

/* The cooperative-matrix matmul's tiles (matmul_coopmat_nv.comp): within the
 * budget, the shared memory (two buffers of both tiles in either orientation
 * and the staging squares) and the invocations wherever chosen; none for a
 * subgroup size that varies (the kernel indexes subgroups by gl_SubgroupID),
 * but tiles of 32-invocation warps for the emulation (matmul_coopmat_emu). */
static void test_matmul_coopmat_tiles(void **state)
{
    (void)state;
    for (size_t p = 0; p < 2 * N_PROFILES; p++) {
        const bool emulated = p >= N_PROFILES; /* matmul_coopmat_emu */
        const char *profile = profiles[p % N_PROFILES];
        vkattn_context_info info = profile_info(profile);
        const uint32_t budget = vka_register_budget(&info);
        for (size_t i = 0; i < N_SIZES; i++)
            for (size_t j = 0; j < N_SIZES; j++) {
                vka_coopmat_tiles t;
                if (!vka_matmul_coopmat_tiles(&info, sizes[i], sizes[j], emulated, &t)) {
                    if (!strcmp(profile, "desktop"))
                        fail_msg("desktop: no coopmat tile for %u x %u", sizes[i], sizes[j]);
                    continue;
                }
                const uint32_t threads = t.warps_m * t.warps_n * t.subgroup;
                const uint32_t fm = t.bm / (t.warps_m * 16), fn = t.bn / (t.warps_n * 16);
                const uint32_t groups = (t.bm * t.bk / 8 + threads - 1) / threads +
                                        (t.bn * t.bk / 8 + threads - 1) / threads;
                const uint32_t live = vka_matmul_coopmat_live_values(t.subgroup, fm, fn, groups);
                if (live > budget)
                    fail_msg("%s: coopmat %ux%ux%u holds %u live values > %u", profile, t.bm,
                             t.bn, t.bk, live, budget);
                assert_true(threads <= info.max_workgroup_invocations);
                assert_true(vka_matmul_coopmat_shared_bytes(&t) <= info.max_shared_memory);
                assert_true(fm >= 1 && fn >= 1 && t.bk % 16 == 0 && t.subgroup == 32);
            }
    }
    vkattn_context_info varying = profile_info("desktop");
    varying.min_subgroup_size = 8, varying.max_subgroup_size = 64;
    vka_coopmat_tiles t;
    assert_false(vka_matmul_coopmat_tiles(&varying, 4096, 4096, false, &t));
    /* the emulation's warps are 32 invocations on any subgroup size */
    assert_true(vka_matmul_coopmat_tiles(&varying, 4096, 4096, true, &t));
    assert_true(t.subgroup == 32 && t.bm == 128 && t.bn == 128);
    varying.subgroup_size = varying.min_subgroup_size = varying.max_subgroup_size = 4;
    assert_true(vka_matmul_coopmat_tiles(&varying, 100, 100, true, &t));
    assert_true(t.subgroup == 32 && t.bm == 64 && t.bn == 64);
    assert_false(vka_matmul_coopmat_tiles(&varying, 100, 100, false, &t));
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

/* The cooperative-matrix fused kernel (flash_coopmat_body.glsl): every dk
 * up to 256 and dv up to 128 gets tiles on desktop, within the budget, the
 * shared memory and the invocations, keys per tile a multiple of 16; none
 * past those widths, under the CPU tuning or with 4 storage buffers
 * (mobile-min). At d = 128 the 48 KiB of the H100 take 4 warps of 16 keys,
 * at d = 64 4 warps of 32 (the choice the kernel's comment describes). */
static void test_flash_coopmat_tiles(void **state)
{
    (void)state;
    static const uint32_t widths[] = {1, 8, 15, 16, 17, 40, 64, 65, 96, 127, 128, 129, 200, 256};
    const size_t nw = sizeof widths / sizeof widths[0];
    for (size_t p = 0; p < N_PROFILES; p++) {
        vkattn_context_info info = profile_info(profiles[p]);
        const uint32_t budget = vka_register_budget(&info);
        for (size_t i = 0; i < nw; i++)
            for (size_t j = 0; j < nw; j++) {
                const uint32_t dk = widths[i], dv = widths[j];
                vka_flash_coopmat_tiles t;
                const bool ok = vka_flash_coopmat_choose_tiles(&info, dk, dv, &t);
                if (!strcmp(profiles[p], "mobile-min") || dv > 128) {
                    assert_false(ok);
                    continue;
                }
                if (!ok) {
                    if (!strcmp(profiles[p], "desktop"))
                        fail_msg("desktop: no flash_coopmat tile for dk %u dv %u", dk, dv);
                    continue;
                }
                const uint32_t live = vka_flash_coopmat_live_values(t.bc, dv);
                if (live > budget)
                    fail_msg("%s: flash_coopmat %u warps, %u keys at dv %u holds %u live values "
                             "> %u",
                             profiles[p], t.warps, t.bc, dv, live, budget);
                assert_true(vka_flash_coopmat_shared_bytes(&t, dk, dv) <= info.max_shared_memory);
                assert_true(32 * t.warps <= info.max_workgroup_invocations);
                assert_true(t.bc % 16 == 0 && t.warps >= 1);
            }
    }
    vkattn_context_info info = profile_info("desktop");
    vka_flash_coopmat_tiles t;
    assert_true(vka_flash_coopmat_choose_tiles(&info, 128, 128, &t));
    assert_true(t.warps == 4 && t.bc == 16);
    assert_true(vka_flash_coopmat_choose_tiles(&info, 64, 64, &t));
    assert_true(t.warps == 4 && t.bc == 32);
    assert_false(vka_flash_coopmat_choose_tiles(&info, 257, 64, &t));
    info.cpu_tuning = true;
    assert_false(vka_flash_coopmat_choose_tiles(&info, 64, 64, &t));
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

/* The GPU-tuning fused backward (ops/flash_backward_gpu_tiles.h): for every
 * pair of widths up to 256, under every profile, with and without shuffles,
 * each kernel keeps within the budget with the fewest lanes that do, the
 * shared memory fits min(maxComputeSharedMemorySize, 32 KiB) (16 KiB under
 * mobile-min), and shuffles are used only where a group's lanes fit the
 * smallest subgroup. */
static void check_flash_backward(const vkattn_context_info *info, const char *name, bool sg,
                                 uint32_t dk, uint32_t dv)
{
    const uint32_t budget = vka_register_budget(info);
    const uint64_t shared = info->max_shared_memory < 32768 ? info->max_shared_memory : 32768;
    vka_fb_gpu_tiles t;
    if (!vka_flash_backward_gpu_choose(info, sg, dk, dv, &t))
        fail_msg("%s: no flash_backward tiles for dk %u dv %u", name, dk, dv);
    const uint32_t kv = vka_flash_backward_kv_live_values(t.kv_lanes, dk, dv);
    const uint32_t q = vka_flash_backward_q_live_values(t.q_lanes, dk, dv);
    if (kv > budget || q > budget)
        fail_msg("%s dk %u dv %u: flash_backward kv %u, q %u live values > %u", name, dk, dv, kv,
                 q, budget);
    if ((t.kv_lanes > 1 && vka_flash_backward_kv_live_values(t.kv_lanes / 2, dk, dv) <= budget) ||
        (t.q_lanes > 1 && vka_flash_backward_q_live_values(t.q_lanes / 2, dk, dv) <= budget))
        fail_msg("%s dk %u dv %u: lanes %u, %u not the fewest", name, dk, dv, t.kv_lanes,
                 t.q_lanes);
    assert_true(vka_flash_backward_stats_live_values() <= budget);
    assert_true(vka_flash_backward_kv_shared(t.kv_wg, t.kv_lanes, t.kv_rows, t.kv_sg, dk, dv) <=
                shared);
    assert_true(vka_flash_backward_q_shared(t.q_wg, t.q_lanes, t.q_keys, t.q_sg, dk, dv) <= shared);
    assert_true(vka_flash_backward_stats_shared(t.st_wg, t.st_lanes, t.st_sg) <= shared);
    assert_true(t.kv_wg % t.kv_lanes == 0 && t.q_wg % t.q_lanes == 0 && t.st_wg % t.st_lanes == 0);
    assert_true(t.kv_rows && t.kv_rows % 4 == 0 && t.q_keys && t.q_keys % 4 == 0);
    assert_true(t.kv_wg <= info->max_workgroup_invocations);
    assert_true(!t.kv_sg || (sg && t.kv_lanes <= info->min_subgroup_size));
    assert_true(!t.q_sg || (sg && t.q_lanes <= info->min_subgroup_size));
    assert_true(!t.st_sg || (sg && t.st_lanes <= info->min_subgroup_size));
}

static void test_flash_backward_tiles(void **state)
{
    (void)state;
    for (size_t p = 0; p < N_PROFILES; p++) {
        vkattn_context_info info = profile_info(profiles[p]);
        for (int sg = 0; sg < 2; sg++)
            for (uint32_t dk = 1; dk <= 256; dk++)
                for (uint32_t dv = 1; dv <= 256; dv += dk % 7 ? 17 : 1)
                    check_flash_backward(&info, profiles[p], sg, dk, dv);
    }
    vka_fb_gpu_tiles t;
    vkattn_context_info info = profile_info("desktop");
    assert_false(vka_flash_backward_gpu_choose(&info, true, 257, 64, &t));
    /* The counts the shaders' header comments state, and the tiles behind
     * docs/TRAINING.md's table. */
    assert_int_equal(vka_flash_backward_kv_live_values(4, 64, 64), 104);
    assert_int_equal(vka_flash_backward_q_live_values(4, 64, 64), 82);
    assert_int_equal(vka_flash_backward_kv_live_values(32, 128, 128), 56);
    assert_int_equal(vka_flash_backward_q_live_values(16, 128, 128), 58);
    assert_int_equal(vka_flash_backward_stats_live_values(), 23);
    static const uint32_t d[3] = {64, 128, 256}, lanes[3] = {4, 8, 16}, tile[3] = {32, 16, 8};
    for (int i = 0; i < 3; i++) {
        assert_true(vka_flash_backward_gpu_choose(&info, true, d[i], d[i], &t));
        assert_int_equal(t.kv_lanes, lanes[i]), assert_int_equal(t.q_lanes, lanes[i]);
        assert_int_equal(t.kv_rows, tile[i]), assert_int_equal(t.q_keys, tile[i]);
        assert_true(t.kv_sg && t.q_sg); /* within the 32-wide subgroup */
    }
    info = profile_info("mali");
    assert_true(vka_flash_backward_gpu_choose(&info, true, 128, 128, &t));
    assert_int_equal(t.kv_lanes, 32), assert_int_equal(t.q_lanes, 16);
}

/* The prepared variants of the sweep (src/ops/variants.h): wherever one is
 * taken, under every profile and width, its tiles keep to the budget, the
 * workgroup limit and the shared memory; indices 0 and count + 1 are none;
 * on the desktop profile at the sweep's target widths (d = 128) every variant
 * fits but the cooperative-matrix fused kernel's 4 x 32 and 8 x 16 (over 48
 * KiB of shared memory there). */
static void test_variants(void **state)
{
    (void)state;
    static const uint32_t widths[] = {8, 64, 128, 256};
    for (size_t i = 0; i < N_PROFILES; i++) {
        const vkattn_context_info info = profile_info(profiles[i]);
        const uint32_t budget = vka_register_budget(&info);
        const uint32_t wg = info.max_workgroup_invocations < info.max_workgroup_size[0]
                                ? info.max_workgroup_invocations
                                : info.max_workgroup_size[0];
        const bool desktop = !strcmp(profiles[i], "desktop");
        for (uint32_t f = 0; f < VKATTN_VARIANT_FAMILIES; f++) {
            vka_matmul_tiles mt;
            vka_coopmat_tiles ct;
            vka_flash_tiled ft;
            vka_flash_coopmat_tiles fc;
            vka_fb_gpu_tiles fb;
            const uint32_t n = vka_variant_count(f);
            assert_true(n >= 4 && n <= 8);
            assert_non_null(vka_variant_family_name(f));
            assert_false(vka_variant_matmul_gpu(&info, 0, &mt));
            assert_false(vka_variant_flash_tiled(&info, n + 1, true, 64, 64, &ft));
            for (uint32_t v = 1; v <= n; v++) {
                if (f == VKATTN_VARIANT_MATMUL && vka_variant_matmul_gpu(&info, v, &mt)) {
                    assert_true(vka_matmul_gpu_live_values(mt.bm, mt.bn, mt.bk, mt.tm, mt.tn) <=
                                budget);
                    assert_true(vka_matmul_tile_threads(&mt) <= wg);
                    assert_true(2 * vka_matmul_tile_shared_bytes(&mt) <= info.max_shared_memory);
                } else if (f == VKATTN_VARIANT_MATMUL) {
                    assert_false(desktop);
                }
                for (int emu = 0; f == VKATTN_VARIANT_MATMUL_COOPMAT && emu < 2; emu++) {
                    if (!vka_variant_matmul_coopmat(&info, v, emu, &ct)) {
                        assert_false(desktop);
                        continue;
                    }
                    const uint32_t threads = ct.warps_m * ct.warps_n * ct.subgroup;
                    const uint32_t groups = (ct.bm * ct.bk / 8 + threads - 1) / threads +
                                            (ct.bn * ct.bk / 8 + threads - 1) / threads;
                    assert_true(vka_matmul_coopmat_live_values(ct.subgroup,
                                                               ct.bm / (ct.warps_m * 16),
                                                               ct.bn / (ct.warps_n * 16),
                                                               groups) <= budget);
                    assert_true(threads <= wg);
                    assert_true(vka_matmul_coopmat_shared_bytes(&ct) <= info.max_shared_memory);
                }
                for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
                    const uint32_t d = widths[w];
                    if (f == VKATTN_VARIANT_FLASH) {
                        const bool ok = vka_variant_flash_tiled(&info, v, true, d, d, &ft);
                        if (ok) {
                            assert_true(vka_flash_tiled_live_values(ft.lanes, ft.bc, d, d) <=
                                        budget);
                            assert_true(ft.wg <= wg);
                            assert_true(vka_flash_tiled_shared_bytes(&ft, d, d) <=
                                        info.max_shared_memory);
                        }
                        assert_true(ok || !desktop || d != 128);
                    }
                    if (f == VKATTN_VARIANT_FLASH_COOPMAT) {
                        const bool ok = vka_variant_flash_coopmat(&info, v, d, d, &fc);
                        if (ok) {
                            assert_true(vka_flash_coopmat_live_values(fc.bc, d) <= budget);
                            assert_true(32 * fc.warps <= wg);
                            assert_true(vka_flash_coopmat_shared_bytes(&fc, d, d) <=
                                        info.max_shared_memory);
                        }
                        if (desktop && d == 128)
                            assert_int_equal(ok, v != 2 && v != 6);
                        if (d > 128)
                            assert_false(ok);
                    }
                    if (f == VKATTN_VARIANT_FLASH_BACKWARD) {
                        const bool ok = vka_variant_flash_backward(&info, v, true, d, d, &fb);
                        if (ok) {
                            assert_true(vka_flash_backward_kv_live_values(fb.kv_lanes, d, d) <=
                                        budget);
                            assert_true(vka_flash_backward_q_live_values(fb.q_lanes, d, d) <=
                                        budget);
                            assert_true(fb.kv_lanes <= fb.kv_wg && fb.q_lanes <= fb.q_wg);
                            const uint64_t limit = info.max_shared_memory < VKA_FB_SHARED_DESIGN
                                                       ? info.max_shared_memory
                                                       : VKA_FB_SHARED_DESIGN;
                            assert_true(vka_flash_backward_kv_shared(fb.kv_wg, fb.kv_lanes,
                                                                     fb.kv_rows, fb.kv_sg, d,
                                                                     d) <= limit);
                            assert_true(vka_flash_backward_q_shared(fb.q_wg, fb.q_lanes,
                                                                    fb.q_keys, fb.q_sg, d,
                                                                    d) <= limit);
                        }
                        assert_true(ok || !desktop || d != 128);
                    }
                }
            }
        }
    }
    assert_int_equal(vka_variant_count(VKATTN_VARIANT_FAMILIES), 0);
    assert_null(vka_variant_family_name(VKATTN_VARIANT_FAMILIES));
}

/* The tuning table holds the library's own choices only (variant 0) until a
 * GPU run of the sweep adds rows; any device finds a row. */
static void test_tuning_table(void **state)
{
    (void)state;
    static const uint32_t vendors[] = {0x10de, 0x1002, 0x8086, 0x13b5, 0x5143, 0x10005};
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++) {
        const vka_tuning_row *r = vka_tuning_lookup(vendors[i], 32, 49152, 0xf);
        assert_non_null(r);
        for (uint32_t f = 0; f < VKATTN_VARIANT_FAMILIES; f++)
            assert_true(r->variants[f] <= vka_variant_count(f));
    }
    assert_int_equal(vka_tuning_lookup(0x10de, 32, 49152, 0xf)->variants[0], 0);
}

TU_MAIN(NULL, NULL,
    test_budget_by_profile, test_stated_counts, test_matmul_gpu_tiles, test_matmul_coopmat_tiles,
    test_flash_tiled_tiles, test_flash_coopmat_tiles, test_decode_rows, test_flash_backward_tiles,
    test_variants, test_tuning_table)
