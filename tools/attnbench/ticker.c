/* See ticker.h. The one thread in attnbench: C11 <threads.h> where the C
 * library has it, Win32 on Windows (mingw-w64 has no <threads.h>), POSIX
 * threads elsewhere, as the library's src/core/threads.h chooses. The thread
 * sleeps in short steps and checks a flag, so no condition variable is
 * needed; stopping waits at most one step. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* isatty, nanosleep */
#endif
#include "ticker.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_WIN32)
#include <io.h>
#include <windows.h>
#define TICK_WIN32 1
#define stderr_is_tty() _isatty(_fileno(stderr))
#elif defined(__STDC_NO_THREADS__) || defined(__APPLE__) || \
    (defined(__ANDROID__) && defined(__ANDROID_API__) && __ANDROID_API__ < 30)
#include <pthread.h>
#include <unistd.h>
#define TICK_POSIX 1
#define stderr_is_tty() isatty(STDERR_FILENO)
#else
#include <threads.h>
#include <unistd.h>
#define TICK_C11 1
#define stderr_is_tty() isatty(STDERR_FILENO)
#endif

#define STEP_MS 50 /* how late stop can be */

#if !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
typedef atomic_int stop_flag;
#else
typedef volatile int stop_flag; /* a compiler without C11 atomics: a word-sized flag */
#endif

struct ab_ticker {
    char what[160];
    double start, first_after, every;
    stop_flag stop; /* set by the caller, read by the thread */
    int spoke;      /* the thread's; read after the join */
#if defined(TICK_WIN32)
    HANDLE thread;
#elif defined(TICK_POSIX)
    pthread_t thread;
#else
    thrd_t thread;
#endif
};

static double now_s(void)
{
#if defined(TICK_WIN32) /* mingw's msvcrt headers lack timespec_get */
    return (double)GetTickCount64() * 1e-3;
#else
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
#endif
}

static void sleep_step(void)
{
#if defined(TICK_WIN32)
    Sleep(STEP_MS);
#elif defined(TICK_POSIX)
    struct timespec ts = {0, STEP_MS * 1000000L};
    nanosleep(&ts, NULL);
#else
    struct timespec ts = {0, STEP_MS * 1000000L};
    thrd_sleep(&ts, NULL);
#endif
}

static void run(ab_ticker *t)
{
    double next = t->start + t->first_after;
    while (!t->stop) {
        double now = now_s();
        if (now >= next) {
            fprintf(stderr, "attnbench: %s: %.0f s so far\n", t->what, now - t->start);
            t->spoke = 1;
            next = now + t->every;
        }
        sleep_step();
    }
}

#if defined(TICK_WIN32)
static DWORD WINAPI thread_main(LPVOID p)
{
    run(p);
    return 0;
}
#elif defined(TICK_POSIX)
static void *thread_main(void *p)
{
    run(p);
    return NULL;
}
#else
static int thread_main(void *p)
{
    run(p);
    return 0;
}
#endif

/* $ATTNBENCH_PROGRESS_AFTER, else 2 s; a value that is not digits and a point is ignored */
static double first_after(void)
{
    const char *s = getenv("ATTNBENCH_PROGRESS_AFTER");
    if (!s || !*s || strspn(s, "0123456789.") != strlen(s) || strspn(s, ".") == strlen(s))
        return 2.0;
    return atof(s);
}

ab_ticker *ab_ticker_start(const char *what)
{
    ab_ticker *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->what, sizeof t->what, "%s", what);
    t->start = now_s();
    t->first_after = first_after();
    t->every = stderr_is_tty() ? 1.0 : 10.0;
#if defined(TICK_WIN32)
    t->thread = CreateThread(NULL, 0, thread_main, t, 0, NULL);
    bool ok = t->thread != NULL;
#elif defined(TICK_POSIX)
    bool ok = pthread_create(&t->thread, NULL, thread_main, t) == 0;
#else
    bool ok = thrd_create(&t->thread, thread_main, t) == thrd_success;
#endif
    if (!ok) {
        free(t);
        return NULL;
    }
    return t;
}

void ab_ticker_stop(ab_ticker *t)
{
    if (!t)
        return;
    t->stop = 1;
#if defined(TICK_WIN32)
    WaitForSingleObject(t->thread, INFINITE);
    CloseHandle(t->thread);
#elif defined(TICK_POSIX)
    pthread_join(t->thread, NULL);
#else
    thrd_join(t->thread, NULL);
#endif
    if (t->spoke)
        fprintf(stderr, "attnbench: %s: done in %.1f s\n", t->what, now_s() - t->start);
    free(t);
}
