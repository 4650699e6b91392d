/* Contexts both ways in: vkattn's own device (default, by index, by name) and
 * an app-created instance/device/queue imported, with the app's own
 * validation messenger. Plus tensors over app buffers, partial uploads and
 * downloads, argument checks of the context, tensor and timer API, and a
 * layer's weights reaching a command buffer the app replays. */
#include "app_device.h"

#include <vkattn/advanced.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_info(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_true(strlen(info.device_name) > 0);
    assert_true(info.subgroup_size >= 1);
    assert_true(info.max_shared_memory >= 16384);
    assert_true(info.max_storage_buffer_range >= 65536);
    assert_true(info.max_workgroup_invocations >= 128);
    assert_false(info.imported);
    assert_true(info.validation || getenv("VKATTN_TEST_NO_VALIDATION"));
    assert_int_equal(vkattn_context_get_info(NULL, &info), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_context_get_info(ctx, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
}

static void test_choose_device(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_context_info info;
    vkattn_context_get_info(ctx, &info);
    uint32_t n = 0;
    TH_OK(ctx, vkattn_enumerate_devices(NULL, &n));
    assert_true(n >= 1);
    vkattn_device_info *devs = calloc(n, sizeof *devs);
    TH_OK(ctx, vkattn_enumerate_devices(devs, &n));
    uint32_t index = n;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(devs[i].name, info.device_name) == 0)
            index = i;
    assert_true(index < n);

    vkattn_context *by_index = NULL, *by_name = NULL;
    vkattn_context_desc d = {.use_device_index = true, .device_index = index};
    TH_OK(ctx, vkattn_context_create(&d, &by_index));
    vkattn_context_desc dn = {.device_name = devs[index].name};
    TH_OK(ctx, vkattn_context_create(&dn, &by_name));
    vkattn_context_destroy(by_index);
    vkattn_context_destroy(by_name);

    vkattn_context *none = (vkattn_context *)1;
    vkattn_context_desc bad = {.use_device_index = true, .device_index = n + 5};
    assert_int_equal(vkattn_context_create(&bad, &none), VKATTN_ERROR_NO_DEVICE);
    assert_null(none);
    assert_non_null(strstr(vkattn_last_error(), "device_index"));
    vkattn_context_desc no_match = {.device_name = "no such device name here"};
    assert_int_equal(vkattn_context_create(&no_match, &none), VKATTN_ERROR_NO_DEVICE);
    assert_int_equal(vkattn_context_create(NULL, &none), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_context_create(&d, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    const vkattn_context_advanced bad_tuning = {.tuning = (vkattn_tuning)7};
    vkattn_context_desc dt = {.advanced = &bad_tuning};
    assert_int_equal(vkattn_context_create(&dt, &none), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(none);
    assert_non_null(strstr(vkattn_last_error(), "advanced->tuning"));
    free(devs);
}

static void test_tensors(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor_desc desc = {.rank = 3, .dims = {2, 3, 5}};
    vkattn_tensor *t = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &desc, &t));
    assert_int_equal(vkattn_tensor_get_info(t).count, 30);
    assert_int_equal(vkattn_tensor_get_info(t).desc.rank, 3);
    assert_int_equal(vkattn_tensor_get_info(t).desc.dims[2], 5);
    assert_int_equal(vkattn_tensor_get_info(t).desc.dims[3], 0);

    float data[30], back[30];
    tu_fill_uniform(data, 30, -5, 5);
    TH_OK(ctx, vkattn_tensor_fill(t, 7.0f));
    TH_OK(ctx, vkattn_tensor_upload(t, data + 10, 10, 15)); /* a middle range */
    TH_OK(ctx, vkattn_tensor_download(t, back, 0, 30));
    for (int i = 0; i < 30; i++)
        assert_true(back[i] == (i >= 10 && i < 25 ? data[i] : 7.0f));
    float part[4];
    TH_OK(ctx, vkattn_tensor_download(t, part, 12, 4));
    assert_memory_equal(part, data + 12, sizeof part);

    assert_int_equal(vkattn_tensor_upload(t, data, 20, 11), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_tensor_download(t, NULL, 0, 1), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_tensor_upload(NULL, data, 0, 1), VKATTN_ERROR_INVALID_ARGUMENT);

    vkattn_tensor *bad = (vkattn_tensor *)1;
    vkattn_tensor_desc zero = {.rank = 2, .dims = {3, 0}};
    assert_int_equal(vkattn_tensor_create(ctx, &zero, &bad), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(bad);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "dims[1] is 0"));
    vkattn_tensor_desc rank5 = {.rank = 5, .dims = {1, 1, 1, 1}};
    assert_int_equal(vkattn_tensor_create(ctx, &rank5, &bad), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_tensor_desc huge = {.rank = 4, .dims = {65536, 65536, 65536, 65536}};
    assert_int_equal(vkattn_tensor_create(ctx, &huge, &bad), VKATTN_ERROR_SIZE_OVERFLOW);
    vkattn_context_info info;
    vkattn_context_get_info(ctx, &info);
    vkattn_tensor_desc big = {.rank = 2, .dims = {(uint32_t)(info.max_storage_buffer_range / 4096) + 1, 1024}};
    assert_int_equal(vkattn_tensor_create(ctx, &big, &bad), VKATTN_ERROR_DEVICE_LIMIT);

    /* a view of part of an existing buffer: writes land in the viewed range */
    vkattn_buffer_view whole = vkattn_tensor_get_info(t).buffer;
    uint32_t align = info.min_storage_buffer_offset_alignment ? info.min_storage_buffer_offset_alignment : 4;
    if (align <= 16) {
        vkattn_buffer_view sub = {.buffer = whole.buffer, .offset = whole.offset + 16, .size = 16};
        vkattn_tensor_desc four = {.rank = 1, .dims = {4}};
        vkattn_tensor *view = NULL;
        TH_OK(ctx, vkattn_tensor_wrap(ctx, &four, &sub, &view));
        float ones[4] = {1, 2, 3, 4};
        TH_OK(ctx, vkattn_tensor_upload(view, ones, 0, 4));
        TH_OK(ctx, vkattn_tensor_download(t, back, 0, 30));
        assert_memory_equal(back + 4, ones, sizeof ones);
        vkattn_tensor_destroy(view);
        sub.size = 8;
        assert_int_equal(vkattn_tensor_wrap(ctx, &four, &sub, &bad), VKATTN_ERROR_INVALID_ARGUMENT);
    }
    vkattn_tensor_destroy(t);
    vkattn_tensor_destroy(NULL);

    uint64_t current = 0, peak = 0;
    TH_OK(ctx, vkattn_context_memory_usage(ctx, &current, &peak));
    assert_true(peak >= current);
    th_assert_validation_clean();
}

static void test_timer_and_commands(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_timer *timer = NULL;
    assert_int_equal(vkattn_timer_create(ctx, 0, &timer), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    if (!info.timestamps) { /* a profile without them (mobile-min): timers say so */
        assert_int_equal(vkattn_timer_create(ctx, 2, &timer), VKATTN_ERROR_UNSUPPORTED);
        assert_null(timer);
        th_assert_validation_clean();
        return;
    }
    TH_OK(ctx, vkattn_timer_create(ctx, 2, &timer));
    VkCommandBuffer cmd, again;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    assert_int_equal(vkattn_context_begin_commands(ctx, &again), VKATTN_ERROR_INVALID_ARGUMENT);
    TH_OK(ctx, vkattn_timer_reset(timer, cmd));
    assert_int_equal(vkattn_timer_mark(timer, cmd, 2), VKATTN_ERROR_INVALID_ARGUMENT);
    TH_OK(ctx, vkattn_timer_mark(timer, cmd, 0));
    TH_OK(ctx, vkattn_timer_mark(timer, cmd, 1));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    assert_int_equal(vkattn_context_submit_and_wait(ctx, cmd), VKATTN_ERROR_INVALID_ARGUMENT);
    double ms = -1;
    TH_OK(ctx, vkattn_timer_elapsed_ms(timer, 0, 1, &ms));
    assert_true(ms >= 0.0 && ms < 1000.0);
    vkattn_timer_destroy(timer);
    th_assert_validation_clean();
}

/* ---- the app's own device, imported ---- */

/* Library DEBUG messages that say a descriptor set was allocated, and the
 * number of cached sets the last one reported. */
static unsigned sets_allocated, sets_cached;

static void count_sets(void *user, vkattn_log_level level, vkattn_log_source source, const char *msg)
{
    (void)user, (void)level;
    const char *at = strstr(msg, "descriptor set allocated (");
    if (source == VKATTN_LOG_SOURCE_LIBRARY && at) {
        sets_allocated++;
        sets_cached = (unsigned)strtoul(at + strlen("descriptor set allocated ("), NULL, 10);
    }
}

/* An app device (app_device.h; with VK_KHR_push_descriptor if `push`, and
 * then saying so in import.enabled_extensions), a context on it logging to
 * count_sets, and a command pool. False, with nothing open, if the device
 * lacks the extension. */
typedef struct imported {
    ad_app app;
    bool push; /* info.push_descriptors */
} imported;

static bool import_open(vkattn_context *own, bool push, imported *im)
{
    *im = (imported){0};
    const ad_options o = {.push_descriptors = push,
                          .log = count_sets,
                          .log_level = VKATTN_LOG_DEBUG};
    if (!ad_open_with(own, &o, &im->app)) {
        assert_true(push); /* the plain device is always possible */
        return false;
    }
    vkattn_context_info info;
    TH_OK(im->app.ctx, vkattn_context_get_info(im->app.ctx, &info));
    assert_true(info.imported);
    /* without the extension: pooled sets; with it, push unless the profile says no */
    if (!push)
        assert_false(info.push_descriptors);
    else if (strcmp(info.profile, "desktop") == 0)
        assert_true(info.push_descriptors);
    im->push = info.push_descriptors;
    return true;
}

/* Submits on the app's queue and waits for it to idle. */
static void app_submit_wait(imported *im, VkCommandBuffer cmd)
{
    ad_submit(&im->app, cmd, VK_NULL_HANDLE);
    assert_int_equal(vkQueueWaitIdle(im->app.queue), VK_SUCCESS);
}

/* The app records vkattn's matmul into its own command buffer, on its queue. */
static void imported_matmul(vkattn_context *own, bool push)
{
    imported im;
    if (!import_open(own, push, &im)) {
        printf("# the device has no %s; the push path is not covered\n",
               VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
        return;
    }
    vkattn_context *ctx = im.app.ctx;
    const uint32_t m = 19, n = 23, k = 29;
    float *a = tu_floats(m * k), *b = tu_floats(k * n), *ref = tu_floats(m * n);
    tu_fill_uniform(a, m * k, -1, 1);
    tu_fill_uniform(b, k * n, -1, 1);
    vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, ref));
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL);

    VkCommandBuffer cmd = ad_begin(&im.app, 0);
    vkattn_matmul_io io = {.a = ta, .b = tb, .c = tc};
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &io));
    vkEndCommandBuffer(cmd);
    app_submit_wait(&im, cmd);

    float *got = th_download(tc, m * n);
    TU_ASSERT_CLOSE(got, ref, m * n, 2e-5, "matmul on the imported device");

    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    ad_close(&im.app);
    free(a), free(b), free(ref), free(got);
}

