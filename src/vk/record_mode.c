/* The record modes' begin and end (vk/record_mode.h). */
#include "vk/record_mode.h"

#include "core/error.h"
#include "vk/submit.h"

/* The dry marker is the address of a library object: never 1 or 2. */
_Static_assert(sizeof(VkCommandBuffer) == sizeof(uintptr_t), "VkCommandBuffer is a pointer");

vkattn_result vka_record_mode_begin(struct vkattn_context *ctx, const char *fn, const char *what,
                                    VkCommandBuffer *cmd)
{
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (*cmd == VK_NULL_HANDLE)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: cmd is NULL: give a command buffer, VKATTN_PREPARE or "
                        "VKATTN_RUN_NOW",
                        fn);
    if (*cmd == VKATTN_PREPARE) {
        *cmd = VKA_DRY_CMD;
        return VKATTN_SUCCESS;
    }
    return vka_begin(ctx, cmd);
}

vkattn_result vka_record_mode_end(struct vkattn_context *ctx, VkCommandBuffer mode,
                                  VkCommandBuffer cmd, vkattn_result status)
{
    if (mode == VKATTN_RUN_NOW)
        return vka_end_submit_wait(ctx, cmd, status);
    return status;
}

vkattn_result vka_require_command_buffer(struct vkattn_context *ctx, const char *fn,
                                         VkCommandBuffer cmd)
{
    if (cmd == VK_NULL_HANDLE)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: cmd is NULL", fn);
    if (cmd == VKATTN_PREPARE || cmd == VKATTN_RUN_NOW)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: cmd is %s: this function records into a command buffer of the "
                        "app's (the sentinels are for *_record calls)",
                        fn, cmd == VKATTN_PREPARE ? "VKATTN_PREPARE" : "VKATTN_RUN_NOW");
    return VKATTN_SUCCESS;
}
