/* The three modes of every public *_record (vkattn/context.h): the app's
 * command buffer, VKATTN_PREPARE (a dry recording, vk/prepare.h) or
 * VKATTN_RUN_NOW (the context's one-shot command buffer, submitted and waited
 * for, vk/submit.h). Resolved once, at the public boundary: the first line of
 * each public *_record is VKA_RECORD_MODES, which re-invokes the same call
 * with the real or dry command buffer in `cmd`. Inside the library only real
 * and dry command buffers travel. */
#ifndef VKA_RECORD_MODE_H
#define VKA_RECORD_MODE_H

#include "core/error.h"
#include "vk/prepare.h"
#include "vkattn/context.h"

/* NULL or a sentinel: the call needs VKA_RECORD_MODES' work first. */
static inline bool vka_is_record_mode(VkCommandBuffer cmd)
{
    return cmd == VK_NULL_HANDLE || cmd == VKATTN_PREPARE || cmd == VKATTN_RUN_NOW;
}

/* For the functions that take only a real command buffer (hand-overs,
 * timers, a slicer's slices): NULL or a sentinel is INVALID_ARGUMENT naming
 * fn, where a sentinel would otherwise reach vkCmd* as a handle. */
vkattn_result vka_require_command_buffer(struct vkattn_context *ctx, const char *fn,
                                         VkCommandBuffer cmd);

/* Turns *cmd from a sentinel into the command buffer to record into (the dry
 * marker, or the begun one-shot one). Fails for a NULL ctx (the public
 * function's first argument `what` was NULL) or a NULL *cmd, naming fn. */
vkattn_result vka_record_mode_begin(struct vkattn_context *ctx, const char *fn, const char *what,
                                    VkCommandBuffer *cmd);
/* After the re-invoked call: submits and waits for VKATTN_RUN_NOW (or drops
 * the recording if `status` failed); returns the first failure. */
vkattn_result vka_record_mode_end(struct vkattn_context *ctx, VkCommandBuffer mode,
                                  VkCommandBuffer cmd, vkattn_result status);

/* `obj` is the public function's first parameter (context, layer or cache)
 * and `ctx` its context, evaluated only when obj is not NULL; `cmd` the
 * command buffer parameter, assigned here; `call` the same function called
 * again with it; `after_run` what a VKATTN_RUN_NOW does once the work
 * completed (VKATTN_SUCCESS: nothing). Past it, obj is not NULL and cmd is
 * a real or dry command buffer: a NULL obj or cmd fails here, naming it, so
 * the public function checks neither again. */
#define VKA_RECORD_MODES_THEN(obj, ctx, cmd, call, after_run)                    \
    do {                                                                         \
        if (vka_is_record_mode(cmd)) {                                           \
            const VkCommandBuffer vka_mode_ = (cmd);                             \
            vkattn_result vka_r_ = vka_record_mode_begin((obj) ? (ctx) : NULL, __func__, \
                                                         #obj, &(cmd));          \
            if (vka_r_ != VKATTN_SUCCESS)                                        \
                return vka_r_;                                                   \
            vka_r_ = vka_record_mode_end((ctx), vka_mode_, (cmd), (call));       \
            if (vka_r_ == VKATTN_SUCCESS && vka_mode_ == VKATTN_RUN_NOW)         \
                vka_r_ = (after_run);                                            \
            return vka_r_;                                                       \
        }                                                                        \
        if (!(obj))                                                              \
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", \
                            __func__, #obj);                                     \
    } while (0)

#define VKA_RECORD_MODES(obj, ctx, cmd, call) \
    VKA_RECORD_MODES_THEN(obj, ctx, cmd, call, VKATTN_SUCCESS)

#endif /* VKA_RECORD_MODE_H */
