/* The profile table. docs/PORTABILITY.md says where each number comes from;
 * keep the two in step. */
#include "vk/profile.h"

#include <stdio.h>
#include <string.h>

static const vka_profile profiles[] = {
    {.name = "desktop"},
    /* The Vulkan 1.1 guaranteed minimums (the spec's "Required Limits"
     * table), and none of the optional features. */
    {
        .name = "mobile-min",
        .max_shared_memory = 16384,
        .max_workgroup_invocations = 128,
        .max_workgroup_size = {128, 128, 64},
        .max_workgroup_count = {65535, 65535, 65535},
        .max_storage_buffer_range = 1u << 27,
        .min_storage_buffer_offset_alignment = 256,
        .max_storage_buffers_per_stage = 4,
        .max_dispatch_work = 1ull << 30,
        .no_push_descriptors = true,
        .no_storage_16bit = true,
        .no_fp16 = true,
        .no_timestamps = true,
        .no_subgroup_operations = true,
        .no_coopmat = true,
    },
    /* Arm Mali, Bifrost and Valhall generations on Arm's driver. */
    {
        .name = "mali",
        .max_shared_memory = 32768,
        .max_workgroup_invocations = 384,
        .max_workgroup_size = {384, 384, 384},
        .max_workgroup_count = {65535, 65535, 65535},
        .max_storage_buffer_range = 1u << 27,
        .min_storage_buffer_offset_alignment = 64,
        .max_storage_buffers_per_stage = 35,
        .max_dispatch_work = 1ull << 31,
        .no_push_descriptors = true,
        .no_coopmat = true,
    },
    /* Qualcomm Adreno 6xx/7xx on Qualcomm's driver. */
    {
        .name = "adreno",
        .max_shared_memory = 32768,
        .max_workgroup_invocations = 1024,
        .max_workgroup_size = {1024, 1024, 64},
        .max_workgroup_count = {65535, 65535, 65535},
        .max_storage_buffer_range = 1u << 27,
        .min_storage_buffer_offset_alignment = 64,
        .max_storage_buffers_per_stage = 24,
        .max_dispatch_work = 1ull << 31,
        .no_coopmat = true,
    },
};
#define N_PROFILES (sizeof profiles / sizeof profiles[0])

const char *const *vkattn_profile_names(uint32_t *count)
{
    static const char *const names[N_PROFILES] = {"desktop", "mobile-min", "mali", "adreno"};
    _Static_assert(sizeof names / sizeof names[0] == N_PROFILES, "one name per profile");
    if (count)
        *count = (uint32_t)N_PROFILES;
    return names;
}

const vka_profile *vka_profile_find(const char *name)
{
    if (!name || !*name)
        return &profiles[0];
    for (size_t i = 0; i < N_PROFILES; i++)
        if (strcmp(profiles[i].name, name) == 0)
            return &profiles[i];
    return NULL;
}

static void clamp_u32(uint32_t *value, uint32_t limit)
{
    if (limit && *value > limit)
        *value = limit;
}

void vka_profile_clamp(const vka_profile *p, vkattn_context_info *info)
{
    snprintf(info->profile, sizeof info->profile, "%s", p->name);
    clamp_u32(&info->max_shared_memory, p->max_shared_memory);
    clamp_u32(&info->max_workgroup_invocations, p->max_workgroup_invocations);
    for (int i = 0; i < 3; i++) {
        clamp_u32(&info->max_workgroup_size[i], p->max_workgroup_size[i]);
        clamp_u32(&info->max_workgroup_count[i], p->max_workgroup_count[i]);
    }
    if (p->max_storage_buffer_range && info->max_storage_buffer_range > p->max_storage_buffer_range)
        info->max_storage_buffer_range = p->max_storage_buffer_range;
    if (info->min_storage_buffer_offset_alignment < p->min_storage_buffer_offset_alignment)
        info->min_storage_buffer_offset_alignment = p->min_storage_buffer_offset_alignment;
    clamp_u32(&info->max_storage_buffers_per_stage, p->max_storage_buffers_per_stage);
    if (p->no_push_descriptors)
        info->push_descriptors = false;
    if (p->no_storage_16bit)
        info->storage_buffer_16bit = false;
    if (p->no_fp16)
        info->fp16 = false;
    if (p->no_timestamps)
        info->timestamps = false;
    if (p->no_subgroup_operations)
        info->subgroup_operations = false;
    if (p->no_coopmat) {
        info->coopmat_flavours = 0;
        info->coopmat_f16_16x16x16 = false;
        info->coopmat_enabled = false;
    }
}
