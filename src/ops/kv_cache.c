/* The KV cache (vkattn/kv_cache.h): its tensors, the device lengths buffer and
 * its host mirror; appends (shaders/kv_append.comp, then kv_lengths.comp) and
 * resets (kv_lengths.comp) recorded as dispatches, because the lengths they
 * depend on live on the device. */
#include "ops/kv_cache.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "common/kv_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(kv_append_push, VKA_KV_APPEND_PUSH);
VKA_PUSH_STRUCT(kv_lengths_push, VKA_KV_LENGTHS_PUSH);

static vkattn_result own_or_wrap(vkattn_context *ctx, const char *fn, const char *what,
                                 vkattn_tensor *app, uint64_t n, const vkattn_kv_cache_desc *d,
                                 uint32_t width, vkattn_tensor **out, bool *owns)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) exceeds the kernels' 32-bit indexing", fn, what,
                        (unsigned long long)n);
    if (app && d->dtype == VKATTN_DTYPE_I8)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: %s is set but an int8 cache (desc->dtype VKATTN_DTYPE_I8) holds its "
                        "own storage (no tensor type holds int8 and scales)",
                        fn, what);
    if (app) {
        vkattn_result r = vka_tensor_check_types(ctx, app, n, fn, what, VKA_DTYPE_BIT(app->dtype));
        if (r == VKATTN_SUCCESS && app->dtype != d->dtype)
            r = vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                         "%s: %s is %s tensor; desc->dtype says %s", fn, what,
                         vka_dtype_a_name(app->dtype), vka_dtype_name(d->dtype));
        if (r == VKATTN_SUCCESS && app->count != n)
            r = vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                         "%s: %s has %llu elements; the cache needs exactly %llu", fn, what,
                         (unsigned long long)app->count, (unsigned long long)n);
        *out = app, *owns = false;
        return r;
    }
    *owns = true;
    if (d->dtype == VKATTN_DTYPE_I8) /* the words of vka_kv_i8_words */
        return vka_tensor_create_1d(ctx, n, out);
    vkattn_tensor_desc td = {.rank = 4, .dims = {d->batch, d->kv_heads, d->capacity, width},
                             .dtype = d->dtype};
    return vkattn_tensor_create(ctx, &td, out);
}

vkattn_result vkattn_kv_cache_create(vkattn_context *ctx, const vkattn_kv_cache_desc *desc,
                                     vkattn_kv_cache **out)
{
    if (!ctx || !desc || !out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : !desc ? "desc" : "out");
    *out = NULL;
    vkattn_kv_cache_desc d = *desc;
    d.value_dim = vka_default_u32(d.value_dim, d.key_dim);
    const char *zero = !d.batch ? "batch" : !d.kv_heads ? "kv_heads" : !d.capacity ? "capacity"
                     : !d.key_dim ? "key_dim" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc->%s is 0; must be >= 1", __func__,
                        zero);
    vkattn_result r = vka_dtype_check_desc(ctx, __func__, d.dtype, VKA_DTYPE_USE_CACHE);
    if (r)
        return r;
    if (d.dtype == VKATTN_DTYPE_I8 && (d.key_dim % 4 || d.value_dim % 4))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: an int8 cache needs desc->%s (%u) to be a multiple of 4: rows are "
                        "whole 32-bit words of four int8",
                        __func__, d.key_dim % 4 ? "key_dim" : "value_dim",
                        d.key_dim % 4 ? d.key_dim : d.value_dim);
    if (vka_dtype_info_of(d.dtype)->is_16bit && (d.key_dim % 2 || d.value_dim % 2))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: %s cache needs even key_dim and value_dim (they are %u and %u): "
                        "appends write whole 32-bit words of two 16-bit elements",
                        __func__, vka_dtype_a_name(d.dtype), d.key_dim, d.value_dim);
    const bool i8 = d.dtype == VKATTN_DTYPE_I8;
    const uint64_t nk = i8 ? vka_kv_i8_words(&d, d.key_dim)
                           : vka_count4(d.batch, d.kv_heads, d.capacity, d.key_dim);
    const uint64_t nv = i8 ? vka_kv_i8_words(&d, d.value_dim)
                           : vka_count4(d.batch, d.kv_heads, d.capacity, d.value_dim);
    if (nk == UINT64_MAX || nv == UINT64_MAX)
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: the cache's size overflows", __func__);
    vkattn_kv_cache *c = calloc(1, sizeof *c);
    uint32_t *zeros = calloc((size_t)d.batch + 1, sizeof *zeros);
    r = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    if (!c || !zeros || !(c->host_len = calloc(d.batch, sizeof *c->host_len))) {
        vka_fail(ctx, r, "%s: out of host memory", __func__);
        goto fail;
    }
    c->ctx = ctx;
    if ((r = own_or_wrap(ctx, __func__, "desc->keys", desc->keys, nk, &d, d.key_dim, &c->keys,
                         &c->owns_keys)) ||
        (r = own_or_wrap(ctx, __func__, "desc->values", desc->values, nv, &d, d.value_dim,
                         &c->values, &c->owns_values)) ||
        (r = vka_tensor_create_1d(ctx, (uint64_t)d.batch + 1, &c->lengths)) ||
        (r = vkattn_tensor_upload(c->lengths, (const float *)(const void *)zeros, 0,
                                  (uint64_t)d.batch + 1)))
        goto fail;
    d.keys = c->keys, d.values = c->values;
    c->desc = d;
    c->host_known = true;
    free(zeros);
    *out = c;
    return VKATTN_SUCCESS;
