/* Failure reporting: format once, then log, store per context and per thread. */
#include "core/error.h"
#include "core/logger.h"
#include "vkattn/result.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static VKA_THREAD_LOCAL char thread_last_error[VKA_MESSAGE_MAX];

/* The context embeds its vka_logger as its first member (checked where the
 * context is defined), so core reaches it without knowing the context. */
static vka_logger *logger_of(struct vkattn_context *ctx) { return (vka_logger *)(void *)ctx; }

/* where vka_logger_last_error copies a context's message for this thread */
static VKA_THREAD_LOCAL char thread_context_error[VKA_MESSAGE_MAX];

bool vka_logger_init(vka_logger *logger)
{
    logger->lock_ready = vka_mutex_init(&logger->lock);
    return logger->lock_ready;
}

void vka_logger_destroy(vka_logger *logger)
{
    if (logger->lock_ready)
        vka_mutex_destroy(&logger->lock);
    logger->lock_ready = false;
}

const char *vka_logger_last_error(vka_logger *logger)
{
    if (logger->lock_ready)
        vka_mutex_lock(&logger->lock);
    memcpy(thread_context_error, logger->last_error, sizeof thread_context_error);
    if (logger->lock_ready)
        vka_mutex_unlock(&logger->lock);
    return thread_context_error;
}

static void store(vka_logger *logger, const char *msg)
{
    if (logger->lock_ready)
        vka_mutex_lock(&logger->lock);
    memcpy(logger->last_error, msg, sizeof logger->last_error);
    if (logger->lock_ready)
        vka_mutex_unlock(&logger->lock);
}

void vka_logger_emit(vka_logger *logger, vkattn_log_level level, vkattn_log_source source,
                     const char *message)
{
    if (logger && logger->fn && level <= logger->max_level)
        logger->fn(logger->user, level, source, message);
}

vkattn_result vka_fail(struct vkattn_context *ctx, vkattn_result code, const char *fmt, ...)
{
    char msg[VKA_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    memcpy(thread_last_error, msg, sizeof msg);
    vka_logger *logger = logger_of(ctx);
    if (logger) {
        store(logger, msg);
        vka_logger_emit(logger, VKATTN_LOG_ERROR, VKATTN_LOG_SOURCE_LIBRARY, msg);
    }
    return code;
}

void vka_log(struct vkattn_context *ctx, vkattn_log_level level, const char *fmt, ...)
{
    vka_logger *logger = logger_of(ctx);
    if (!logger || !logger->fn || level > logger->max_level)
        return;
    char msg[VKA_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vka_logger_emit(logger, level, VKATTN_LOG_SOURCE_LIBRARY, msg);
}

const char *vkattn_last_error(void) { return thread_last_error; }
