/* Access state follows memory, not tensor objects (vkattn/tensor.h):
 *  - views of the same and of overlapping ranges of one app buffer, written
 *    through one and read through another in one command buffer: results match
 *    the reference and synchronization validation stays silent (with state per
 *    tensor object, the read through the other view would get no barrier);
 *  - an upload into a tensor that a submitted, unfinished app command buffer
 *    reads goes through the queue instead of writing the mapping under it;
 *  - the hand-over functions check their arguments;
 *  - queue-family ownership transfers record vkattn's halves (on a fake
 *    second family: lavapipe has one). */
#include "app_device.h"
#include "op_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MM_BOUND 2e-5 /* matmul, max-normalized relative error */

static vkattn_tensor *wrap(vkattn_context *ctx, VkBuffer buffer, uint64_t first, uint64_t count)
{
    vkattn_tensor *t;
    const vkattn_tensor_desc d = {.rank = 1, .dims = {(uint32_t)count}};
    const vkattn_buffer_view view = {.buffer = buffer, .offset = first * sizeof(float)};
    TH_OK(ctx, vkattn_tensor_wrap(ctx, &d, &view, &t));
    return t;
}

static void test_overlapping_views(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    /* K floats: a multiple of the offset alignment, so views may start at K */
    uint32_t K = 64;
    while (K * sizeof(float) % info.min_storage_buffer_offset_alignment)
        K *= 2;
    const uint32_t k1 = 5, n2 = 3;

    ad_buffer shared;
    ad_buffer_create(&app, 3 * K * sizeof(float),
                     VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                     false, &shared);
    /* P and P2: the same bytes [0, 2K); Q: [K, 3K), half over P; R: [2K, 3K) */
    vkattn_tensor *P = wrap(ctx, shared.buffer, 0, 2 * K), *Q = wrap(ctx, shared.buffer, K, 2 * K);
    vkattn_tensor *P2 = wrap(ctx, shared.buffer, 0, 2 * K), *R = wrap(ctx, shared.buffer, 2 * K, K);

    float *a1 = tu_floats(2 * k1), *b1 = tu_floats(k1 * K), *a3 = tu_floats(2 * k1);
    float *b3 = tu_floats(k1 * K), *b2 = tu_floats(K * n2), *r = tu_floats(K);
    tu_fill_uniform(a1, 2 * k1, -1, 1), tu_fill_uniform(b1, k1 * K, -1, 1);
    tu_fill_uniform(a3, 2 * k1, -1, 1), tu_fill_uniform(b3, k1 * K, -1, 1);
    tu_fill_uniform(b2, K * n2, -1, 1), tu_fill_uniform(r, K, -1, 1);
    TH_OK(ctx, vkattn_tensor_upload(R, r, 0, K));
    vkattn_tensor *ta1 = th_tensor(ctx, 2 * k1, a1), *tb1 = th_tensor(ctx, k1 * K, b1);
    vkattn_tensor *ta3 = th_tensor(ctx, 2 * k1, a3), *tb3 = th_tensor(ctx, k1 * K, b3);
    vkattn_tensor *tb2 = th_tensor(ctx, K * n2, b2);
    vkattn_tensor *out2 = th_tensor(ctx, 2 * n2, NULL), *out4 = th_tensor(ctx, 2 * n2, NULL);

    /* P = a1 b1; out2 = Q b2 (RAW through another view); P2 = a3 b3 (WAR
     * against that read, WAW against P's write); out4 = Q b2 again */
    const vkattn_matmul_params p1 = {.m = 2, .n = K, .k = k1}, p2 = {.m = 2, .n = n2, .k = K};
    VkCommandBuffer cmd = ad_begin(&app, 0);
    const vkattn_matmul_io io1 = {.a = ta1, .b = tb1, .c = P}, io2 = {.a = Q, .b = tb2, .c = out2};
    const vkattn_matmul_io io3 = {.a = ta3, .b = tb3, .c = P2}, io4 = {.a = Q, .b = tb2, .c = out4};
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p1, &io1));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p2, &io2));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p1, &io3));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p2, &io4));
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    ad_submit(&app, cmd, VK_NULL_HANDLE);
    assert_int_equal(vkQueueWaitIdle(app.queue), VK_SUCCESS);

    /* the reference: Q's first half is P's second row, its second half R */
    float *pm = tu_floats(2 * K), *q = tu_floats(2 * K), *ref = tu_floats(2 * n2);
    const float *as[2] = {a1, a3}, *bs[2] = {b1, b3};
    vkattn_tensor *outs[2] = {out2, out4};
    for (int i = 0; i < 2; i++) {
        TH_OK(ctx, vkattn_reference_matmul(&p1, NULL, as[i], bs[i], NULL, pm));
        memcpy(q, pm + K, K * sizeof(float));
        memcpy(q + K, r, K * sizeof(float));
        TH_OK(ctx, vkattn_reference_matmul(&p2, NULL, q, b2, NULL, ref));
        float *got = th_download(outs[i], 2 * n2);
        const char *what = i ? "read after the rewrite" : "read through Q";
        TU_ASSERT_CLOSE(got, ref, 2 * n2, MM_BOUND, what);
        free(got);
    }
    /* and the bytes themselves, through the view that did not write them */
    float *got = th_download(P, 2 * K);
    TU_ASSERT_CLOSE(got, pm, 2 * K, MM_BOUND, "P2's result read through P");
    free(got);

    vkattn_tensor *ts[] = {P, Q, P2, R, ta1, tb1, ta3, tb3, tb2, out2, out4};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    ad_buffer_destroy(&app, &shared);
    ad_close(&app);
    free(a1), free(b1), free(a3), free(b3), free(b2), free(r), free(pm), free(q), free(ref);
}

