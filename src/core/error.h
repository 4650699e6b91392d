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

/* Logs a message that is not a failure (warnings, info). ctx may be NULL. */
void vka_log(struct vkattn_context *ctx, vkattn_log_level level, const char *fmt, ...)
    VKA_PRINTF(3, 4);

#endif /* VKA_CORE_ERROR_H */
