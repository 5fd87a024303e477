/* The thread calls of the platform that glibc 2.17 (the floor of the shipped
 * natives, docs/platforms.md) has no wrapper for, as raw system calls: glibc
 * added gettid() in 2.30 and tgkill() in 2.30, and a library built against
 * a newer glibc that called them would not load on an older one. The raw
 * call is what those wrappers do, so the cost is the same. */
#ifndef TT_PRIM_THREAD_H
#define TT_PRIM_THREAD_H

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The caller's kernel thread id. */
static inline pid_t tt__gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* Sends sig (0: only checks that the thread exists) to thread tid of
 * process pid; 0 or -1 with errno, as tgkill(2). */
static inline int tt__tgkill(pid_t pid, pid_t tid, int sig)
{
    return (int)syscall(SYS_tgkill, pid, tid, sig);
}

#endif /* TT_PRIM_THREAD_H */