/* Imported without VK_KHR_push_descriptor: pooled descriptor sets. */
static void test_imported_device(void **state) { imported_matmul(TH_CTX(state), false); }

/* Imported with VK_KHR_push_descriptor named in import.enabled_extensions. */
static void test_imported_push_descriptors(void **state) { imported_matmul(TH_CTX(state), true); }

/* The same op recorded twice into one command buffer, which is then submitted
 * twice with new input in between (a command buffer replayed every frame): the
 * second recording and the replay allocate no descriptor set. */
static void replay(vkattn_context *own, bool push)
{
    imported im;
    if (!import_open(own, push, &im))
        return;
    vkattn_context *ctx = im.app.ctx;
    const uint32_t m = 13, n = 17, k = 11;
    float *a = tu_floats(m * k), *b = tu_floats(k * n), *ref = tu_floats(m * n);
    tu_fill_uniform(a, m * k, -1, 1);
    tu_fill_uniform(b, k * n, -1, 1);
    vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL);
    vkattn_matmul_io io = {.a = ta, .b = tb, .c = tc};

    VkCommandBuffer cmd = ad_begin(&im.app, 0);
    /* what an app replaying a command buffer does: order the previous frame's
     * and the host's writes before this one */
    VkMemoryBarrier all = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         0, 1, &all, 0, NULL, 0, NULL);
    sets_allocated = 0;
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &io));
    const unsigned first = sets_allocated;
    assert_true(im.push ? first == 0 : first >= 1);
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &io));
    assert_int_equal(sets_allocated, first);
    vkEndCommandBuffer(cmd);

    for (int frame = 0; frame < 2; frame++) {
        if (frame) {
            tu_fill_uniform(a, m * k, -2, 2);
            TH_OK(ctx, vkattn_tensor_upload(ta, a, 0, m * k));
        }
        TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, ref));
        app_submit_wait(&im, cmd);
        float *got = th_download(tc, m * n);
        TU_ASSERT_CLOSE(got, ref, m * n, 2e-5, "matmul recorded twice, replayed");
        free(got);
    }
    assert_int_equal(sets_allocated, first);

    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    ad_close(&im.app);
    free(a), free(b), free(ref);
}

