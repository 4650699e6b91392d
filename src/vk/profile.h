/* Device profiles: the limits and optional features of a smaller device that
 * vkattn assumes instead of (never beyond) the real device's. They exist so
 * that CI on one driver proves the kernels fit phones and old GPUs too. */
#ifndef VKA_PROFILE_H
#define VKA_PROFILE_H

#include "vkattn/context.h"

#include <stdbool.h>
#include <stdint.h>

/* Every limit is an upper bound (0 = not clamped), except the offset
 * alignment, which is a lower bound. Features are taken away, never added. */
typedef struct vka_profile {
    const char *name;
    uint32_t max_shared_memory;
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_count[3];
    uint64_t max_storage_buffer_range;
    uint32_t min_storage_buffer_offset_alignment;
    uint32_t max_storage_buffers_per_stage;
    uint64_t max_dispatch_work; /* default watchdog budget; 0 = none */
    bool no_push_descriptors, no_storage_16bit, no_fp16, no_timestamps, no_subgroup_operations;
    bool no_coopmat; /* no cooperative matrices (none of these devices has them yet) */
} vka_profile;

/* The profile called `name` (NULL or "" = "desktop"), or NULL if unknown. */
const vka_profile *vka_profile_find(const char *name);

/* Clamps info's limits and features to the profile's. */
void vka_profile_clamp(const vka_profile *p, vkattn_context_info *info);

#endif /* VKA_PROFILE_H */
