/* The logger a context owns: the app's callback and the last failure message.
 * struct vkattn_context embeds it as its first member, so core/error.c finds
 * it from a context pointer without depending on src/vk. */
#ifndef VKA_CORE_LOGGER_H
#define VKA_CORE_LOGGER_H

#include "vkattn/result.h"

#include <stdbool.h>
#include "core/threads.h"

#define VKA_MESSAGE_MAX 512

typedef struct vka_logger {
    vkattn_log_fn fn; /* NULL: messages are only stored */
    void *user;
    vkattn_log_level max_level; /* messages above this level are not sent */
    char last_error[VKA_MESSAGE_MAX];
    /* Guards last_error: recording threads may fail at once. */
    vka_mutex lock;
    bool lock_ready;
} vka_logger;

/* Init/destroy of the lock; a logger without it is used by one thread only. */
bool vka_logger_init(vka_logger *logger);
void vka_logger_destroy(vka_logger *logger);

/* A copy of the logger's last error in this thread's storage: stays valid
 * until this thread asks again, whatever other threads fail with meanwhile. */
const char *vka_logger_last_error(vka_logger *logger);

/* Sends one message through the logger (NULL logger: dropped). */
void vka_logger_emit(vka_logger *logger, vkattn_log_level level, vkattn_log_source source,
                     const char *message);

#endif /* VKA_CORE_LOGGER_H */
