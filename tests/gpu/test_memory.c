/* Device memory: sub-allocation, the app's allocator, and no leak on any
 * error path.
 *
 * - A 4-layer MultiHeadAttention stack (weights, scratch and well over a
 *   hundred tensors) lives in at most 4 VkDeviceMemory objects, its output
 *   matches the CPU reference, and memory (stats and device_allocations)
 *   stays flat over 1000 calls.
 * - Many tensors of odd sizes created and destroyed in mixed order: views at
 *   aligned offsets, contents never overlap (each keeps its own pattern),
 *   blocks go back to the driver (at most one empty block stays), a tensor
 *   larger than half a block gets a dedicated allocation. A misaligned bind
 *   would be a validation error, which fails the test.
 * - Fault injection through vkattn_context_desc.allocator: a test allocator
 *   (one vkAllocateMemory per request, on the context's device) fails its
 *   Nth allocation, for every N an MHA layer's create + set_weights + record
 *   + run make, on a fresh context (so context scratch growth fails too) and
 *   on a warmed one. Each time the failing call returns
 *   VKATTN_ERROR_OUT_OF_DEVICE_MEMORY with a message, nothing leaks (the
 *   warmed context's stats come back exactly; the allocator's live count
 *   equals vkattn's and is 0 after vkattn_context_destroy), and a fresh layer
 *   then matches vkattn_reference_mha.
 * - A slicer on the app's allocator: its scratch is the context's memory and
 *   goes back on destroy; its frames allocate nothing.
 *
 * Bound: as tests/gpu/test_mha.c, max|got - ref| <= 2e-5 * max(max|ref|, 1)
 * (inputs in [-1, 1], kernels scaled by 1/sqrt(fan-in)). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BOUND 2e-5

static vkattn_memory_stats stats_of(vkattn_context *ctx)
{
    vkattn_memory_stats s;
    TH_OK(ctx, vkattn_context_memory_stats(ctx, &s));
    return s;
}

/* ---- a small MHA layer with random weights and its reference ---- */

typedef struct mha_case {
    vkattn_mha_desc desc;
    vkattn_layer_call call;
    vkattn_mha_weights w;
    float *query, *value; /* host inputs */
    size_t n_query, n_value, n_out;
} mha_case;

static float *kernel(size_t n, uint32_t fan_in)
{
    float *k = tu_floats(n);
    float s = 1.0f / sqrtf((float)fan_in);
    tu_fill_uniform(k, n, -s, s);
    return k;
}

static float *uniform(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1.0f, 1.0f);
    return x;
}

/* Cross-attention with Dq = Dout = 16, Dv = 12, H = 2, key_dim 8. */
static mha_case case_new(uint32_t batch, uint32_t tq, uint32_t tv)
{
    mha_case m = {.desc = {.num_heads = 2, .key_dim = 8, .query_width = 16, .value_width = 12},
                  .call = {.batch = batch, .tq = tq, .tv = tv}};
    const uint32_t H = 2, dk = 8, Dq = 16, Dv = 12;
    m.w = (vkattn_mha_weights){
        .query_kernel = kernel((size_t)Dq * H * dk, Dq), .query_bias = uniform(H * dk),
        .key_kernel = kernel((size_t)Dv * H * dk, Dv), .key_bias = uniform(H * dk),
        .value_kernel = kernel((size_t)Dv * H * dk, Dv), .value_bias = uniform(H * dk),
        .output_kernel = kernel((size_t)H * dk * Dq, H * dk), .output_bias = uniform(Dq),
    };
    m.n_query = (size_t)batch * tq * Dq;
    m.n_value = (size_t)batch * tv * Dv;
    m.n_out = m.n_query;
    m.query = uniform(m.n_query);
    m.value = uniform(m.n_value);
    return m;
}

static void case_free(mha_case *m)
{
    float **p[] = {&m->w.query_kernel, &m->w.query_bias, &m->w.key_kernel, &m->w.key_bias,
                   &m->w.value_kernel, &m->w.value_bias, &m->w.output_kernel, &m->w.output_bias,
                   &m->query, &m->value};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        free(*p[i]);
        *p[i] = NULL;
    }
}

/* The reference output of `m` for `query` (host). */
static float *case_reference(const mha_case *m, const float *query)
{
    float *ref = tu_floats(m->n_out);
    vkattn_layer_host_io hio = {.query = query, .value = m->value, .output = ref};
    TH_OK(NULL, vkattn_reference_mha(&m->desc, &m->w, &m->call, &hio));
    return ref;
}

