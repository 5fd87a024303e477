/* Preloaded into `threadtime attach` (as root) by test_attach.sh: makes the
 * target exit, and its pid name another process, just before the attacher
 * opens /proc/PID/cwd. That process, started here, lives in a mount
 * namespace of its own, as a container's would; an attacher that does not
 * notice the change enters it and says so.
 *
 *   TT_RECYCLE_PID   the target's pid
 *   TT_RECYCLE_DONE  a file this writes: "reused" once the pid names the new
 *                    process, else what went wrong
 *
 * The target must be reaped by its parent once killed (test_attach.sh's
 * shell does that). The new process is killed when the attacher exits. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int (*real_open)(const char *, int, ...);

static void report(const char *text)
{
    const char *done = getenv("TT_RECYCLE_DONE");
    int fd = done ? real_open(done, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            perror("recycle_pid");
        close(fd);
    }
}

/* Waits (bounded: 10 s in 10 ms steps) until pid is no process at all,
 * its parent having reaped it. A wait for a state, not a timing check. */
static int gone(pid_t pid)
{
    struct timespec step = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 1000; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return 1;
        nanosleep(&step, NULL);
    }
    return 0;
}

/* Starts a process whose pid is pid, through the kernel's ns_last_pid (as
 * checkpoint/restore does); a fork elsewhere on the machine can take the
 * pid first, so it tries again. 1 when it did. */
static int take_pid(pid_t pid)
{
    for (int attempt = 0; attempt < 200; attempt++) {
        int fd = real_open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
        char last[16];
        int n = snprintf(last, sizeof last, "%d", (int)pid - 1);
        int ok = fd >= 0 && write(fd, last, (size_t)n) == n;
        if (fd >= 0)
            close(fd);
        if (!ok)
            return 0;
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) != 0)
            return 0;
        pid_t parent = getpid(), child = fork();
        if (child == 0) {
            /* Dies with the attacher, holds none of its output open. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            int null = real_open("/dev/null", O_RDWR);
            if (getppid() != parent || getpid() != pid || null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
                unshare(CLONE_NEWNS) != 0)
                _exit(1);
            if (write(ready[1], "", 1) != 1)
                _exit(1);
            for (;;)
                pause();
        }
        close(ready[1]);
        char c;
        /* Until the new process is in its own namespace (or has failed). */
        int up = child > 0 && read(ready[0], &c, 1) == 1;
        close(ready[0]);
        if (child == pid && up)
            return 1;
        if (child > 0) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
    }
    return 0;
}

static void recycle(const char *path)
{
    static int done;
    int pid;
    char tail[8];
    const char *want = getenv("TT_RECYCLE_PID");
    if (done || !want || sscanf(path, "/proc/%d/%7s", &pid, tail) != 2 || strcmp(tail, "cwd") != 0 ||
        pid != atoi(want))
        return;
    done = 1;
    if (kill(pid, SIGKILL) != 0 || !gone(pid))
        report("the target did not go away");
    else if (!take_pid(pid))
        report("no process got the pid (needs root and /proc/sys/kernel/ns_last_pid)");
    else
        report("reused");
}

__attribute__((visibility("default"))) int open(const char *path, int flags, ...)
{
    if (!real_open)
        real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    recycle(path);
    return real_open(path, flags, mode);
}
