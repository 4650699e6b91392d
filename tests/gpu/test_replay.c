/* An app embedding vkattn in its frame loop, on its own device (imported):
 *  - the app's queue lock brackets every vkQueueSubmit vkattn makes;
 *  - one MultiHeadAttention call recorded once, with the app's own copies in and
 *    out around it, submitted 100 times back to back (a ring of 3 frames in
 *    flight, fences only to reuse a ring slot), new inputs every frame: each
 *    frame's output matches vkattn_reference_mha and synchronization validation
 *    stays silent (the replay contract of vkattn/tensor.h).
 * The recording is a secondary command buffer that each frame executes twice:
 * synchronization validation checks hazards between command buffers executed
 * in one primary, while older layers (1.3.239 in CI) do not check hazards
 * between submissions. So the second execution is the replay the validation
 * layer sees; the 100 submissions check results.
 *  - decoding: a KV-cache append and a decode recorded once into the app's
 *    command buffer and submitted step after step, the lengths advancing on
 *    the device, each step checked against vkattn_reference_sdpa_decode;
 *  - the same for one cached MultiHeadAttention step (vkattn_mha_record_cached),
 *    each step checked against the causal vkattn_reference_mha, also with
 *    QK-norm and RoPE (positions from the device lengths). */
#include "app_device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BOUND 2e-5 /* max |got - ref| / max |ref|, as test_mha.c */

static void test_queue_lock(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, true, &app);
    vkattn_context *ctx = app.ctx;
    const uint32_t m = 6, n = 5, k = 7;
    float *a = tu_floats(m * k), *b = tu_floats(k * n), *ref = tu_floats(m * n);
    tu_fill_uniform(a, m * k, -1, 1);
    tu_fill_uniform(b, k * n, -1, 1);
    vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, ref));
    vkattn_tensor *ta = th_tensor(ctx, m * k, a), *tb = th_tensor(ctx, k * n, b);
    vkattn_tensor *tc = th_tensor(ctx, m * n, NULL); /* fill: one submit */
    vkattn_matmul_io io = {.a = ta, .b = tb, .c = tc};
    TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &io));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got = th_download(tc, m * n);
    TU_ASSERT_CLOSE(got, ref, m * n, 2e-5, "matmul on the locked queue");

    /* fill, run and submit_and_wait submit at least once each */
    assert_true(ad_stats.submits_locked >= 3);
    assert_int_equal(ad_stats.submits_unlocked, 0);
    assert_int_equal(ad_stats.locks, ad_stats.unlocks);
    assert_int_equal(ad_stats.locks, ad_stats.submits_locked); /* one pair per submit */
    assert_int_equal(ad_stats.depth, 0);
    assert_int_equal(ad_stats.bad_pairs, 0);

    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    ad_close(&app);
    free(a), free(b), free(ref), free(got);
}

/* A lock without its unlock is refused, naming the missing callback. */
static void lock_only(void *user, uint32_t family, uint32_t index)
{
    (void)user, (void)family, (void)index;
}