static void assert_close(const float *got, const float *ref, size_t n, const char *what)
{
    double scale = 1.0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(ref[i]));
    double err = tu_max_abs_err(got, ref, n);
    if (!TU_WITHIN(err, OUT_BOUND * scale))
        fail_msg("%s: max|got - ref| = %g > %g", what, err, OUT_BOUND * scale);
}

/* ---- the 4-layer stack ---- */

#define STACK 4
#define EXTRA_ACTIVATIONS 96

static void test_stack_lives_in_few_allocations(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_memory_stats before = stats_of(ctx);
    mha_case m[STACK];
    vkattn_mha *layer[STACK];
    vkattn_tensor *x[STACK + 1]; /* x[i] feeds layer i; x[STACK] is the output */
    for (int i = 0; i < STACK; i++) {
        m[i] = case_new(2, 6, 5);
        TH_OK(ctx, vkattn_mha_create(ctx, &m[i].desc, &layer[i]));
        TH_OK(ctx, vkattn_mha_set_weights(layer[i], &m[i].w));
    }
    /* every layer attends to its own memory (value); queries flow through */
    vkattn_tensor *value[STACK];
    for (int i = 0; i < STACK; i++)
        value[i] = th_tensor(ctx, m[i].n_value, m[i].value);
    x[0] = th_tensor(ctx, m[0].n_query, m[0].query);
    for (int i = 1; i <= STACK; i++)
        x[i] = th_tensor(ctx, m[0].n_query, NULL);
    /* activations an app keeps around (a batch queue, say) */
    vkattn_tensor *extra[EXTRA_ACTIVATIONS];
    for (int i = 0; i < EXTRA_ACTIVATIONS; i++)
        extra[i] = th_tensor(ctx, 1 + tu_rand_range(0, 300), NULL);

    for (int i = 0; i < STACK; i++) {
        vkattn_layer_io io = {.query = x[i], .value = value[i], .output = x[i + 1]};
        TH_OK(ctx, vkattn_mha_record(layer[i], VKATTN_RUN_NOW, &m[i].call, &io));
    }
    /* the reference stack */
    float *h = tu_floats(m[0].n_query);
    memcpy(h, m[0].query, m[0].n_query * sizeof *h);
    for (int i = 0; i < STACK; i++) {
        float *next = case_reference(&m[i], h);
        free(h);
        h = next;
    }
    float *got = th_download(x[STACK], m[0].n_query);
    assert_close(got, h, m[0].n_query, "4-layer stack");
    free(got);
    free(h);

    vkattn_memory_stats s = stats_of(ctx);
    printf("# stack: %llu buffers in %llu VkDeviceMemory (%llu MiB), %llu KiB used\n",
           (unsigned long long)s.buffers, (unsigned long long)s.device_allocations,
           (unsigned long long)(s.device_bytes >> 20), (unsigned long long)(s.used_bytes >> 10));
    assert_true(s.buffers >= before.buffers + 100 + 4 * 8);
    assert_true(s.device_allocations <= 4);
    assert_int_equal(s.app_allocations, 0);
    uint64_t current = 0;
    TH_OK(ctx, vkattn_context_memory_usage(ctx, &current, NULL));
    assert_int_equal(s.used_bytes, current);

    /* 1000 more calls: nothing grows */
    for (int call = 0; call < 1000; call++) {
        int i = call % STACK;
        vkattn_layer_io io = {.query = x[i], .value = value[i], .output = x[i + 1]};
        TH_OK(ctx, vkattn_mha_record(layer[i], VKATTN_RUN_NOW, &m[i].call, &io));
    }
    vkattn_memory_stats after = stats_of(ctx);
    assert_int_equal(after.device_allocations, s.device_allocations);
    assert_int_equal(after.device_bytes, s.device_bytes);
    assert_int_equal(after.used_bytes, s.used_bytes);
    assert_int_equal(after.buffers, s.buffers);

    for (int i = 0; i < EXTRA_ACTIVATIONS; i++)
        vkattn_tensor_destroy(extra[i]);
    for (int i = 0; i < STACK; i++) {
        vkattn_mha_destroy(layer[i]);
        vkattn_tensor_destroy(value[i]);
        case_free(&m[i]);
    }
    for (int i = 0; i <= STACK; i++)
        vkattn_tensor_destroy(x[i]);
    th_assert_validation_clean();
}

