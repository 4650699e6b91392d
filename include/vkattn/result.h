/* vkattn/result.h - result codes, log levels and the logger callback.
 *
 * Every fallible vkattn function returns a vkattn_result: 0 is success, negative
 * values are errors. The codes and their default messages come from one X-macro
 * list, so names, numbers and messages never drift apart. The specific sentence
 * for a failure ("vkattn_mha_create: num_heads is 0; must be >= 1") goes to the
 * context's logger and to vkattn_context_last_error().
 *
 * Thread safety: everything here is pure and may be called from any thread.
 */
#ifndef VKATTN_RESULT_H
#define VKATTN_RESULT_H

#include "vkattn/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, default message) */
#define VKATTN_RESULT_LIST(X)                                                            \
    X(VKATTN_SUCCESS, 0, "success")                                                      \
    X(VKATTN_ERROR_INVALID_ARGUMENT, -1, "an argument is invalid")                       \
    X(VKATTN_ERROR_OUT_OF_HOST_MEMORY, -2, "out of host memory")                         \
    X(VKATTN_ERROR_OUT_OF_DEVICE_MEMORY, -3, "out of device memory")                     \
    X(VKATTN_ERROR_NO_VULKAN, -4, "no Vulkan loader could be found")                     \
    X(VKATTN_ERROR_NO_DEVICE, -5, "no usable Vulkan device")                             \
    X(VKATTN_ERROR_UNSUPPORTED, -6, "the device lacks a required feature or extension") \
    X(VKATTN_ERROR_SIZE_OVERFLOW, -7, "a size overflows")                                \
    X(VKATTN_ERROR_DEVICE_LIMIT, -8, "a size exceeds a device limit")                    \
    X(VKATTN_ERROR_VULKAN, -9, "a Vulkan call failed")                                   \
    X(VKATTN_ERROR_DEVICE_LOST, -10, "the Vulkan device was lost")                       \
    X(VKATTN_ERROR_NOT_READY, -11, "the result is not available yet")

typedef enum vkattn_result {
#define VKATTN_X_ENUM(name, value, msg) name = value,
    VKATTN_RESULT_LIST(VKATTN_X_ENUM)
#undef VKATTN_X_ENUM
} vkattn_result;

/* The code's name ("VKATTN_ERROR_NO_DEVICE"); "VKATTN_UNKNOWN_RESULT" for others. */
VKATTN_API const char *vkattn_result_name(vkattn_result result);

/* The code's generic message; the specific one is in the log and last error. */
VKATTN_API const char *vkattn_result_message(vkattn_result result);

typedef enum vkattn_log_level {
    VKATTN_LOG_ERROR = 0,
    VKATTN_LOG_WARN = 1,
    VKATTN_LOG_INFO = 2,
    VKATTN_LOG_DEBUG = 3,
} vkattn_log_level;

/* Where a log message comes from. Validation-layer messages are forwarded with
 * VKATTN_LOG_SOURCE_VALIDATION so tests can fail on them. */
typedef enum vkattn_log_source {
    VKATTN_LOG_SOURCE_LIBRARY = 0,
    VKATTN_LOG_SOURCE_VALIDATION = 1,
} vkattn_log_source;

/* This thread's last failure message from any vkattn function, context or not
 * (the CPU reference has no context). Empty string if none. The pointer stays
 * valid for the thread's lifetime; the text changes with the next failure. */
VKATTN_API const char *vkattn_last_error(void);

/* Called synchronously from the thread that hit the condition. */
typedef void (*vkattn_log_fn)(void *user, vkattn_log_level level, vkattn_log_source source,
                              const char *message);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_RESULT_H */
