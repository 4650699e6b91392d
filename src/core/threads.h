/* The one platform header: mutexes, once-only initialization, thread
 * identity, thread-local storage and (for tests) thread creation, on
 *   - C11 <threads.h> where the C library has it (glibc, musl, Android API 30+,
 *     MSVC 17.8+ outside Windows builds),
 *   - Win32 (SRW locks, critical sections, InitOnce, _beginthreadex) on
 *     Windows, whatever the compiler (mingw-w64 has no <threads.h>),
 *   - POSIX threads elsewhere (Android API 29, Apple).
 * Nothing else in src/ (or tests/) forks on the platform: any new
 * platform-specific need goes here or in threads.c. */
#ifndef VKA_CORE_THREADS_H
#define VKA_CORE_THREADS_H

#include <stdbool.h>

#if defined(_WIN32)
#define VKA_THREADS_WIN32 1
#elif defined(__STDC_NO_THREADS__) || defined(__APPLE__) ||                                        \
    (defined(__ANDROID__) && defined(__ANDROID_API__) && __ANDROID_API__ < 30)
#define VKA_THREADS_POSIX 1
#else
#define VKA_THREADS_C11 1
#endif

#if defined(VKA_THREADS_C11)
#include <threads.h>
typedef mtx_t vka_mutex;
typedef mtx_t vka_rmutex;
typedef once_flag vka_once;
#define VKA_ONCE_INIT ONCE_FLAG_INIT
typedef thrd_t vka_thread;
#elif defined(VKA_THREADS_POSIX)
#include <pthread.h>
typedef pthread_mutex_t vka_mutex;
typedef pthread_mutex_t vka_rmutex;
typedef pthread_once_t vka_once;
#define VKA_ONCE_INIT PTHREAD_ONCE_INIT
typedef pthread_t vka_thread;
#else
/* Win32 types without <windows.h> in every file: an SRWLOCK and an INIT_ONCE
 * are one pointer each (threads.c checks the sizes); a CRITICAL_SECTION
 * (recursive) lives on the heap. */
typedef struct vka_mutex {
    void *srw;
} vka_mutex;
typedef struct vka_rmutex {
    void *cs;
} vka_rmutex;
typedef struct vka_once {
    void *init_once;
} vka_once;
#define VKA_ONCE_INIT {0}
typedef struct vka_thread {
    void *handle;        /* from _beginthreadex; NULL for vka_thread_self */
    unsigned long id;    /* the Win32 thread id: what identity compares */
} vka_thread;
#endif

/* Storage class of a per-thread variable. */
#if defined(_MSC_VER) && !defined(__clang__)
#define VKA_THREAD_LOCAL __declspec(thread)
#else
#define VKA_THREAD_LOCAL _Thread_local
#endif

/* A non-recursive mutex. init returns false if the system refused. */
bool vka_mutex_init(vka_mutex *m);
void vka_mutex_destroy(vka_mutex *m);
void vka_mutex_lock(vka_mutex *m);
void vka_mutex_unlock(vka_mutex *m);

/* A mutex its owner may lock again (unlocked as often as locked). */
bool vka_rmutex_init(vka_rmutex *m);
void vka_rmutex_destroy(vka_rmutex *m);
void vka_rmutex_lock(vka_rmutex *m);
void vka_rmutex_unlock(vka_rmutex *m);

/* Runs fn exactly once per flag, whichever thread gets there first; the
 * others wait until it has returned. */
void vka_call_once(vka_once *flag, void (*fn)(void));

/* The calling thread, for identity only (vka_thread_equal). */
vka_thread vka_thread_self(void);
bool vka_thread_equal(vka_thread a, vka_thread b);

/* Starts fn(arg) on a new thread; false if it could not. join waits for it
 * and releases it. The library itself starts no thread: these are for the
 * tests that play a multi-threaded app. */
bool vka_thread_create(vka_thread *t, int (*fn)(void *), void *arg);
void vka_thread_join(vka_thread t);

#endif /* VKA_CORE_THREADS_H */
