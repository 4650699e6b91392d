/* Two threads record on one context at once (vkattn/context.h, thread
 * safety): each plays an engine thread with its own MultiHeadAttention layer,
 * tensors and command pool; it prepares, then many times records a call into
 * its own command buffer and submits it on the app's queue (one mutex
 * serializes the queue and vkattn's upload/download, which are externally
 * synchronized). One thread takes the chained SDPA path (the context's
 * per-thread workspace), the other the fused one, so both recorders create
 * pipelines, scratch and (under mobile-min) descriptor sets concurrently.
 * The app's device has the validation layer with synchronization validation;
 * any message fails the test. Every result is compared with the CPU
 * reference: max|got - ref| <= 2e-5 * max(max|ref|, 1), as test_mha.c. */
#include "app_device.h"
#include "core/threads.h" /* the library's platform header, compiled in (tests/CMakeLists.txt) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BOUND 2e-5
#define ITERS 6
#define THREADS 2

/* The app's device (app_device.h): no extensions beyond vkattn's required ones
 * (so pooled descriptor sets: the shared cache is exercised), one queue. */
static vka_mutex queue_lock; /* the queue, and vkattn's upload/download */

/* ------------------------------------------------------------ one engine thread */

enum { B = 2, T = 20, D = 32, H = 2, DK = 16 };
#define N_IO ((size_t)B * T * D)

typedef struct worker {
    ad_app *a;
    vkattn_mha_desc desc;
    vkattn_mha_weights w;
    vkattn_sdpa_path path;
    float *x[ITERS], *ref[ITERS], *got[ITERS]; /* made and checked by the main thread */
    vkattn_mha *layer;
    vkattn_tensor *tx, *tout;
    const char *failed; /* what went wrong, NULL = fine (cmocka asserts are not thread-safe) */
    char why[256];
} worker;

#define W_CHECK(w, cond, what)                                                                 \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            (w)->failed = (what);                                                              \
            snprintf((w)->why, sizeof (w)->why, "%s", vkattn_last_error());                    \
            goto done;                                                                         \
        }                                                                                      \
    } while (0)

static int worker_main(void *arg)
{
    worker *w = arg;
    ad_app *a = w->a;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = a->family};
    W_CHECK(w, vkCreateCommandPool(a->device, &pi, NULL, &pool) == VK_SUCCESS, "vkCreateCommandPool");
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    W_CHECK(w, vkCreateFence(a->device, &fi, NULL, &fence) == VK_SUCCESS, "vkCreateFence");
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cmd;
    W_CHECK(w, vkAllocateCommandBuffers(a->device, &cai, &cmd) == VK_SUCCESS, "vkAllocateCommandBuffers");

    const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T, .path = w->path};
    const vkattn_layer_io io = {.query = w->tx, .value = w->tx, .output = w->tout};
    /* prepared while the other thread prepares and records */
    W_CHECK(w, vkattn_mha_record(w->layer, VKATTN_PREPARE, &call, &io) == VKATTN_SUCCESS, "vkattn_mha_record(VKATTN_PREPARE)");
    for (int it = 0; it < ITERS; it++) {
        vka_mutex_lock(&queue_lock);
        vkattn_result r = vkattn_tensor_upload(w->tx, w->x[it], 0, N_IO);
        vka_mutex_unlock(&queue_lock);
        W_CHECK(w, r == VKATTN_SUCCESS, "vkattn_tensor_upload");

        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        W_CHECK(w, vkBeginCommandBuffer(cmd, &bi) == VK_SUCCESS, "vkBeginCommandBuffer");
        W_CHECK(w, vkattn_mha_record(w->layer, cmd, &call, &io) == VKATTN_SUCCESS, "vkattn_mha_record");
        W_CHECK(w, vkEndCommandBuffer(cmd) == VK_SUCCESS, "vkEndCommandBuffer");

        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                           .pCommandBuffers = &cmd};
        vka_mutex_lock(&queue_lock);
        VkResult vr = vkQueueSubmit(a->queue, 1, &si, fence);
        vka_mutex_unlock(&queue_lock);
        W_CHECK(w, vr == VK_SUCCESS, "vkQueueSubmit");
        W_CHECK(w, vkWaitForFences(a->device, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS,
                "vkWaitForFences");
        vkResetFences(a->device, 1, &fence);
        vkResetCommandBuffer(cmd, 0);

        vka_mutex_lock(&queue_lock);
        r = vkattn_tensor_download(w->tout, w->got[it], 0, N_IO);
        vka_mutex_unlock(&queue_lock);
        W_CHECK(w, r == VKATTN_SUCCESS, "vkattn_tensor_download");
    }