fail:
    free(zeros);
    vkattn_kv_cache_destroy(c);
    return r;
}

void vkattn_kv_cache_destroy(vkattn_kv_cache *c)
{
    if (!c)
        return;
    if (c->owns_keys)
        vkattn_tensor_destroy(c->keys);
    if (c->owns_values)
        vkattn_tensor_destroy(c->values);
    vkattn_tensor_destroy(c->lengths);
    free(c->host_len);
    free(c);
}

vkattn_kv_cache_desc vkattn_kv_cache_get_desc(const vkattn_kv_cache *c)
{
    return c ? c->desc : (vkattn_kv_cache_desc){0};
}

/* lengths and flag from the device into buf[batch + 1]; refreshes the mirror */
static vkattn_result download_all(vkattn_kv_cache *c, uint32_t *buf)
{
    vkattn_result r = vkattn_tensor_download(c->lengths, (float *)(void *)buf, 0,
                                             (uint64_t)c->desc.batch + 1);
    if (r == VKATTN_SUCCESS) {
        memcpy(c->host_len, buf, sizeof(uint32_t) * c->desc.batch);
        c->host_known = true;
    }
    return r;
}

static vkattn_result with_download(vkattn_kv_cache *c, const char *fn, uint32_t *out,
                                   bool *flag)
{
    if (!c)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: cache is NULL", fn);
    if (!out && !flag)
        return vka_fail(c->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: out and overflowed are both NULL", fn);
    uint32_t *buf = malloc(sizeof(uint32_t) * ((size_t)c->desc.batch + 1));
    if (!buf)
        return vka_fail(c->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    vkattn_result r = download_all(c, buf);
    if (r == VKATTN_SUCCESS && out)
        memcpy(out, buf, sizeof(uint32_t) * c->desc.batch);
    if (r == VKATTN_SUCCESS && flag)
        *flag = buf[c->desc.batch] != 0;
    free(buf);
    return r;
}

uint64_t vka_kv_i8_scale_offset(const vkattn_kv_cache_desc *d, uint32_t width)
{
    return vka_count4(d->batch, d->kv_heads, d->capacity, width / 4);
}

uint64_t vka_kv_i8_words(const vkattn_kv_cache_desc *d, uint32_t width)
{
    const uint64_t rows = vka_count4(d->batch, d->kv_heads, d->capacity, 1);
    const uint64_t q = vka_kv_i8_scale_offset(d, width);
    return q == UINT64_MAX || rows == UINT64_MAX ? UINT64_MAX : q + rows;
}

vkattn_result vka_kv_cache_refresh(vkattn_kv_cache *c, const char *fn)
{
    uint32_t *buf = malloc(sizeof(uint32_t) * ((size_t)c->desc.batch + 1));
    if (!buf)
        return vka_fail(c->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    vkattn_result r = download_all(c, buf);
    free(buf);
    return r;
}

vkattn_result vkattn_kv_cache_lengths(vkattn_kv_cache *c, uint32_t *out, bool *overflowed)
{
    return with_download(c, __func__, out, overflowed);
}

vkattn_result vkattn_kv_cache_set_lengths(vkattn_kv_cache *c, const uint32_t *lengths)
{
    if (!c || !lengths)
        return vka_fail(c ? c->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !c ? "cache" : "lengths");
    for (uint32_t b = 0; b < c->desc.batch; b++)
        if (lengths[b] > c->desc.capacity)
            return vka_fail(c->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: lengths[%u] is %u; the capacity is %u", __func__, b, lengths[b],
                            c->desc.capacity);
    uint32_t *buf = calloc((size_t)c->desc.batch + 1, sizeof *buf);
    if (!buf)
        return vka_fail(c->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
    memcpy(buf, lengths, sizeof(uint32_t) * c->desc.batch);
    vkattn_result r = vkattn_tensor_upload(c->lengths, (const float *)(const void *)buf, 0,
                                           (uint64_t)c->desc.batch + 1);
    if (r == VKATTN_SUCCESS) {
        memcpy(c->host_len, lengths, sizeof(uint32_t) * c->desc.batch);
        c->host_known = true;
    } else {
        c->host_known = false;
    }
    free(buf);
    return r;
}

/* A rank-4 (B, Hkv, Tnew, width) tensor of new rows; *tnew set or checked. */
static vkattn_result check_rows(const vkattn_kv_cache *c, const char *fn, const char *what,
                                const vkattn_tensor *t, uint32_t width, uint32_t *tnew)
{
    vkattn_result r = vka_tensor_check_types(c->ctx, t, 1, fn, what, VKA_DTYPES_FLOAT);
    if (r)
        return r;
    const vkattn_kv_cache_desc *d = &c->desc;
    if (t->rank != 4 || t->dims[0] != d->batch || t->dims[1] != d->kv_heads ||
        t->dims[3] != width || (*tnew && t->dims[2] != *tnew))
        return vka_fail(c->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s must be (batch %u, kv_heads %u, Tnew%s, width %u) like the "
                        "cache; it has rank %u and dims (%u, %u, %u, %u)",
                        fn, what, d->batch, d->kv_heads, *tnew ? " as io->k's" : "", width,
                        t->rank, t->dims[0], t->dims[1], t->dims[2], t->dims[3]);
    *tnew = t->dims[2];
    return VKATTN_SUCCESS;
}

static vka_kernel lengths_kernel(void)
{
    return (vka_kernel){
        VKA_KERNEL_SPV(kv_lengths),
        .n_bindings = 2, .push_size = sizeof(kv_lengths_push), .n_spec = VKA_KV_LENGTHS_N_SPEC,
        .spec = {[VKA_KV_LENGTHS_SPEC_WG] = 64},
    };
}

static vkattn_result record_copy(vkattn_kv_cache *c, VkCommandBuffer cmd, const char *fn,
                                 vkattn_tensor *src, vkattn_tensor *dst, uint32_t tnew,
                                 uint32_t width, vkattn_tensor *counts)
{
    const uint64_t n = vka_count4(c->desc.batch, c->desc.kv_heads, tnew, width);
    /* a 16-bit cache: one invocation per pair (the width is even); an int8
     * cache: one per row (its scale is the row's max) */
    const bool i8 = c->desc.dtype == VKATTN_DTYPE_I8;
    const uint64_t items = i8 ? n / width : vka_dtype_info_of(c->desc.dtype)->is_16bit ? n / 2 : n;
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(kv_append),
        .n_bindings = 4, .push_size = sizeof(kv_append_push), .n_spec = VKA_KV_APPEND_N_SPEC,
        .spec = {[VKA_KV_APPEND_SPEC_SRC_TYPE] = vka_dtype_spec_code(src->dtype),
                 [VKA_KV_APPEND_SPEC_DST_TYPE] = vka_dtype_spec_code(c->desc.dtype),
                 [VKA_KV_APPEND_SPEC_DST_I8] = i8},
    };
    kv_append_push push = {
        .total = (uint32_t)(i8 ? items : n), .kv_heads = c->desc.kv_heads, .tnew = tnew,
        .width = width, .capacity = c->desc.capacity, .batch = c->desc.batch,
        .has_counts = counts != NULL,
        .scale_off = i8 ? (uint32_t)vka_kv_i8_scale_offset(&c->desc, width) : 0,
    };
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(c->lengths, false), vka_bind_optional(c->ctx, counts),
                     vka_bind_tensor(src, false), vka_bind_tensor(dst, true)},
        .push = &push, .caller = fn,
    };
    return vka_record_grid_1d(c->ctx, cmd, kernel, VKA_KV_APPEND_SPEC_WG, items, d);
}

/* Records the copies and the length update of checked new rows. */
static vkattn_result append_rows(vkattn_kv_cache *c, VkCommandBuffer cmd, const char *fn,
                                 vkattn_tensor *k, vkattn_tensor *v, vkattn_tensor *counts,
                                 uint32_t tnew)
{
    const vkattn_kv_cache_desc *d = &c->desc;
    vkattn_result r;
    if ((r = record_copy(c, cmd, fn, k, c->keys, tnew, d->key_dim, counts)) ||
        (r = record_copy(c, cmd, fn, v, c->values, tnew, d->value_dim, counts)))
        return r;
    vka_kernel kernel = lengths_kernel();
    kv_lengths_push push = {.mode = VKA_KV_LENGTHS_MODE_ADVANCE, .batch = d->batch,
                            .tnew = tnew, .capacity = d->capacity,
                            .has_counts = counts != NULL};
    vka_dispatch dl = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(c->lengths, true), vka_bind_optional(c->ctx, counts)},
        .push = &push, .groups = {1, 1, 1}, .caller = fn,
    };
    return vka_record_dispatch(c->ctx, cmd, &dl);
}