static void test_record_twice_and_replay(void **state)
{
    vkattn_context *own = TH_CTX(state);
    replay(own, false);
    replay(own, true);
}

/* Attention's scalars are device weights, like every other layer's: a command
 * buffer recorded once follows set_weights when it is submitted again (dot
 * mode on both SDPA paths, concat mode; a 0 scale is a literal 0). Each frame
 * vs vkattn_reference_attention, bound 1e-4 as tests/gpu/test_attention.c. */
static void test_attention_weights_replay(void **state)
{
    imported im;
    if (!import_open(TH_CTX(state), false, &im))
        return;
    vkattn_context *ctx = im.app.ctx;
    enum { B = 2, TQ = 5, TV = 7, D = 5, NQ = B * TQ * D, NV = B * TV * D };
    float *q = tu_floats(NQ), *k = tu_floats(NV), *v = tu_floats(NV), *ref = tu_floats(NQ);
    tu_fill_uniform(q, NQ, -1, 1);
    tu_fill_uniform(k, NV, -1, 1);
    tu_fill_uniform(v, NV, -1, 1);
    vkattn_tensor *tq = th_tensor(ctx, NQ, q), *tk = th_tensor(ctx, NV, k);
    vkattn_tensor *tv = th_tensor(ctx, NV, v), *tout = th_tensor(ctx, NQ, NULL);
    static const vkattn_attention_weights frames[] = {{0.5f, 1.0f}, {-1.7f, 0.6f}, {0.0f, -2.0f}};
    for (int c = 0; c < 3; c++) {
        const vkattn_attention_desc desc = {
            .query_width = D, .value_width = D, .use_scale = true,
            .score_mode = c == 2 ? VKATTN_SCORE_CONCAT : VKATTN_SCORE_DOT};
        const vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV,
                                        .causal = VKATTN_CAUSAL_TOP_LEFT,
                                        .path = c == 1 ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED};
        vkattn_attention *att;
        TH_OK(ctx, vkattn_attention_create(ctx, &desc, &att));
        TH_OK(ctx, vkattn_attention_set_weights(att, &frames[0]));
        VkCommandBuffer cmd = ad_begin(&im.app, 0);
        VkMemoryBarrier all = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT |
                                                VK_ACCESS_MEMORY_WRITE_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                             VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &all, 0, NULL, 0, NULL);
        const vkattn_layer_io io = {.query = tq, .key = tk, .value = tv, .output = tout};
        TH_OK(ctx, vkattn_attention_record(att, cmd, &call, &io));
        vkEndCommandBuffer(cmd);
        for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
            if (f)
                TH_OK(ctx, vkattn_attention_set_weights(att, &frames[f]));
            vkattn_attention_weights got_w;
            TH_OK(ctx, vkattn_attention_get_weights(att, &got_w));
            assert_true(got_w.scale == frames[f].scale &&
                        got_w.concat_score_weight == frames[f].concat_score_weight);
            const vkattn_layer_host_io hio = {.query = q, .key = k, .value = v, .output = ref};
            TH_OK(ctx, vkattn_reference_attention(&desc, &frames[f], &call, &hio));
            app_submit_wait(&im, cmd);
            float *got = th_download(tout, NQ);
            TU_ASSERT_CLOSE(got, ref, NQ, 1e-4, "attention replayed after set_weights");
            free(got);
        }
        vkattn_attention_destroy(att);
    }
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tk);
    vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tout);
    ad_close(&im.app);
    free(q), free(k), free(v), free(ref);
}

