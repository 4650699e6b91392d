/* vkattn_context_pipeline_stats: the driver's statistics of each pipeline
 * (VK_KHR_pipeline_executable_properties), captured at creation when the
 * context was asked to (vkattn_context_advanced.capture_pipeline_stats). */
#include "vkattn/advanced.h"

#include "core/error.h"
#include "vk/context.h"

#include <stdlib.h>
#include <string.h>

static double stat_value(const VkPipelineExecutableStatisticKHR *s) {
    switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        return s->value.b32 ? 1.0 : 0.0;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        return (double)s->value.i64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        return (double)s->value.u64;
    default:
        return s->value.f64;
    }
}

/* Every statistic of every executable of pipeline `p` (a compute pipeline
 * has one executable; a driver may report more, e.g. per compile stage). */
static vkattn_result report(struct vkattn_context *ctx, uint32_t index, const vka_pipeline *p,
                            vkattn_pipeline_stat_fn fn, void *user) {
    VkPipelineInfoKHR pinfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR,
                               .pipeline = p->pipeline};
    uint32_t n_exec = 0;
    VkResult vr = ctx->vk.vkGetPipelineExecutablePropertiesKHR(ctx->device, &pinfo, &n_exec, NULL);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr,
                           "vkattn_context_pipeline_stats: vkGetPipelineExecutablePropertiesKHR");
    for (uint32_t e = 0; e < n_exec; e++) {
        VkPipelineExecutableInfoKHR einfo = {.sType =
                                                 VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                             .pipeline = p->pipeline,
                                             .executableIndex = e};
        uint32_t n = 0;
        vr = ctx->vk.vkGetPipelineExecutableStatisticsKHR(ctx->device, &einfo, &n, NULL);
        if (vr != VK_SUCCESS)
            return vka_vk_fail(
                ctx, vr, "vkattn_context_pipeline_stats: vkGetPipelineExecutableStatisticsKHR");
        VkPipelineExecutableStatisticKHR *st = calloc(n ? n : 1, sizeof *st);
        if (!st)
            return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                            "vkattn_context_pipeline_stats: out of host memory");
        for (uint32_t i = 0; i < n; i++)
            st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
        vr = ctx->vk.vkGetPipelineExecutableStatisticsKHR(ctx->device, &einfo, &n, st);
        if (vr == VK_SUCCESS || vr == VK_INCOMPLETE)
            for (uint32_t i = 0; i < n; i++)
                fn(user, index, p->key.name, st[i].name, stat_value(&st[i]));
        free(st);
        if (vr != VK_SUCCESS && vr != VK_INCOMPLETE)
            return vka_vk_fail(
                ctx, vr, "vkattn_context_pipeline_stats: vkGetPipelineExecutableStatisticsKHR");
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_pipeline_stats(vkattn_context *ctx, vkattn_pipeline_stat_fn fn,
                                            void *user) {
    if (!ctx || !fn)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_pipeline_stats: %s is NULL", !ctx ? "ctx" : "fn");
    if (!ctx->pipeline_stats)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED, "vkattn_context_pipeline_stats: %s",
                        ctx->want_pipeline_stats
                            ? "the device does not offer VK_KHR_pipeline_executable_properties"
                            : "the context was created without "
                              "vkattn_context_advanced.capture_pipeline_stats");
    /* A snapshot of the list: pipelines are never destroyed before the
     * context, so the pointers stay valid while the lock is released. */
    vka_mutex_lock(&ctx->pipeline_lock);
    const uint32_t n = ctx->n_pipelines;
    vka_pipeline **list = malloc((n ? n : 1) * sizeof *list);
    if (list && n)
        memcpy(list, ctx->pipelines, n * sizeof *list);
    vka_mutex_unlock(&ctx->pipeline_lock);
    if (!list)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "vkattn_context_pipeline_stats: out of host memory");
    vkattn_result r = VKATTN_SUCCESS;
    for (uint32_t i = 0; i < n && r == VKATTN_SUCCESS; i++)
        r = report(ctx, i, list[i], fn, user);
    free(list);
    return r;
}