/* The app submits a matmul reading `a` and, without waiting, uploads new data
 * into `a`: the upload must not land under the running matmul. */
static void test_upload_while_in_flight(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;
    const uint32_t m = 192, n = 192, k = 192;
    float *a = tu_floats(m * k), *a2 = tu_floats(m * k), *b = tu_floats(k * n);
    float *ref = tu_floats(m * n);
    tu_fill_uniform(a, m * k, -1, 1), tu_fill_uniform(b, k * n, -1, 1);
    tu_fill_uniform(a2, m * k, 2, 3); /* far from a: a torn read shows */
    const vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, ref));
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL);

    VkCommandBuffer cmd = ad_begin(&app, 0);
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &(vkattn_matmul_io){.a = ta, .b = tb, .c = tc}));
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    ad_submit(&app, cmd, VK_NULL_HANDLE);
    TH_OK(ctx, vkattn_tensor_upload(ta, a2, 0, m * k)); /* no wait before it */
    assert_int_equal(vkQueueWaitIdle(app.queue), VK_SUCCESS);

    float *got = th_download(tc, m * n);
    TU_ASSERT_CLOSE(got, ref, m * n, MM_BOUND, "matmul of the data before the upload");
    free(got);
    got = th_download(ta, m * k);
    TU_ASSERT_CLOSE(got, a2, m * k, 0, "the uploaded data");
    free(got);

    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    ad_close(&app);
    free(a), free(a2), free(b), free(ref);
}