/* ---- the sub-allocator seen from outside ---- */

#define MANY 240

static void pattern(float *x, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)id * 4096.0f + (float)(i % 4096);
}

static void test_suballocation(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    const uint64_t align = info.min_storage_buffer_offset_alignment;
    const vkattn_memory_stats base = stats_of(ctx);

    vkattn_tensor *t[MANY] = {0};
    uint32_t n[MANY];
    for (int cycle = 0; cycle < 6; cycle++) {
        /* create, destroy every third, create again: holes of odd sizes */
        for (int i = 0; i < MANY; i++) {
            n[i] = 1 + tu_rand_range(0, cycle % 2 ? 40000 : 700);
            float *data = tu_floats(n[i]);
            pattern(data, n[i], (uint32_t)i);
            t[i] = th_tensor(ctx, n[i], data);
            free(data);
            vkattn_buffer_view v = vkattn_tensor_get_info(t[i]).buffer;
            assert_non_null(v.buffer);
            assert_true(align == 0 || v.offset % align == 0);
            assert_true(v.size == (uint64_t)n[i] * sizeof(float));
        }
        for (int i = 0; i < MANY; i += 3) {
            vkattn_tensor_destroy(t[i]);
            n[i] = 1 + tu_rand_range(0, 2000);
            float *data = tu_floats(n[i]);
            pattern(data, n[i], (uint32_t)i);
            t[i] = th_tensor(ctx, n[i], data);
            free(data);
        }
        /* every tensor still holds its own pattern: no two ranges overlap */
        for (int i = 0; i < MANY; i++) {
            float *got = th_download(t[i], n[i]);
            float *want = tu_floats(n[i]);
            pattern(want, n[i], (uint32_t)i);
            if (memcmp(got, want, n[i] * sizeof(float)) != 0)
                fail_msg("cycle %d: tensor %d (%u floats) lost its contents", cycle, i, n[i]);
            free(got);
            free(want);
        }
        vkattn_memory_stats s = stats_of(ctx);
        assert_true(s.device_allocations <= base.device_allocations + 4);
        /* destroy in a scrambled order */
        for (int k = 0; k < MANY; k++) {
            int i = (k * 97) % MANY;
            vkattn_tensor_destroy(t[i]);
            t[i] = NULL;
        }
        s = stats_of(ctx);
        assert_int_equal(s.used_bytes, base.used_bytes);
        assert_int_equal(s.buffers, base.buffers);
        /* emptied blocks went back; at most one stays cached */
        assert_true(s.device_allocations <= base.device_allocations + 1);
    }

    /* half of any block (128 MiB at most) or more: its own allocation.
     * The largest tensor the device binds, up to 160 MiB. */
    uint64_t big = 40u << 20; /* floats */
    if (big * sizeof(float) > info.max_storage_buffer_range)
        big = info.max_storage_buffer_range / sizeof(float);
    if (big * sizeof(float) < (128u << 20)) {
        printf("# dedicated allocation not tried: maxStorageBufferRange is below 128 MiB\n");
    } else {
        vkattn_memory_stats s0 = stats_of(ctx);
        vkattn_tensor_desc d = {.rank = 1, .dims = {(uint32_t)big}};
        vkattn_tensor *large = NULL;
        TH_OK(ctx, vkattn_tensor_create(ctx, &d, &large));
        vkattn_memory_stats s1 = stats_of(ctx);
        assert_int_equal(s1.dedicated_allocations, s0.dedicated_allocations + 1);
        assert_int_equal(s1.device_allocations, s0.device_allocations + 1);
        assert_true(s1.device_bytes >= s0.device_bytes + big * sizeof(float));
        TH_OK(ctx, vkattn_tensor_fill(large, 3.5f));
        float tail[4];
        TH_OK(ctx, vkattn_tensor_download(large, tail, big - 4, 4));
        for (int i = 0; i < 4; i++)
            assert_true(tail[i] == 3.5f);
        vkattn_tensor_destroy(large);
        vkattn_memory_stats s2 = stats_of(ctx);
        assert_int_equal(s2.device_allocations, s0.device_allocations);
        assert_int_equal(s2.dedicated_allocations, s0.dedicated_allocations);
    }
    th_assert_validation_clean();
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_memory_stats s;
    assert_int_equal(vkattn_context_memory_stats(NULL, &s), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "ctx"));
    assert_int_equal(vkattn_context_memory_stats(ctx, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "stats"));

    vkattn_context_desc desc = th_context_desc();
    desc.allocator.allocate = (vkattn_result(*)(void *, const vkattn_allocation_request *,
                                                vkattn_allocation *))1;
    vkattn_context *other = (vkattn_context *)1;
    assert_int_equal(vkattn_context_create(&desc, &other), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(other);
    assert_non_null(strstr(vkattn_last_error(), "allocator.free"));
}