static void test_queue_lock_arguments(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context_desc desc = th_context_desc();
    desc.enable_validation = false;
    desc.import = (vkattn_import_desc){.instance = app.instance,
                                       .physical_device = app.physical_device,
                                       .device = app.device,
                                       .queue = app.queue,
                                       .queue_family_index = app.family,
                                       .lock_queue = lock_only};
    vkattn_context *bad = (vkattn_context *)&bad;
    assert_int_equal(vkattn_context_create(&desc, &bad), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(bad);
    assert_non_null(strstr(vkattn_last_error(), "import.unlock_queue"));
    ad_close(&app);
}

/* ------------------------------------------------------------------ replay */

#define FRAMES 100
#define RING 3

typedef struct frame_slot {
    ad_buffer host_in, host_out; /* the host's input and output of one frame */
    VkCommandBuffer cmd; /* host_in -> staging, the recording twice, readback -> host_out */
    VkFence fence;
    float *q, *v, *ref;          /* what this slot's frame computed from */
} frame_slot;

static void test_replay_mha(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;

    const vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 4, .value_dim = 3, .query_width = 8,
                                  .value_width = 6, .output_dim = 5};
    const vkattn_layer_call call = {.batch = 2, .tq = 5, .tv = 7};
    const size_t nq = 2 * 5 * 8, nv = 2 * 7 * 6, nout = 2 * 5 * 5;
    const VkDeviceSize qbytes = nq * sizeof(float), vbytes = nv * sizeof(float);
    const VkDeviceSize obytes = nout * sizeof(float);

    /* weights: Keras layouts */
    const size_t sizes[8] = {8 * 2 * 4, 2 * 4, 6 * 2 * 4, 2 * 4, 6 * 2 * 3, 2 * 3, 2 * 3 * 5, 5};
    float *wa[8];
    for (int i = 0; i < 8; i++) {
        wa[i] = tu_floats(sizes[i]);
        tu_fill_uniform(wa[i], sizes[i], -0.5f, 0.5f);
    }
    const vkattn_mha_weights w = {wa[0], wa[1], wa[2], wa[3], wa[4], wa[5], wa[6], wa[7]};
    vkattn_mha *layer;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));

    /* the app's buffers: query and value where its renderer would keep them,
     * wrapped as tensors; a staging buffer the frame's input lands in */
    const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    const VkBufferUsageFlags xfer =
        VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    ad_buffer qbuf, vbuf, staging, readback;
    ad_buffer_create(&app, qbytes, storage, false, &qbuf);
    ad_buffer_create(&app, vbytes, storage, false, &vbuf);
    ad_buffer_create(&app, qbytes + vbytes, xfer, false, &staging);
    ad_buffer_create(&app, obytes, xfer, false, &readback);
    vkattn_tensor *q, *v, *out;
    const vkattn_tensor_desc qd = {.rank = 3, .dims = {2, 5, 8}};
    const vkattn_tensor_desc vd = {.rank = 3, .dims = {2, 7, 6}};
    const vkattn_tensor_desc od = {.rank = 3, .dims = {2, 5, 5}};
    TH_OK(ctx, vkattn_tensor_wrap(ctx, &qd, &(vkattn_buffer_view){.buffer = qbuf.buffer}, &q));
    TH_OK(ctx, vkattn_tensor_wrap(ctx, &vd, &(vkattn_buffer_view){.buffer = vbuf.buffer}, &v));
    TH_OK(ctx, vkattn_tensor_create(ctx, &od, &out));
    TH_OK(ctx, vkattn_tensor_fill(out, NAN));

    /* Recorded once: the app's copies in, vkattn's layer, the app's copy out.
     * q is handed over with release/acquire, v with the app's own barriers. */
    /* pending in several frames at once: simultaneous use */
    VkCommandBuffer rec = ad_begin_secondary(&app, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
    ad_barrier(rec, staging.buffer, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
               VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    TH_OK(ctx, vkattn_tensor_release(q, rec, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                     VK_ACCESS_TRANSFER_WRITE_BIT, VK_QUEUE_FAMILY_IGNORED));
    /* the previous frame's compute reads of v before this frame's copy (WAR),
     * and its copy into v, made visible to this one (WAW: the write needs the
     * destination access, not only the execution dependency) */
    ad_barrier(rec, vbuf.buffer, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
               VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy cq = {.srcOffset = 0, .dstOffset = 0, .size = qbytes};
    VkBufferCopy cv = {.srcOffset = qbytes, .dstOffset = 0, .size = vbytes};
    vkCmdCopyBuffer(rec, staging.buffer, qbuf.buffer, 1, &cq);
    vkCmdCopyBuffer(rec, staging.buffer, vbuf.buffer, 1, &cv);
    TH_OK(ctx, vkattn_tensor_acquire(q, rec, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                     VK_ACCESS_TRANSFER_WRITE_BIT, VK_QUEUE_FAMILY_IGNORED));
    ad_barrier(rec, vbuf.buffer, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    vkattn_layer_io io = {.query = q, .value = v, .output = out};
    TH_OK(ctx, vkattn_mha_record(layer, rec, &call, &io));
    TH_OK(ctx, vkattn_tensor_release(out, rec, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                     VK_ACCESS_TRANSFER_READ_BIT, VK_QUEUE_FAMILY_IGNORED));
    /* the previous frame's copy into readback and post's read of it */
    ad_barrier(rec, readback.buffer, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
               VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy co = {.srcOffset = vkattn_tensor_get_info(out).buffer.offset, .size = obytes};
    vkCmdCopyBuffer(rec, vkattn_tensor_get_info(out).buffer.buffer, readback.buffer, 1, &co);
    assert_int_equal(vkEndCommandBuffer(rec), VK_SUCCESS);

    frame_slot slots[RING];
    for (int s = 0; s < RING; s++) {
        frame_slot *f = &slots[s];
        ad_buffer_create(&app, qbytes + vbytes, xfer, true, &f->host_in);
        ad_buffer_create(&app, obytes, xfer, true, &f->host_out);
        f->q = tu_floats(nq), f->v = tu_floats(nv), f->ref = tu_floats(nout);
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        assert_int_equal(vkCreateFence(app.device, &fi, NULL, &f->fence), VK_SUCCESS);
        f->cmd = ad_begin(&app, 0);
        /* the previous frame's copy out of staging (WAR) and into it (WAW) */
        ad_barrier(f->cmd, staging.buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT);
        VkBufferCopy all = {.size = qbytes + vbytes};
        vkCmdCopyBuffer(f->cmd, f->host_in.buffer, staging.buffer, 1, &all);
        /* Redundant by the spec: rec's own barriers (vkattn_tensor_release for
         * q, the app's for v) order its copies after the previous frame's, and
         * the second rec of this buffer proves them against the first. The
         * validation layer 1.4.309 (Debian 13) checks a secondary's first
         * accesses against earlier submissions without its barriers (a false
         * WRITE_AFTER_WRITE at vkQueueSubmit), so the primary repeats them. */
        ad_barrier(f->cmd, qbuf.buffer, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
        ad_barrier(f->cmd, vbuf.buffer, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
        VkCommandBuffer twice[2] = {rec, rec};
        vkCmdExecuteCommands(f->cmd, 2, twice);
        ad_barrier(f->cmd, readback.buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT);
        VkBufferCopy o = {.size = obytes};
        vkCmdCopyBuffer(f->cmd, readback.buffer, f->host_out.buffer, 1, &o);
        ad_barrier(f->cmd, f->host_out.buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
        assert_int_equal(vkEndCommandBuffer(f->cmd), VK_SUCCESS);
    }

    unsigned checked = 0;
    for (int frame = 0; frame < FRAMES + RING; frame++) {
        frame_slot *f = &slots[frame % RING];
        if (frame >= RING) {
            /* the frame this slot carried three frames ago is done */
            assert_int_equal(vkWaitForFences(app.device, 1, &f->fence, VK_TRUE, UINT64_MAX),
                             VK_SUCCESS);
            assert_int_equal(vkResetFences(app.device, 1, &f->fence), VK_SUCCESS);
            char what[64];
            snprintf(what, sizeof what, "replayed MHA, frame %d", frame - RING);
            TU_ASSERT_CLOSE((const float *)f->host_out.mapped, f->ref, nout, OUT_BOUND, what);
            checked++;
        }
        if (frame >= FRAMES)
            continue;
        tu_fill_uniform(f->q, nq, -1, 1);
        tu_fill_uniform(f->v, nv, -1, 1);
        const vkattn_layer_host_io hio = {.query = f->q, .value = f->v, .output = f->ref};
        TH_OK(ctx, vkattn_reference_mha(&desc, &w, &call, &hio));
        memcpy(f->host_in.mapped, f->q, qbytes);
        memcpy((char *)f->host_in.mapped + qbytes, f->v, vbytes);
        tu_poison(f->host_out.mapped, nout);
        ad_submit(&app, f->cmd, f->fence);
    }
    assert_int_equal(checked, FRAMES);

    /* the last frame's output, read back by vkattn after the app's replays */
    float *got = th_download(out, nout);
    TU_ASSERT_CLOSE(got, slots[(FRAMES - 1) % RING].ref, nout, OUT_BOUND, "download after replay");
    free(got);

    for (int s = 0; s < RING; s++) {
        frame_slot *f = &slots[s];
        vkDestroyFence(app.device, f->fence, NULL);
        ad_buffer_destroy(&app, &f->host_in);
        ad_buffer_destroy(&app, &f->host_out);
        free(f->q), free(f->v), free(f->ref);
    }
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(v), vkattn_tensor_destroy(out);
    vkattn_mha_destroy(layer);
    ad_buffer_destroy(&app, &qbuf), ad_buffer_destroy(&app, &vbuf);
    ad_buffer_destroy(&app, &staging), ad_buffer_destroy(&app, &readback);
    ad_close(&app);
    for (int i = 0; i < 8; i++)
        free(wa[i]);
}

/* ------------------------------------------------------------------ decode */

/* Decoding as an app does it: one command buffer of the app's, recorded once
 * with a ragged append (sequence 0 takes 2 new rows a step, sequence 1 one)
 * and the decode of the new queries, submitted step after step with no
 * re-recording. The lengths advance on the device: each step's output matches
 * vkattn_reference_sdpa_decode over the keys appended so far. Between steps
 * the host uploads the next rows and queries through vkattn (the recorded
 * buffer's first use of each tensor orders against that earlier vkattn work). */
static void test_replay_decode(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;
    enum { B = 2, G = 2, H = 4, TQ = 2, TNEW = 2, CAP = 40, DK = 8, DV = 6, STEPS = 8 };
    vkattn_kv_cache_desc cd = {B, G, CAP, DK, DV, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nk = (size_t)B * G * CAP * DK, nv = (size_t)B * G * CAP * DV;
    float *k = tu_floats(nk), *v = tu_floats(nv);
    tu_fill_uniform(k, nk, -1, 1), tu_fill_uniform(v, nv, -1, 1);
    TH_OK(ctx, vkattn_tensor_upload(vkattn_kv_cache_get_desc(cache).keys, k, 0, nk));
    TH_OK(ctx, vkattn_tensor_upload(vkattn_kv_cache_get_desc(cache).values, v, 0, nv));
    uint32_t len[B] = {5, 0};
    TH_OK(ctx, vkattn_kv_cache_set_lengths(cache, len));

    const size_t nkn = (size_t)B * G * TNEW * DK, nvn = (size_t)B * G * TNEW * DV;
    const size_t nq = (size_t)B * H * TQ * DK, no = (size_t)B * H * TQ * DV;
    const float counts[B] = {2, 1};
    vkattn_tensor_desc kd = {4, {B, G, TNEW, DK}}, vd = {4, {B, G, TNEW, DV}};
    vkattn_tensor *tk, *tv, *tc = th_tensor(ctx, B, counts), *tq = th_tensor(ctx, nq, NULL);
    vkattn_tensor *tout = th_tensor(ctx, no, NULL);
    TH_OK(ctx, vkattn_tensor_create(ctx, &kd, &tk));
    TH_OK(ctx, vkattn_tensor_create(ctx, &vd, &tv));

    const vkattn_sdpa_decode_params p = {.batch = B, .heads = H, .kv_heads = G, .tq = TQ,
                                         .capacity = CAP, .dk = DK, .dv = DV};
    VkCommandBuffer cmd = ad_begin(&app, 0);
    const vkattn_kv_append_io aio = {tk, tv, tc};
    TH_OK(ctx, vkattn_kv_cache_append_record(cache, cmd, &aio));
    const vkattn_sdpa_decode_io dio = {tq, cache, NULL, tout};
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, cmd, &p, &dio));
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkFence fence;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    assert_int_equal(vkCreateFence(app.device, &fi, NULL, &fence), VK_SUCCESS);

    float *kn = tu_floats(nkn), *vn = tu_floats(nvn), *q = tu_floats(nq), *ref = tu_floats(no);
    for (int step = 0; step < STEPS; step++) {
        tu_fill_uniform(kn, nkn, -1, 1), tu_fill_uniform(vn, nvn, -1, 1);
        tu_fill_uniform(q, nq, -1, 1);
        TH_OK(ctx, vkattn_tensor_upload(tk, kn, 0, nkn));
        TH_OK(ctx, vkattn_tensor_upload(tv, vn, 0, nvn));
        TH_OK(ctx, vkattn_tensor_upload(tq, q, 0, nq));
        TH_OK(ctx, vkattn_tensor_fill(tout, NAN));
        /* what the append does, on the host */
        for (uint32_t b = 0; b < B; b++) {
            for (uint32_t g = 0; g < G; g++)
                for (uint32_t t = 0; t < (uint32_t)counts[b]; t++) {
                    const size_t src = ((size_t)(b * G + g) * TNEW + t);
                    const size_t dst = ((size_t)(b * G + g) * CAP + len[b] + t);
                    memcpy(k + dst * DK, kn + src * DK, sizeof(float) * DK);
                    memcpy(v + dst * DV, vn + src * DV, sizeof(float) * DV);
                }
            len[b] += (uint32_t)counts[b];
        }
        TH_OK(ctx, vkattn_reference_sdpa_decode(&p, NULL, q, k, v, len, NULL, ref));
        ad_submit(&app, cmd, fence);
        assert_int_equal(vkWaitForFences(app.device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
        assert_int_equal(vkResetFences(app.device, 1, &fence), VK_SUCCESS);
        float *got = th_download(tout, no);
        char what[64];
        snprintf(what, sizeof what, "replayed decode, step %d", step);
        TU_ASSERT_CLOSE(got, ref, no, OUT_BOUND, what);
        free(got);
    }
    uint32_t got_len[B];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, got_len, NULL));
    assert_int_equal(got_len[0], 5 + 2 * STEPS);
    assert_int_equal(got_len[1], STEPS);

    vkDestroyFence(app.device, fence, NULL);
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tc);
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tout);
    vkattn_kv_cache_destroy(cache);
    ad_close(&app);
    free(k), free(v), free(kn), free(vn), free(q), free(ref);
}

/* One cached MultiHeadAttention step (one new token per sequence) recorded
 * once and submitted step after step: each submission appends and attends
 * over everything appended so far; each step's output equals the causal
 * (top-left) vkattn_reference_mha over the tokens so far, last row. With
 * QK-norm and RoPE the new token's position is the cache length, read on the
 * device at each submission. */
static void replay_mha_cached(void **state, bool rope)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;
    enum { B = 2, H = 2, DK = 4, DV = 3, W = 6, STEPS = 6 };
    vkattn_mha_desc desc = {.num_heads = H, .key_dim = DK, .value_dim = DV, .query_width = W,
                            .value_width = W, .use_qk_norm = rope, .use_rope = rope};
    const size_t wn[8] = {W * H * DK, H * DK, W * H * DK, H * DK, W * H * DV, H * DV,
                          H * DV * W, W};
    float *wa[8];
    for (int i = 0; i < 8; i++)
        wa[i] = tu_floats(wn[i]), tu_fill_uniform(wa[i], wn[i], -0.5f, 0.5f);
    float norm[2][DK];
    tu_fill_uniform(&norm[0][0], 2 * DK, 0.5f, 1.5f);
    vkattn_mha_weights w = {wa[0], wa[1], wa[2], wa[3], wa[4], wa[5], wa[6], wa[7],
                            NULL, NULL, rope ? norm[0] : NULL, rope ? norm[1] : NULL};
    vkattn_mha *mha;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &mha));
    TH_OK(ctx, vkattn_mha_set_weights(mha, &w));
    vkattn_kv_cache_desc cd = {B, H, 8, DK, DV, NULL, NULL};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    vkattn_tensor *tin = th_tensor(ctx, B * W, NULL), *tout = th_tensor(ctx, B * W, NULL);
    vkattn_layer_call call = {.batch = B, .tq = 1, .causal = VKATTN_CAUSAL_TOP_LEFT};
    vkattn_layer_io io = {.query = tin, .value = tin, .output = tout};
    VkCommandBuffer cmd = ad_begin(&app, 0);
    TH_OK(ctx, vkattn_mha_record_cached(mha, cmd, &call, &io, cache));
    assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkFence fence;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    assert_int_equal(vkCreateFence(app.device, &fi, NULL, &fence), VK_SUCCESS);

    float x[B][STEPS * W], step_in[B * W], ref[STEPS * W];
    tu_fill_uniform(&x[0][0], sizeof x / sizeof(float), -1, 1);
    for (int step = 0; step < STEPS; step++) {
        for (int b = 0; b < B; b++)
            memcpy(step_in + b * W, x[b] + step * W, sizeof(float) * W);
        TH_OK(ctx, vkattn_tensor_upload(tin, step_in, 0, B * W));
        TH_OK(ctx, vkattn_tensor_fill(tout, NAN));
        ad_submit(&app, cmd, fence);
        assert_int_equal(vkWaitForFences(app.device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
        assert_int_equal(vkResetFences(app.device, 1, &fence), VK_SUCCESS);
        float *got = th_download(tout, B * W);
        for (int b = 0; b < B; b++) {
            vkattn_layer_call full = {.batch = 1, .tq = (uint32_t)step + 1,
                                      .tv = (uint32_t)step + 1,
                                      .causal = VKATTN_CAUSAL_TOP_LEFT};
            vkattn_layer_host_io hio = {.query = x[b], .value = x[b], .output = ref};
            TH_OK(NULL, vkattn_reference_mha(&desc, &w, &full, &hio));
            char what[64];
            snprintf(what, sizeof what, "replayed cached MHA (rope %d), step %d, sequence %d",
                     rope, step, b);
            TU_ASSERT_CLOSE(got + b * W, ref + step * W, W, OUT_BOUND, what);
        }
        free(got);
    }
    uint32_t len[B];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, len, NULL));
    assert_int_equal(len[0], STEPS);
    assert_int_equal(len[1], STEPS);
    vkDestroyFence(app.device, fence, NULL);
    vkattn_tensor_destroy(tin), vkattn_tensor_destroy(tout);
    vkattn_kv_cache_destroy(cache);
    vkattn_mha_destroy(mha);
    ad_close(&app);
    for (int i = 0; i < 8; i++)
        free(wa[i]);
}

static void test_replay_mha_cached(void **state) { replay_mha_cached(state, false); }
static void test_replay_mha_cached_rope(void **state) { replay_mha_cached(state, true); }

TU_MAIN(th_setup, th_teardown,
    test_queue_lock, test_queue_lock_arguments, test_replay_mha, test_replay_decode,
    test_replay_mha_cached, test_replay_mha_cached_rope)