static void test_hand_over_arguments(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;
    vkattn_tensor *t = th_tensor(ctx, 16, NULL);
    VkCommandBuffer cmd = ad_begin(&app, 0);
    const VkPipelineStageFlags xfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
    const uint32_t none = VK_QUEUE_FAMILY_IGNORED;
    th_expect_invalid(vkattn_tensor_release(NULL, cmd, xfer, 0, none), "t");
    th_expect_invalid(vkattn_tensor_release(t, VK_NULL_HANDLE, xfer, 0, none), "cmd");
    th_expect_invalid(vkattn_tensor_release(t, cmd, 0, 0, none), "dst_stage");
    th_expect_invalid(vkattn_tensor_acquire(NULL, cmd, xfer, 0, none), "t");
    th_expect_invalid(vkattn_tensor_acquire(t, VK_NULL_HANDLE, xfer, 0, none), "cmd");
    th_expect_invalid(vkattn_tensor_acquire(t, cmd, 0, 0, none), "src_stage");
    /* a family past the device's count (nothing recorded) */
    uint32_t n_families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(app.physical_device, &n_families, NULL);
    const unsigned before = ad_stats.commands;
    th_expect_invalid(vkattn_tensor_release(t, cmd, xfer, 0, n_families), "dst_family");
    th_expect_invalid(vkattn_tensor_acquire(t, cmd, xfer, 0, n_families), "src_family");
    th_expect_invalid(vkattn_tensor_release(t, cmd, xfer, 0, VK_QUEUE_FAMILY_EXTERNAL), "dst_family");
    assert_int_equal(ad_stats.commands, before);

    /* a proper pair: vkattn's fill, the app's copy out, vkattn's fill again */
    ad_buffer dst;
    ad_buffer_create(&app, 16 * sizeof(float), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true, &dst);
    TH_OK(ctx, vkattn_tensor_release(t, cmd, xfer, VK_ACCESS_TRANSFER_READ_BIT, none));
    VkBufferCopy c = {.srcOffset = vkattn_tensor_get_info(t).buffer.offset, .size = 16 * sizeof(float)};
    vkCmdCopyBuffer(cmd, vkattn_tensor_get_info(t).buffer.buffer, dst.buffer, 1, &c);
    ad_barrier(cmd, dst.buffer, xfer, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
               VK_ACCESS_HOST_READ_BIT);
    TH_OK(ctx, vkattn_tensor_acquire(t, cmd, xfer, VK_ACCESS_TRANSFER_READ_BIT, none));
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    ad_submit(&app, cmd, VK_NULL_HANDLE);
    assert_int_equal(vkQueueWaitIdle(app.queue), VK_SUCCESS);
    for (int i = 0; i < 16; i++)
        assert_true(isnan(((const float *)dst.mapped)[i])); /* th_tensor poisoned it */
    TH_OK(ctx, vkattn_tensor_fill(t, 1.5f));
    float *got = th_download(t, 16);
    for (int i = 0; i < 16; i++)
        assert_true(got[i] == 1.5f);
    free(got);
    ad_buffer_destroy(&app, &dst);
    vkattn_tensor_destroy(t);
    ad_close(&app);
}

/* The barrier vkattn_tensor_release records in a new command buffer. */
static VkBufferMemoryBarrier release_barrier(ad_app *app, vkattn_tensor *t, uint32_t family,
                                             VkPipelineStageFlags *src, VkPipelineStageFlags *dst)
{
    VkCommandBuffer cmd = ad_begin(app, 0);
    const unsigned before = ad_stats.commands;
    TH_OK(app->ctx, vkattn_tensor_release(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                          VK_ACCESS_TRANSFER_READ_BIT, family));
    assert_int_equal(ad_stats.commands, before + 1);
    assert_int_equal(ad_stats.last_n_buffer, 1);
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    *src = ad_stats.last_src_stages, *dst = ad_stats.last_dst_stages;
    return ad_stats.last_buffer;
}

/* Queue-family ownership transfer through the hand-over pair. lavapipe has
 * one family with one queue, so no transfer can run: vkattn is shown one more
 * (fake) family, and what it records for it is checked as recorded, then run
 * with the family indices cleared (app_device.h), under validation:
 *  - the context's own family is the plain hand-over, barrier for barrier;
 *  - a release to the other family carries (context's, other) and the
 *    tensor's range from vkattn's last write; the acquire carries (other,
 *    context's) and makes the bytes visible to vkattn's next command, whose
 *    result is checked against the CPU reference. */