done:
    if (fence)
        vkDestroyFence(a->device, fence, NULL);
    if (pool)
        vkDestroyCommandPool(a->device, pool, NULL);
    return 0;
}

static float *rand_array(size_t n, float scale)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -scale, scale);
    return x;
}

static void test_two_recording_threads(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app a;
    ad_open(own, false, &a);
    assert_true(vka_mutex_init(&queue_lock));

    worker ws[THREADS];
    float *host[THREADS][8];
    const size_t nw[8] = {D * H * DK, H * DK, D * H * DK, H * DK, D * H * DK, H * DK, H * DK * D, D};
    for (int t = 0; t < THREADS; t++) {
        worker *w = &ws[t];
        *w = (worker){.a = &a, .desc = {.num_heads = H, .key_dim = DK, .query_width = D, .value_width = D},
                      .path = t == 0 ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_FUSED};
        for (int i = 0; i < 8; i++)
            host[t][i] = rand_array(nw[i], 1.0f / sqrtf((float)(i == 6 ? H * DK : D)));
        w->w = (vkattn_mha_weights){host[t][0], host[t][1], host[t][2], host[t][3],
                                    host[t][4], host[t][5], host[t][6], host[t][7]};
        TH_OK(a.ctx, vkattn_mha_create(a.ctx, &w->desc, &w->layer));
        TH_OK(a.ctx, vkattn_mha_set_weights(w->layer, &w->w));
        vkattn_tensor_desc td = {.rank = 1, .dims = {(uint32_t)N_IO}};
        TH_OK(a.ctx, vkattn_tensor_create(a.ctx, &td, &w->tx));
        TH_OK(a.ctx, vkattn_tensor_create(a.ctx, &td, &w->tout));
        const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
        for (int it = 0; it < ITERS; it++) {
            w->x[it] = rand_array(N_IO, 1.0f);
            w->ref[it] = tu_floats(N_IO);
            w->got[it] = tu_floats(N_IO);
            tu_poison(w->got[it], N_IO);
            vkattn_layer_host_io hio = {.query = w->x[it], .value = w->x[it], .output = w->ref[it]};
            assert_int_equal(vkattn_reference_mha(&w->desc, &w->w, &call, &hio), VKATTN_SUCCESS);
        }
        TH_OK(a.ctx, vkattn_tensor_fill(w->tout, NAN));
    }

    vka_thread th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_true(vka_thread_create(&th[t], worker_main, &ws[t]));
    for (int t = 0; t < THREADS; t++)
        vka_thread_join(th[t]);

    for (int t = 0; t < THREADS; t++) {
        worker *w = &ws[t];
        if (w->failed)
            fail_msg("thread %d: %s failed: %s", t, w->failed, w->why);
        for (int it = 0; it < ITERS; it++) {
            char what[64];
            snprintf(what, sizeof what, "thread %d, call %d", t, it);
            TU_ASSERT_CLOSE(w->got[it], w->ref[it], N_IO, BOUND, what);
        }
    }
    for (int t = 0; t < THREADS; t++) {
        worker *w = &ws[t];
        vkattn_tensor_destroy(w->tx);
        vkattn_tensor_destroy(w->tout);
        vkattn_mha_destroy(w->layer);
        for (int it = 0; it < ITERS; it++)
            free(w->x[it]), free(w->ref[it]), free(w->got[it]);
        for (int i = 0; i < 8; i++)
            free(host[t][i]);
    }
    vka_mutex_destroy(&queue_lock);
    ad_close(&a); /* asserts the app's validation layer said nothing */
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_recording_threads, th_setup, th_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