/* Destroying a tensor frees the sets that bind it; a tensor created next (whose
 * VkBuffer handle the driver may well reuse) gets a new set, never the stale
 * one. Another tensor's sets survive. */
static void destroy_and_reuse(vkattn_context *own, bool push)
{
    imported im;
    if (!import_open(own, push, &im))
        return;
    vkattn_context *ctx = im.app.ctx;
    const uint32_t m = 9, n = 21, k = 15;
    float *a = tu_floats(m * k), *b = tu_floats(k * n), *ref = tu_floats(m * n);
    tu_fill_uniform(a, m * k, -1, 1);
    tu_fill_uniform(b, k * n, -1, 1);
    vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL);
    unsigned cached = 0;
    for (int round = 0; round < 3; round++) {
        if (round) {
            vkattn_tensor_destroy(tb);
            tu_fill_uniform(b, k * n, -1, 1);
            tb = th_tensor(ctx, k * n, b);
        }
        vkattn_matmul_io io = {.a = ta, .b = tb, .c = tc};
        sets_allocated = 0;
        TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
        /* a new tensor always needs a new set on the pooled path */
        assert_true(im.push ? sets_allocated == 0 : sets_allocated >= 1);
        /* and the sets of the destroyed one are gone: the cache does not grow */
        if (round == 0)
            cached = sets_cached;
        assert_int_equal(sets_cached, cached);
        TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, ref));
        float *got = th_download(tc, m * n);
        TU_ASSERT_CLOSE(got, ref, m * n, 2e-5, "matmul after destroying and recreating b");
        free(got);
        /* the same call again finds its set */
        sets_allocated = 0;
        TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
        assert_int_equal(sets_allocated, 0);
    }
    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    ad_close(&im.app);
    free(a), free(b), free(ref);
}

