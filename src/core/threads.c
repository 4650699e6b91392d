/* core/threads.h on C11 threads, POSIX threads or Win32. */
/* Strict C11 (CMAKE_C_EXTENSIONS OFF) hides pthread_mutexattr_settype and
 * PTHREAD_MUTEX_RECURSIVE in glibc's <pthread.h>: ask for POSIX 2008 + XSI. */
#if !defined(_WIN32) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700
#endif
#include "core/threads.h"

#include <stdlib.h>

/* A thread's entry point and argument, handed to the platform's own start
 * routine (whose signature differs from int fn(void *)). */
typedef struct thread_start {
    int (*fn)(void *);
    void *arg;
} thread_start;

#if defined(VKA_THREADS_C11)

bool vka_mutex_init(vka_mutex *m) { return mtx_init(m, mtx_plain) == thrd_success; }
void vka_mutex_destroy(vka_mutex *m) { mtx_destroy(m); }
void vka_mutex_lock(vka_mutex *m) { mtx_lock(m); }
void vka_mutex_unlock(vka_mutex *m) { mtx_unlock(m); }

bool vka_rmutex_init(vka_rmutex *m) { return mtx_init(m, mtx_plain | mtx_recursive) == thrd_success; }
void vka_rmutex_destroy(vka_rmutex *m) { mtx_destroy(m); }
void vka_rmutex_lock(vka_rmutex *m) { mtx_lock(m); }
void vka_rmutex_unlock(vka_rmutex *m) { mtx_unlock(m); }

void vka_call_once(vka_once *flag, void (*fn)(void)) { call_once(flag, fn); }

vka_thread vka_thread_self(void) { return thrd_current(); }
bool vka_thread_equal(vka_thread a, vka_thread b) { return thrd_equal(a, b) != 0; }

bool vka_thread_create(vka_thread *t, int (*fn)(void *), void *arg)
{
    return thrd_create(t, fn, arg) == thrd_success;
}
void vka_thread_join(vka_thread t) { thrd_join(t, NULL); }

#elif defined(VKA_THREADS_POSIX)

bool vka_mutex_init(vka_mutex *m) { return pthread_mutex_init(m, NULL) == 0; }
void vka_mutex_destroy(vka_mutex *m) { pthread_mutex_destroy(m); }
void vka_mutex_lock(vka_mutex *m) { pthread_mutex_lock(m); }
void vka_mutex_unlock(vka_mutex *m) { pthread_mutex_unlock(m); }

bool vka_rmutex_init(vka_rmutex *m)
{
    pthread_mutexattr_t attr;
    if (pthread_mutexattr_init(&attr) != 0)
        return false;
    bool ok = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0 &&
              pthread_mutex_init(m, &attr) == 0;
    pthread_mutexattr_destroy(&attr);
    return ok;
}
void vka_rmutex_destroy(vka_rmutex *m) { pthread_mutex_destroy(m); }
void vka_rmutex_lock(vka_rmutex *m) { pthread_mutex_lock(m); }
void vka_rmutex_unlock(vka_rmutex *m) { pthread_mutex_unlock(m); }

void vka_call_once(vka_once *flag, void (*fn)(void)) { pthread_once(flag, fn); }

vka_thread vka_thread_self(void) { return pthread_self(); }
bool vka_thread_equal(vka_thread a, vka_thread b) { return pthread_equal(a, b) != 0; }

static void *posix_start(void *p)
{
    thread_start s = *(thread_start *)p;
    free(p);
    s.fn(s.arg);
    return NULL;
}

bool vka_thread_create(vka_thread *t, int (*fn)(void *), void *arg)
{
    thread_start *s = malloc(sizeof *s);
    if (!s)
        return false;
    *s = (thread_start){fn, arg};
    if (pthread_create(t, NULL, posix_start, s) != 0) {
        free(s);
        return false;
    }
    return true;
}
void vka_thread_join(vka_thread t) { pthread_join(t, NULL); }

#else /* VKA_THREADS_WIN32 */

#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <process.h>

_Static_assert(sizeof(SRWLOCK) == sizeof(void *), "vka_mutex holds an SRWLOCK");
_Static_assert(sizeof(INIT_ONCE) == sizeof(void *), "vka_once holds an INIT_ONCE");
_Static_assert(sizeof(DWORD) == sizeof(unsigned long), "vka_thread.id holds a DWORD");

/* An SRWLOCK is a pointer-sized struct whose zero value is "unlocked"; it
 * needs no destruction. vka_mutex stores it in place. */
static SRWLOCK *srw(vka_mutex *m) { return (SRWLOCK *)(void *)&m->srw; }

bool vka_mutex_init(vka_mutex *m)
{
    InitializeSRWLock(srw(m));
    return true;
}
void vka_mutex_destroy(vka_mutex *m) { (void)m; }
void vka_mutex_lock(vka_mutex *m) { AcquireSRWLockExclusive(srw(m)); }
void vka_mutex_unlock(vka_mutex *m) { ReleaseSRWLockExclusive(srw(m)); }

/* SRW locks are not recursive; a critical section is. */
bool vka_rmutex_init(vka_rmutex *m)
{
    CRITICAL_SECTION *cs = malloc(sizeof *cs);
    if (!cs)
        return false;
    InitializeCriticalSection(cs);
    m->cs = cs;
    return true;
}
void vka_rmutex_destroy(vka_rmutex *m)
{
    if (!m->cs)
        return;
    DeleteCriticalSection(m->cs);
    free(m->cs);
    m->cs = NULL;
}
void vka_rmutex_lock(vka_rmutex *m) { EnterCriticalSection(m->cs); }
void vka_rmutex_unlock(vka_rmutex *m) { LeaveCriticalSection(m->cs); }

typedef struct once_call {
    void (*fn)(void);
} once_call;

static BOOL CALLBACK once_trampoline(PINIT_ONCE once, PVOID param, PVOID *context)
{
    (void)once;
    (void)context;
    ((once_call *)param)->fn();
    return TRUE;
}

void vka_call_once(vka_once *flag, void (*fn)(void))
{
    once_call call = {fn};
    InitOnceExecuteOnce((PINIT_ONCE)(void *)&flag->init_once, once_trampoline, &call, NULL);
}

vka_thread vka_thread_self(void) { return (vka_thread){NULL, GetCurrentThreadId()}; }
bool vka_thread_equal(vka_thread a, vka_thread b) { return a.id == b.id; }

static unsigned __stdcall win32_start(void *p)
{
    thread_start s = *(thread_start *)p;
    free(p);
    return (unsigned)s.fn(s.arg);
}

bool vka_thread_create(vka_thread *t, int (*fn)(void *), void *arg)
{
    thread_start *s = malloc(sizeof *s);
    if (!s)
        return false;
    *s = (thread_start){fn, arg};
    unsigned id = 0;
    uintptr_t h = _beginthreadex(NULL, 0, win32_start, s, 0, &id);
    if (!h) {
        free(s);
        return false;
    }
    *t = (vka_thread){(void *)h, id};
    return true;
}

void vka_thread_join(vka_thread t)
{
    WaitForSingleObject(t.handle, INFINITE);
    CloseHandle(t.handle);
}

#endif