static vkattn_result append_record(vkattn_kv_cache *c, VkCommandBuffer cmd, const char *fn,
                                   const vkattn_kv_append_io *io)
{
    if (!c || !cmd || !io)
        return vka_fail(c ? c->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !c ? "cache" : !cmd ? "cmd" : "io");
    const vkattn_kv_cache_desc *d = &c->desc;
    uint32_t tnew = 0;
    vkattn_result r;
    if ((r = check_rows(c, fn, "io->k", io->k, d->key_dim, &tnew)) ||
        (r = check_rows(c, fn, "io->v", io->v, d->value_dim, &tnew)) ||
        (io->counts && (r = vka_tensor_check(c->ctx, io->counts, d->batch, fn, "io->counts"))))
        return r;
    if (vka_count4(d->batch, d->kv_heads, tnew, d->key_dim > d->value_dim ? d->key_dim
                                                                      : d->value_dim) >
        UINT32_MAX)
        return vka_fail(c->ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the new rows exceed the kernel's 32-bit indexing", fn);
    if (c->host_known)
        for (uint32_t b = 0; b < d->batch; b++)
            if (tnew > d->capacity - c->host_len[b] && !io->counts)
                return vka_fail(c->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: sequence %u holds %u of %u keys; appending %u more passes "
                                "the capacity",
                                fn, b, c->host_len[b], d->capacity, tnew);
    return append_rows(c, cmd, fn, io->k, io->v, io->counts, tnew);
}

vkattn_result vka_kv_cache_append_flat(vkattn_kv_cache *c, VkCommandBuffer cmd, const char *fn,
                                       vkattn_tensor *k, vkattn_tensor *v, uint32_t tnew)
{
    const vkattn_kv_cache_desc *d = &c->desc;
    vkattn_result r;
    if ((r = vka_tensor_check_types(c->ctx, k, vka_count4(d->batch, d->kv_heads, tnew, d->key_dim),
                                    fn, "the new keys", VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(c->ctx, v, vka_count4(d->batch, d->kv_heads, tnew, d->value_dim),
                                    fn, "the new values", VKA_DTYPES_FLOAT)) ||
        (r = append_rows(c, cmd, fn, k, v, NULL, tnew)))
        return r;
    if (!vka_is_dry(cmd))
        c->host_known = false;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_kv_cache_append_record(vkattn_kv_cache *cache, VkCommandBuffer cmd,
                                            const vkattn_kv_append_io *io)
{
    VKA_RECORD_MODES_THEN(cache, cache->ctx, cmd,
                          vkattn_kv_cache_append_record(cache, cmd, io),
                          vka_kv_cache_refresh(cache, __func__));
    vkattn_result r = append_record(cache, cmd, __func__, io);
    if (r == VKATTN_SUCCESS && !vka_is_dry(cmd))
        cache->host_known = false;
    return r;
}

static vkattn_result reset_record(vkattn_kv_cache *c, VkCommandBuffer cmd, const char *fn,
                                  uint32_t seq)
{
    if (!c || !cmd)
        return vka_fail(c ? c->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !c ? "cache" : "cmd");
    if (seq != VKATTN_KV_CACHE_ALL && seq >= c->desc.batch)
        return vka_fail(c->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: seq is %u; must be < batch (%u) or VKATTN_KV_CACHE_ALL", fn, seq,
                        c->desc.batch);
    vka_kernel kernel = lengths_kernel();
    kv_lengths_push push = {.mode = VKA_KV_LENGTHS_MODE_RESET, .batch = c->desc.batch,
                            .capacity = c->desc.capacity,
                            .seq = seq == VKATTN_KV_CACHE_ALL ? VKA_KV_LENGTHS_ALL : seq};
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(c->lengths, true), vka_bind_optional(c->ctx, NULL)},
        .push = &push, .groups = {1, 1, 1}, .caller = fn,
    };
    return vka_record_dispatch(c->ctx, cmd, &d);
}

vkattn_result vkattn_kv_cache_reset_record(vkattn_kv_cache *cache, VkCommandBuffer cmd,
                                           uint32_t seq)
{
    VKA_RECORD_MODES_THEN(cache, cache->ctx, cmd, vkattn_kv_cache_reset_record(cache, cmd, seq),
                          vka_kv_cache_refresh(cache, __func__));
    vkattn_result r = reset_record(cache, cmd, __func__, seq);
    if (r == VKATTN_SUCCESS && !vka_is_dry(cmd))
        cache->host_known = false;
    return r;
}