static void test_destroy_and_reuse(void **state)
{
    vkattn_context *own = TH_CTX(state);
    destroy_and_reuse(own, false);
    destroy_and_reuse(own, true);
}

/* On the test's own context (push or pooled, per VKATTN_TEST_PROFILE): one
 * command buffer with the same op twice. */
static void test_same_op_twice(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t m = 7, n = 5, k = 33;
    float *a = tu_floats(m * k), *b = tu_floats(k * n), *ref = tu_floats(m * n);
    tu_fill_uniform(a, m * k, -1, 1);
    tu_fill_uniform(b, k * n, -1, 1);
    vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, ref));
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL);
    vkattn_matmul_io io = {.a = ta, .b = tb, .c = tc};
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &io));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &io));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got = th_download(tc, m * n);
    TU_ASSERT_CLOSE(got, ref, m * n, 2e-5, "the same matmul recorded twice");
    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    free(a), free(b), free(ref), free(got);
    th_assert_validation_clean();
}

static void test_import_arguments(void **state)
{
    (void)TH_CTX(state);
    vkattn_context *ctx = (vkattn_context *)1;
    vkattn_context_desc desc = {.import = {.device = (VkDevice)(uintptr_t)1}};
    assert_int_equal(vkattn_context_create(&desc, &ctx), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(vkattn_last_error(), "import.instance"));
    desc.enable_validation = true;
    assert_int_equal(vkattn_context_create(&desc, &ctx), VKATTN_ERROR_INVALID_ARGUMENT);
}

TU_MAIN(th_setup, th_teardown,
    test_info, test_choose_device, test_tensors, test_timer_and_commands, test_imported_device,
    test_imported_push_descriptors, test_record_twice_and_replay, test_destroy_and_reuse,
    test_attention_weights_replay, test_same_op_twice, test_import_arguments)