static void test_ownership_transfer(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    const ad_options o = {.extra_family = true};
    ad_open_with(own, &o, &app);
    vkattn_context *ctx = app.ctx;
    uint32_t other = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(app.physical_device, &other, NULL); /* the fake */
    const uint32_t m = 3, n = 5, k = 7;
    float *a = tu_floats(m * k), *b = tu_floats(k * n), *c = tu_floats(m * n);
    float *b2 = tu_floats(n * 2), *ref = tu_floats(m * 2);
    tu_fill_uniform(a, m * k, -1, 1), tu_fill_uniform(b, k * n, -1, 1);
    tu_fill_uniform(b2, n * 2, -1, 1);
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tb2 = th_tensor(ctx, n * 2, b2);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL), *out = th_tensor(ctx, m * 2, NULL);

    /* same family = none named */
    VkPipelineStageFlags src_none, dst_none, src_same, dst_same;
    VkBufferMemoryBarrier none = release_barrier(&app, tc, VK_QUEUE_FAMILY_IGNORED, &src_none,
                                                 &dst_none);
    VkBufferMemoryBarrier same = release_barrier(&app, tc, app.family, &src_same, &dst_same);
    assert_int_equal(src_same, src_none);
    assert_int_equal(dst_same, dst_none);
    assert_memory_equal(&same, &none, sizeof same);
    assert_int_equal(ad_stats.family_barriers, 0);
    VkCommandBuffer cmd = ad_begin(&app, 0);
    unsigned before = ad_stats.commands;
    TH_OK(ctx, vkattn_tensor_acquire(tc, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, app.family));
    assert_int_equal(ad_stats.commands, before); /* the plain acquire records nothing */

    /* c = a b; release c to the other family; acquire it back; out = c b2 */
    const vkattn_matmul_params p1 = {.m = m, .n = n, .k = k}, p2 = {.m = m, .n = 2, .k = n};
    const vkattn_matmul_io io1 = {.a = ta, .b = tb, .c = tc}, io2 = {.a = tc, .b = tb2, .c = out};
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p1, &io1));
    const vkattn_buffer_view v = vkattn_tensor_get_info(tc).buffer;
    TH_OK(ctx, vkattn_tensor_release(tc, cmd, VK_PIPELINE_STAGE_VERTEX_SHADER_BIT,
                                     VK_ACCESS_SHADER_READ_BIT, other));
    VkBufferMemoryBarrier rel = ad_stats.last_buffer;
    assert_int_equal(ad_stats.last_n_buffer, 1);
    assert_int_equal(rel.srcQueueFamilyIndex, app.family);
    assert_int_equal(rel.dstQueueFamilyIndex, other);
    assert_true(rel.buffer == v.buffer && rel.offset == v.offset && rel.size == v.size);
    assert_true(rel.srcAccessMask & VK_ACCESS_SHADER_WRITE_BIT); /* the matmul's write */
    assert_true(ad_stats.last_src_stages & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    assert_int_equal(ad_stats.last_dst_stages, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    TH_OK(ctx, vkattn_tensor_acquire(tc, cmd, VK_PIPELINE_STAGE_VERTEX_SHADER_BIT,
                                     VK_ACCESS_SHADER_READ_BIT, other));
    VkBufferMemoryBarrier acq = ad_stats.last_buffer;
    assert_int_equal(ad_stats.last_n_buffer, 1);
    assert_int_equal(acq.srcQueueFamilyIndex, other);
    assert_int_equal(acq.dstQueueFamilyIndex, app.family);
    assert_true(acq.buffer == v.buffer && acq.offset == v.offset && acq.size == v.size);
    assert_true((acq.dstAccessMask & VK_ACCESS_SHADER_READ_BIT) &&
                (acq.dstAccessMask & VK_ACCESS_SHADER_WRITE_BIT));
    assert_true(ad_stats.last_dst_stages & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    assert_int_equal(ad_stats.family_barriers, 2);
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p2, &io2));
    assert_int_equal(ad_stats.family_barriers, 2);
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    ad_submit(&app, cmd, VK_NULL_HANDLE);
    assert_int_equal(vkQueueWaitIdle(app.queue), VK_SUCCESS);
    TH_OK(ctx, vkattn_reference_matmul(&p1, NULL, a, b, NULL, c));
    TH_OK(ctx, vkattn_reference_matmul(&p2, NULL, c, b2, NULL, ref));
    float *got = th_download(out, m * 2);
    TU_ASSERT_CLOSE(got, ref, m * 2, MM_BOUND, "read after the acquire");
    free(got);

    vkattn_tensor *ts[] = {ta, tb, tb2, tc, out};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    ad_close(&app);
    free(a), free(b), free(c), free(b2), free(ref);
}

TU_MAIN(th_setup, th_teardown,
    test_overlapping_views, test_upload_while_in_flight, test_hand_over_arguments,
    test_ownership_transfer)
