/* Version, error text, and the one door to the environment. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

const char *tt_version(void) { return TT_VERSION_STRING; }

const char *tt__env(const char *name)
{
    /* secure_getenv answers NULL when the kernel set AT_SECURE for this
     * process: setuid, setgid, file capabilities, or an LSM transition.
     * Such a program runs with rights its caller lacks, and the variables
     * name files to create, replace or truncate. */
    return secure_getenv(name);
}

const char *tt_strerror(int64_t code)
{
    if (code == 0)
        return "success";
    /* Range first: negating INT64_MIN would overflow. The kernel's errnos
     * all lie below 4096 (MAX_ERRNO). */
    if (code < -4095 || code > 4095)
        return "unknown error";
    int e = (int)(code < 0 ? -code : code);
    switch (e) {
    case ESRCH: return "no such thread or process (it may have exited)";
    case EINVAL: return "invalid argument (or a thread of another process)";
    case EFAULT: return "NULL pointer argument";
    case ENOTSUP: return "method not available on this system";
    /* The hint is scoped to the clock calls: the same code comes from a
     * file that may not be replaced (a sticky directory), and a dump's
     * rename must not be blamed on seccomp. */
    case EPERM:
        return "operation not permitted (from a CPU clock call: a seccomp filter refuses clockids; from a "
               "delay read: taskstats answers only a caller with CAP_NET_ADMIN)";
    case ENODATA:
        return "no data (from a delay read: delay accounting is off; sysctl -w kernel.task_delayacct=1 (root) "
               "turns it on, and threads count from then)";
    case ENOSYS: return "function not implemented (CPU clocks refused, and no fallback answered)";
    default: break;
    }
    /* GNU strerror_r returns glibc's static text for an errno it knows, and
     * writes "Unknown error N" into buf for one it does not: that text
     * would not outlive this call (strerror() has the same problem with
     * its own buffer), so it becomes our static one. */
    char buf[32];
    const char *text = strerror_r(e, buf, sizeof buf);
    return text == buf ? "unknown error" : text;
}