/* ---- the app's allocator, failing on demand ---- */

typedef struct test_allocator {
    PFN_vkAllocateMemory allocate_memory;
    PFN_vkFreeMemory free_memory;
    PFN_vkMapMemory map_memory;
    VkPhysicalDeviceMemoryProperties props; /* unknown: map every request's hint type */
    uint32_t count;   /* allocations asked for since arming */
    uint32_t fail_at; /* fail the fail_at-th request (1-based); 0 = never */
    uint32_t failed;
    int64_t live;
} test_allocator;

static vkattn_result ta_allocate(void *user, const vkattn_allocation_request *req,
                                 vkattn_allocation *out)
{
    test_allocator *ta = user;
    assert_non_null(req->device);
    assert_true(req->size > 0);
    assert_true(req->alignment && (req->alignment & (req->alignment - 1)) == 0);
    assert_true(req->memory_type_bits & (1u << req->memory_type_index));
    if (ta->fail_at && ++ta->count == ta->fail_at) {
        ta->failed++;
        return VKATTN_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    if (!ta->allocate_memory) {
        ta->allocate_memory = (PFN_vkAllocateMemory)vkGetDeviceProcAddr(req->device,
                                                                        "vkAllocateMemory");
        ta->free_memory = (PFN_vkFreeMemory)vkGetDeviceProcAddr(req->device, "vkFreeMemory");
        ta->map_memory = (PFN_vkMapMemory)vkGetDeviceProcAddr(req->device, "vkMapMemory");
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req->size,
                               .memoryTypeIndex = req->memory_type_index};
    VkDevice *device = malloc(sizeof *device);
    assert_non_null(device);
    *device = req->device;
    if (ta->allocate_memory(req->device, &ai, NULL, &out->memory) != VK_SUCCESS) {
        free(device);
        return VKATTN_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    out->offset = 0;
    out->user_data = device;
    out->mapped = NULL;
    if (req->host_visible)
        assert_int_equal(ta->map_memory(req->device, out->memory, 0, VK_WHOLE_SIZE, 0,
                                        &out->mapped),
                         VK_SUCCESS);
    ta->live++;
    return VKATTN_SUCCESS;
}

static void ta_free(void *user, const vkattn_allocation *a)
{
    test_allocator *ta = user;
    VkDevice *device = a->user_data;
    ta->free_memory(*device, a->memory, NULL);
    free(device);
    ta->live--;
}

static vkattn_context *ta_context(vkattn_context *own, test_allocator *ta)
{
    vkattn_context_desc desc = th_context_desc();
    desc.allocator = (vkattn_allocator){.user = ta, .allocate = ta_allocate, .free = ta_free};
    vkattn_context *ctx = NULL;
    TH_OK(own, vkattn_context_create(&desc, &ctx));
    vkattn_memory_stats s = stats_of(ctx);
    assert_int_equal(s.device_allocations, 0); /* vkattn allocates nothing itself */
    assert_int_equal(s.app_allocations, (uint64_t)ta->live);
    return ctx;
}

/* One layer's life: create, set weights, record (chained SDPA with scores:
 * the context's workspace) and submit, run (fused). The tensors exist
 * already. Returns the first failure, having cleaned up; on success the
 * output is compared with the reference. */
typedef struct layer_io {
    vkattn_tensor *query, *value, *out, *scores;
} layer_io;

static vkattn_result layer_life(vkattn_context *ctx, mha_case *m, const layer_io *t,
                                const char **where)
{
    vkattn_mha *layer = NULL;
    vkattn_result r;
    *where = "vkattn_mha_create";
    if ((r = vkattn_mha_create(ctx, &m->desc, &layer)) != VKATTN_SUCCESS)
        return r;
    *where = "vkattn_mha_set_weights";
    if ((r = vkattn_mha_set_weights(layer, &m->w)) != VKATTN_SUCCESS)
        goto done;
    vkattn_layer_call scored = m->call;
    scored.return_attention_scores = true;
    vkattn_layer_io io = {.query = t->query, .value = t->value, .output = t->out,
                          .scores = t->scores};
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    *where = "vkattn_mha_record";
    r = vkattn_mha_record(layer, cmd, &scored, &io);
    /* submitted either way: a partial recording holds whole dispatches */
    vkattn_result rs = vkattn_context_submit_and_wait(ctx, cmd);
    if (r != VKATTN_SUCCESS)
        goto done;
    TH_OK(ctx, rs);
    io.scores = NULL;
    *where = "vkattn_mha_record(VKATTN_RUN_NOW)";
    r = vkattn_mha_record(layer, VKATTN_RUN_NOW, &m->call, &io);
done:
    vkattn_mha_destroy(layer);
    return r;
}

static void check_output(vkattn_context *ctx, mha_case *m, const layer_io *t, const char *what)
{
    float *ref = case_reference(m, m->query);
    float *got = th_download(t->out, m->n_out);
    assert_close(got, ref, m->n_out, what);
    free(got);
    free(ref);
}

static layer_io io_create(vkattn_context *ctx, mha_case *m)
{
    layer_io t = {.query = th_tensor(ctx, m->n_query, m->query),
                  .value = th_tensor(ctx, m->n_value, m->value),
                  .out = th_tensor(ctx, m->n_out, NULL),
                  .scores = th_tensor(ctx, (size_t)m->call.batch * m->desc.num_heads * m->call.tq *
                                               m->call.tv,
                                      NULL)};
    return t;
}

static void io_destroy(layer_io *t)
{
    vkattn_tensor_destroy(t->query);
    vkattn_tensor_destroy(t->value);
    vkattn_tensor_destroy(t->out);
    vkattn_tensor_destroy(t->scores);
}

/* Fails the fail_at-th allocation (0: none); asserts what the brief says
 * about the failure. Returns the allocations the sequence asked for. */
static uint32_t faulted_life(vkattn_context *ctx, test_allocator *ta, mha_case *m,
                             const layer_io *t, uint32_t fail_at)
{
    ta->count = 0;
    ta->failed = 0;
    ta->fail_at = fail_at ? fail_at : UINT32_MAX;
    const char *where;
    vkattn_result r = layer_life(ctx, m, t, &where);
    uint32_t asked = ta->count;
    ta->fail_at = 0;
    if (!fail_at || ta->failed == 0) {
        TH_OK(ctx, r);
        return asked;
    }
    if (r != VKATTN_ERROR_OUT_OF_DEVICE_MEMORY)
        fail_msg("allocation %u failed: %s returned %s (%s), want OUT_OF_DEVICE_MEMORY", fail_at,
                 where, vkattn_result_name(r), vkattn_context_last_error(ctx));
    assert_true(vkattn_context_last_error(ctx)[0] != '\0');
    vkattn_memory_stats s = stats_of(ctx);
    assert_int_equal(s.app_allocations, (uint64_t)ta->live);
    return asked;
}

static void test_allocator_fault_injection(void **state)
{
    vkattn_context *own = TH_CTX(state);
    test_allocator ta = {0};
    mha_case m = case_new(2, 5, 7);

    /* the warmed context: context scratch is grown once, so every allocation
     * of the sequence belongs to the layer and must come back */
    vkattn_context *ctx = ta_context(own, &ta);
    layer_io t = io_create(ctx, &m);
    uint32_t total = faulted_life(ctx, &ta, &m, &t, 0);
    check_output(ctx, &m, &t, "warm, no fault");
    const vkattn_memory_stats warm = stats_of(ctx);
    const int64_t warm_live = ta.live;
    uint32_t n_warm = faulted_life(ctx, &ta, &m, &t, 0);
    printf("# MHA life: %u allocations on a fresh context, %u on a warm one\n", total, n_warm);
    assert_true(n_warm >= 9); /* eight weights and some scratch at least */
    for (uint32_t n = 1; n <= n_warm; n++) {
        faulted_life(ctx, &ta, &m, &t, n);
        assert_int_equal(ta.failed, 1);
        vkattn_memory_stats s = stats_of(ctx);
        assert_int_equal(s.used_bytes, warm.used_bytes);
        assert_int_equal(s.buffers, warm.buffers);
        assert_int_equal(s.app_allocations, warm.app_allocations);
        assert_int_equal(ta.live, warm_live);
        /* the fault cleared: the context and a fresh layer work */
        TH_OK(ctx, vkattn_tensor_fill(t.out, NAN));
        faulted_life(ctx, &ta, &m, &t, 0);
        check_output(ctx, &m, &t, "warm, after a fault");
    }
    io_destroy(&t);
    vkattn_context_destroy(ctx);
    assert_int_equal(ta.live, 0);

    /* fresh contexts: the first calls also grow context scratch */
    for (uint32_t n = 1; n <= total; n++) {
        ctx = ta_context(own, &ta);
        t = io_create(ctx, &m);
        faulted_life(ctx, &ta, &m, &t, n);
        assert_int_equal(ta.failed, 1);
        TH_OK(ctx, vkattn_tensor_fill(t.out, NAN));
        faulted_life(ctx, &ta, &m, &t, 0);
        check_output(ctx, &m, &t, "fresh, after a fault");
        io_destroy(&t);
        vkattn_context_destroy(ctx);
        assert_int_equal(ta.live, 0);
    }
    case_free(&m);
    th_assert_validation_clean();
}

/* A slicer (vkattn/slicer.h) on the app's allocator: its scratch comes from
 * the context's memory and goes back on destroy (used bytes as before), its
 * frames ask the allocator for nothing, and the sliced output matches the
 * reference. */
typedef struct sliced_mha {
    vkattn_mha *layer;
    vkattn_layer_call call;
    vkattn_layer_io io;
} sliced_mha;

static vkattn_result sliced_mha_record(void *user, VkCommandBuffer cmd)
{
    sliced_mha *c = user;
    return vkattn_mha_record(c->layer, cmd, &c->call, &c->io);
}

static void test_slicer_on_app_allocator(void **state)
{
    vkattn_context *own = TH_CTX(state);
    test_allocator ta = {0};
    mha_case m = case_new(2, 9, 11);
    vkattn_context *ctx = ta_context(own, &ta);
    layer_io t = io_create(ctx, &m);
    sliced_mha c = {.call = m.call, .io = {.query = t.query, .value = t.value, .output = t.out}};
    TH_OK(ctx, vkattn_mha_create(ctx, &m.desc, &c.layer));
    TH_OK(ctx, vkattn_mha_set_weights(c.layer, &m.w));
    TH_OK(ctx, vkattn_mha_record(c.layer, VKATTN_RUN_NOW, &c.call, &c.io)); /* the layer's own scratch first */
    TH_OK(ctx, vkattn_tensor_fill(t.out, NAN));
    const vkattn_memory_stats before = stats_of(ctx);
    vkattn_slicer_desc d = {.record = sliced_mha_record, .user = &c, .budget_us = 1e-3};
    vkattn_slicer *s;
    TH_OK(ctx, vkattn_slicer_create(ctx, &d, &s));
    const vkattn_memory_stats created = stats_of(ctx);
    /* the slicer's own scratch, where the call needs context scratch (this
     * one does on the desktop profile, not under mobile-min) */
    assert_true(created.used_bytes >= before.used_bytes);
    ta.count = 0;
    ta.fail_at = UINT32_MAX; /* counts requests, fails none */
    bool done = false;
    uint32_t frames = 0;
    while (!done) {
        VkCommandBuffer cmd;
        TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
        TH_OK(ctx, vkattn_slicer_record_next(s, cmd, &done));
        TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
        frames++;
    }
    ta.fail_at = 0;
    assert_true(frames > 1);
    assert_int_equal(ta.count, 0);
    assert_int_equal(stats_of(ctx).used_bytes, created.used_bytes);
    check_output(ctx, &m, &t, "sliced MHA on the app's allocator");
    vkattn_slicer_destroy(s);
    assert_int_equal(stats_of(ctx).used_bytes, before.used_bytes);
    vkattn_mha_destroy(c.layer);
    io_destroy(&t);
    vkattn_context_destroy(ctx);
    assert_int_equal(ta.live, 0);
    case_free(&m);
    th_assert_validation_clean();
}

TU_MAIN(th_setup, th_teardown,
    test_bad_arguments, test_suballocation, test_stack_lives_in_few_allocations,
    test_allocator_fault_injection, test_slicer_on_app_allocator)
