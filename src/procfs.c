/* The legacy /proc reader: the fallback when clockids are refused, and the
 * baseline every benchmark shows. One open, one read, one close, a parse:
 * ~10 us on the reference machine. Async-signal-safe (a fallback read may
 * run in a signal handler): system calls and hand-written formatting and
 * parsing only, no stdio, no locale. */
#include "internal.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* A stat line is ~52 numbers after the name; 1 KiB is typical, 4 KiB
 * leaves room for 64-bit values in every field. */
#define STAT_BUF 4096
/* Fields of the stat line, counted from 1 as proc(5) does. */
#define FIELD_STATE 3
#define FIELD_UTIME 14

/* glibc answers _SC_CLK_TCK with a value it took from the auxiliary vector
 * at start-up: no lock, so this too is safe in a signal handler. */
static int64_t ns_per_tick(void)
{
    static _Atomic int64_t cached;
    int64_t v = cached;
    if (v == 0) {
        long hz = sysconf(_SC_CLK_TCK);
        v = hz > 0 ? TT__NS_PER_SEC / hz : TT__NS_PER_SEC / 100;
        cached = v;
    }
    return v;
}

int tt__read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = 0;
    for (;;) {
        ssize_t n = tt__read_retry(fd, buf + len, cap - 1 - len);
        if (n < 0) {
            close(fd);
            return (int)n;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len == cap - 1) {
            close(fd);
            return -EIO; /* longer than the file can be */
        }
    }
    close(fd);
    buf[len] = '\0';
    return (int)len;
}

int tt__parse_decimal(const char *p, const char **end, long long *out)
{
    int neg = *p == '-';
    const char *s = p + neg;
    long long v = 0;
    for (*end = s; **end >= '0' && **end <= '9'; (*end)++) {
        int d = **end - '0';
        if (v > (LLONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (*end == s)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

char *tt__put_decimal(char *dst, unsigned v)
{
    char tmp[12];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        *dst++ = tmp[--n];
    return dst;
}

char *tt__put_str(char *dst, const char *s)
{
    while (*s)
        *dst++ = *s++;
    return dst;
}

/* Parses one stat line. The name sits between the first '(' and the LAST
 * ')': every field after it is a number, so a name holding ')', spaces,
 * digits or newlines cannot shift the fields. */
static int parse_stat(const char *buf, size_t len, tt_procfs_stat *out)
{
    const char *open_paren = memchr(buf, '(', len);
    const char *close_paren = NULL;
    for (const char *p = buf + len; p > buf; p--) {
        if (p[-1] == ')') {
            close_paren = p - 1;
            break;
        }
    }
    if (open_paren == NULL || close_paren == NULL || close_paren < open_paren)
        return -EIO;

    size_t name_len = (size_t)(close_paren - open_paren - 1);
    if (name_len >= sizeof out->name)
        name_len = sizeof out->name - 1;
    memcpy(out->name, open_paren + 1, name_len);
    out->name[name_len] = '\0';

    const char *p = close_paren + 1;
    int field = FIELD_STATE;
    long long utime = -1, stime = -1;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return -EIO;
    out->state = *p++;
    while (field < FIELD_UTIME + 1) {
        if (*p != ' ')
            return -EIO;
        p++;
        field++;
        const char *end;
        long long v;
        if (tt__parse_decimal(p, &end, &v) != 0)
            return -EIO;
        if (field == FIELD_UTIME)
            utime = v;
        else if (field == FIELD_UTIME + 1)
            stime = v;
        p = end;
    }
    if (utime < 0 || stime < 0)
        return -EIO;
    out->user_ns = utime * ns_per_tick();
    out->system_ns = stime * ns_per_tick();
    return 0;
}

int tt_procfs_read(pid_t pid, pid_t tid, tt_procfs_stat *out)
{
    char path[64];
    char buf[STAT_BUF];
    if (out == NULL)
        return -EFAULT;
    if (pid < 0 || tid < 0)
        return -EINVAL;
    /* "/proc/<pid>/task/<tid>/stat": 6 + 10 + 6 + 10 + 5 + NUL < 64. */
    char *e = tt__put_str(path, "/proc/");
    e = pid == 0 ? tt__put_str(e, "self") : tt__put_decimal(e, (unsigned)pid);
    if (tid != 0)
        e = tt__put_decimal(tt__put_str(e, "/task/"), (unsigned)tid);
    *tt__put_str(e, "/stat") = '\0';
    int n = tt__read_small(path, buf, sizeof buf);
    if (n < 0)
        return n == -ENOENT ? -ESRCH : n;
    if (n == 0)
        return -ESRCH; /* the task exited between open and read */
    return parse_stat(buf, (size_t)n, out);
}
