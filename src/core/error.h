/* Reporting failures: one specific sentence per failure, sent to the context's
 * logger, stored as the context's last error and as this thread's last error
 * (for functions that have no context, such as the CPU reference). */
#ifndef VKA_CORE_ERROR_H
#define VKA_CORE_ERROR_H

#include "vkattn/result.h"

struct vkattn_context;

/* gnu_printf: C99 formats (%zu, %llu) whatever the C library's printf is
 * called (mingw-w64's would be msvcrt's; the library is built with its ISO
 * stdio, src/CMakeLists.txt). */
#if defined(__GNUC__) && !defined(__clang__)
#define VKA_PRINTF(fmt_index, first_arg) __attribute__((format(gnu_printf, fmt_index, first_arg)))
#elif defined(__clang__)
#define VKA_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define VKA_PRINTF(fmt_index, first_arg)
#endif

/* Formats the message, logs it at ERROR level, stores it, returns `code`.
 * ctx may be NULL. Usage: return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
 *                                "vkattn_x: m is 0; must be >= 1"); */
vkattn_result vka_fail(struct vkattn_context *ctx, vkattn_result code, const char *fmt, ...)
    VKA_PRINTF(3, 4);

/* The NULL checks that open public functions, each returning
 * VKATTN_ERROR_INVALID_ARGUMENT from the calling function and naming the
 * argument by its parameter name, so a message cannot misname it.
 *
 * VKA_CREATE_ARGS: a *_create(ctx, ..., out) needs out, cleared first so
 * that every failure leaves *out NULL, and ctx ("vkattn_x_create: out is
 * NULL", "...: ctx is NULL"). */
#define VKA_CREATE_ARGS(ctx, out)                                                                 \
    do {                                                                                          \
        if (!(out))                                                                               \
            return vka_fail((ctx), VKATTN_ERROR_INVALID_ARGUMENT, "%s: out is NULL", __func__);   \
        *(out) = NULL;                                                                            \
        if (!(ctx))                                                                               \
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", __func__);    \
    } while (0)

/* VKA_REQUIRE_OWNER_AND(fn, owner, owner_ctx, arg): a function of an object
 * (a layer) taking a pointer argument: "fn: layer is NULL" or "fn: w is
 * NULL", reported on the owner's context (`owner_ctx`, read only when owner
 * is not NULL). */
#define VKA_REQUIRE_OWNER_AND(fn, owner, owner_ctx, arg)                                          \
    do {                                                                                          \
        if (!(owner) || !(arg))                                                                   \
            return vka_fail((owner) ? (owner_ctx) : NULL, VKATTN_ERROR_INVALID_ARGUMENT,          \
                            "%s: %s is NULL", (fn), !(owner) ? #owner : #arg);                    \
    } while (0)

/* Logs a message that is not a failure (warnings, info). ctx may be NULL. */
void vka_log(struct vkattn_context *ctx, vkattn_log_level level, const char *fmt, ...)
    VKA_PRINTF(3, 4);

#endif /* VKA_CORE_ERROR_H */
