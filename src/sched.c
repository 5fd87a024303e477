/* Where a thread's time went besides its CPU: the scheduler's per-thread
 * accounts (schedstat, context switches) and the process's cgroup
 * throttling (cpu.stat). All of it is text the kernel prints in /proc and
 * /sys; the calling thread keeps its schedstat file open, so a read is one
 * pread() instead of an open, a read and a close (docs/where-time-went.md
 * has the costs of each way). */
#include "internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prim/thread.h"
#include "util.h"

/* ---- parsing ---- */

/* schedstat is one line: "<on cpu ns> <run delay ns> <timeslices>\n". */
static int parse_schedstat(const char *buf, tt_sched *out)
{
    long long v[3];
    const char *p = buf;
    for (int i = 0; i < 3; i++) {
        if (tt__parse_decimal(p, &p, &v[i]) != 0 || v[i] < 0)
            return -EIO;
        if (*p != (i < 2 ? ' ' : '\n'))
            return -EIO;
        p++;
    }
    if (*p != '\0')
        return -EIO;
    out->on_cpu_ns = v[0];
    out->run_wait_ns = v[1];
    out->timeslices = v[2];
    return 0;
}

/* The value on the line of a status file that starts with key (which
 * includes its colon), or -1 if there is none. */
static long long status_field(const char *buf, const char *key)
{
    size_t n = strlen(key);
    for (const char *line = buf; *line != '\0';) {
        if (strncmp(line, key, n) == 0) {
            const char *p = line + n;
            while (*p == '\t' || *p == ' ')
                p++;
            long long v;
            return tt__parse_decimal(p, &p, &v) == 0 && v >= 0 && (*p == '\n' || *p == '\0') ? v : -1;
        }
        const char *nl = strchr(line, '\n');
        if (nl == NULL)
            break;
        line = nl + 1;
    }
    return -1;
}

/* ---- the calling thread: a descriptor kept open ---- */

/* The thread's open /proc/thread-self/schedstat, plus one (0: none).
 * initial-exec, like every per-thread state here (the JVM and CPython
 * dlopen us). The same value is the pthread key's, whose destructor closes
 * it when the thread exits. */
static __thread int t_sched_fd __attribute__((tls_model("initial-exec")));
/* The file it was opened on: a number the program closed and reused for
 * another file is not ours to close. */
static __thread dev_t t_sched_dev __attribute__((tls_model("initial-exec")));
static __thread ino_t t_sched_ino __attribute__((tls_model("initial-exec")));
static pthread_key_t sched_key;
static pthread_once_t sched_once = PTHREAD_ONCE_INIT;
static int sched_key_error;

/* Closes fd if it is still the file this thread opened. */
static void sched_fd_close_if_ours(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_dev == t_sched_dev && st.st_ino == t_sched_ino)
        close(fd);
}

static void sched_fd_close(void *p)
{
    sched_fd_close_if_ours((int)(intptr_t)p - 1);
    t_sched_fd = 0;
}

static void sched_key_init(void) { sched_key_error = pthread_key_create(&sched_key, sched_fd_close); }

/* Forgets the thread's descriptor without closing it: it no longer reads
 * our file (closed under us and perhaps reused by the program: not ours to
 * close). */
static void sched_fd_forget(void)
{
    t_sched_fd = 0;
    pthread_setspecific(sched_key, NULL);
}

/* tt__fork_gen when the descriptor was opened: another value means this is
 * a fork child, whose copy names the parent's thread. */
static __thread unsigned t_sched_gen __attribute__((tls_model("initial-exec")));

static int sched_fd_open(void)
{
    pthread_once(&sched_once, sched_key_init);
    if (sched_key_error != 0)
        return -sched_key_error;
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ENOTSUP : -errno;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? errno : pthread_setspecific(sched_key, (void *)(intptr_t)(fd + 1));
    if (rc != 0) {
        close(fd);
        return -rc;
    }
    t_sched_dev = st.st_dev;
    t_sched_ino = st.st_ino;
    t_sched_fd = fd + 1;
    t_sched_gen = atomic_load_explicit(&tt__fork_gen, memory_order_relaxed);
    return fd;
}

/* One pread of the kept descriptor: 0, or -errno / -EIO. */
static int sched_pread(int fd, tt_sched *out)
{
    char buf[96];
    ssize_t n;
    do
        n = pread(fd, buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return parse_schedstat(buf, out);
}

int tt__self_schedstat(tt_sched *out)
{
    int rc = -EBADF;
    if (t_sched_fd != 0 && t_sched_gen != atomic_load_explicit(&tt__fork_gen, memory_order_relaxed)) {
        /* A fork child: the copy it inherited names the parent's thread.
         * Closed here, not in the fork handler, which only stores (fork may
         * run in a signal handler). */
        sched_fd_close_if_ours(t_sched_fd - 1);
        sched_fd_forget();
    }
    if (t_sched_fd != 0) {
        rc = sched_pread(t_sched_fd - 1, out);
        if (rc != 0)
            sched_fd_forget(); /* closed under us, or the number reused */
    }
    if (rc != 0) {
        int fd = sched_fd_open();
        if (fd < 0)
            return fd;
        rc = sched_pread(fd, out);
    }
    return rc;
}

int tt_self_sched(tt_sched *out)
{
    if (out == NULL)
        return -EFAULT;
    int rc = tt__self_schedstat(out);
    return rc == 0 ? tt__own_switches(out) : rc;
}

/* The wait last read here, and the fast clock's run of anchors under which
 * it holds (UINT64_MAX: none). The fork generation goes with it: a child's
 * runs say nothing of the figure its parent read. */
static __thread uint64_t t_wait_run __attribute__((tls_model("initial-exec"))) = UINT64_MAX;
static __thread int64_t t_wait_ns __attribute__((tls_model("initial-exec")));
static __thread unsigned t_wait_gen __attribute__((tls_model("initial-exec")));
/* Set once schedstat proved missing: no read tries again. */
static atomic_int g_no_schedstat;

int64_t tt__run_wait_at(uint64_t run, int64_t *ns)
{
    if (atomic_load_explicit(&g_no_schedstat, memory_order_relaxed))
        return -ENOTSUP;
    unsigned gen = atomic_load_explicit(&tt__fork_gen, memory_order_relaxed);
    if (run != UINT64_MAX && run == t_wait_run && gen == t_wait_gen)
        return t_wait_ns;
    tt_sched s;
    int rc = tt__self_schedstat(&s);
    if (rc == -ENOTSUP)
        atomic_store_explicit(&g_no_schedstat, 1, memory_order_relaxed);
    if (rc != 0 || run == UINT64_MAX)
        return rc != 0 ? rc : s.run_wait_ns; /* no run to keep it under */
    uint64_t after = UINT64_MAX;
    int64_t now = tt__fast_ns_run(&after);
    /* The same run before and after the read: nothing switched the thread
     * out from the run's start to now, so the figure holds for as long as
     * the run does, and a caller starting an interval may start it after
     * the read. After a switch it may not: a wait booked after the read
     * would fall between the interval's wait and its start. */
    if (after == run) {
        *ns = now;
        t_wait_run = run;
        t_wait_ns = s.run_wait_ns;
        t_wait_gen = gen;
    }
    return s.run_wait_ns;
}

int64_t tt_self_run_wait_ns(void)
{
    uint64_t run = UINT64_MAX;
    int64_t ns = 0;
    /* ~20 ns while anchored; not made where the fast clock is known to
     * answer from no anchor, as the read would be a system call for
     * nothing. */
    if (!tt__fast_known_off())
        ns = tt__fast_ns_run(&run);
    return tt__run_wait_at(run, &ns);
}

int tt__own_switches(tt_sched *out)
{
    tt_times t;
    return tt__own_split_switches(&t, out);
}

/* ---- another thread of this process ---- */

/* Reads /proc/<pid>/task/<tid>/<file> (pid 0: /proc/self/...) into buf;
 * -ENOENT says the task or /proc is missing (the caller tells which). */
static int task_file(pid_t pid, pid_t tid, const char *file, char *buf, size_t cap)
{
    char path[80]; /* "/proc/" + 10 digits + "/task/" + 10 digits + "/schedstat" < 80 */
    char *e = tt__put_str(path, "/proc/");
    e = pid ? tt__put_decimal(e, (unsigned)pid) : tt__put_str(e, "self");
    e = tt__put_decimal(tt__put_str(e, "/task/"), (unsigned)tid);
    *tt__put_str(tt__put_str(e, "/"), file) = '\0';
    int n = tt__read_small(path, buf, cap);
    if (n == 0)
        return -ENOENT; /* the task exited between open and read */
    return n < 0 ? n : 0;
}

int tt__task_sched(pid_t pid, pid_t tid, tt_sched *out, char *buf, size_t cap)
{
    int rc = task_file(pid, tid, "schedstat", buf, cap);
    if (rc == 0)
        rc = parse_schedstat(buf, out);
    if (rc == 0) {
        rc = task_file(pid, tid, "status", buf, cap);
        if (rc == 0) {
            out->voluntary_switches = status_field(buf, "voluntary_ctxt_switches:");
            out->involuntary_switches = status_field(buf, "nonvoluntary_ctxt_switches:");
            if (out->voluntary_switches < 0 || out->involuntary_switches < 0)
                rc = -EIO;
        }
    }
    return rc;
}

int tt__own_sched(tt_sched *out)
{
    char buf[96];
    int rc = task_file(0, tt__gettid(), "schedstat", buf, sizeof buf);
    if (rc == 0)
        rc = parse_schedstat(buf, out);
    return rc == 0 ? tt__own_switches(out) : rc;
}

int tt_tid_sched(pid_t tid, tt_sched *out)
{
    if (out == NULL)
        return -EFAULT;
    if (tid < 0)
        return -EINVAL;
    if (tid == 0 || tid == tt__gettid())
        return tt_self_sched(out);
    char buf[TT__STATUS_BYTES];
    int rc = tt__task_sched(0, tid, out, buf, sizeof buf);
    if (rc != -ENOENT)
        return rc;
    /* Missing: the thread (gone, or another process's), or /proc itself.
     * tgkill with signal 0 finds a live thread of ours without /proc. */
    if (tt__tgkill(getpid(), tid, 0) == 0)
        return -ENOTSUP;
    return tt__classify_missing(tid);
}

/* ---- delay accounting ---- */

const char *tt_delay_accounting(void)
{
    char buf[16];
    int n = tt__read_small("/proc/sys/kernel/task_delayacct", buf, sizeof buf);
    if (n == -ENOENT)
        return "absent: this kernel has no delay accounting (no /proc/sys/kernel/task_delayacct)";
    if (n > 0 && buf[0] == '1')
        return "on";
    if (n > 0 && buf[0] == '0')
        return "off: sysctl -w kernel.task_delayacct=1 (root) turns it on; tasks count from then";
    return "unknown: /proc/sys/kernel/task_delayacct could not be read";
}

/* ---- the process's cgroup ---- */

/* The cgroup path of this process in the v1 hierarchy whose controllers
 * include "cpu" (want_v2 == 0) or in the v2 one ("0::"), into path. 0, or
 * -ENOENT when /proc/self/cgroup has no such line. */
static int cgroup_path(int want_v2, char *path, size_t cap)
{
    char buf[4096];
    int n = tt__read_small("/proc/self/cgroup", buf, sizeof buf);
    if (n < 0)
        return n;
    for (char *line = buf; *line != '\0';) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        /* "<id>:<controllers>:<path>"; the path may itself hold ':'. */
        char *c1 = strchr(line, ':');
        char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
        if (c2 != NULL) {
            *c2 = '\0';
            int match = 0;
            if (want_v2) {
                match = strcmp(line, "0:") == 0 && c2 == c1 + 1;
            } else {
                for (char *tok = c1 + 1; *tok != '\0' && !match;) {
                    char *comma = strchr(tok, ',');
                    size_t len = comma != NULL ? (size_t)(comma - tok) : strlen(tok);
                    match = len == 3 && strncmp(tok, "cpu", 3) == 0;
                    tok += len + (comma != NULL);
                }
            }
            if (match) {
                if (strlen(c2 + 1) >= cap)
                    return -EIO;
                strcpy(path, c2 + 1);
                return 0;
            }
        }
        if (nl == NULL)
            break;
        line = nl + 1;
    }
    return -ENOENT;
}

/* Where the hierarchy is mounted: the mount point and root of the first
 * cgroup2 mount (want_v2) or of the v1 cgroup mount whose super options
 * name the "cpu" controller. 0, or -ENOENT. Fields of a mountinfo line:
 * id, parent, major:minor, root, mount point, options, optional fields up
 * to " - ", then fstype, source, super options. Octal escapes (a space is
 * \040) are left as they are: a cgroup mount point holding one is not
 * supported. */
static int cgroup_mount(int want_v2, char *root, char *point, size_t cap)
{
    int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    unsigned char *all;
    size_t len;
    int rc = tt__read_all(fd, &all, &len);
    close(fd);
    if (rc != 0)
        return rc;
    rc = -ENOENT;
    char *text = (char *)all;
    for (size_t at = 0; at < len && rc == -ENOENT;) {
        char *line = text + at;
        char *nl = memchr(line, '\n', len - at);
        size_t llen = nl != NULL ? (size_t)(nl - line) : len - at;
        at += llen + 1;
        line[llen] = '\0';
        char *f[5], *save = NULL, *p = line;
        int i = 0;
        for (; i < 5 && (f[i] = strtok_r(p, " ", &save)) != NULL; i++)
            p = NULL;
        if (i < 5)
            continue;
        char *rest = strtok_r(NULL, "", &save);
        char *dash = rest != NULL ? strstr(rest, " - ") : NULL;
        if (dash == NULL)
            continue;
        char *fstype = strtok_r(dash + 3, " ", &save);
        char *source = strtok_r(NULL, " ", &save);
        char *opts = strtok_r(NULL, " ", &save);
        if (fstype == NULL || source == NULL)
            continue;
        int match = 0;
        if (want_v2) {
            match = strcmp(fstype, "cgroup2") == 0;
        } else if (strcmp(fstype, "cgroup") == 0 && opts != NULL) {
            for (char *tok = strtok_r(opts, ",", &save); tok != NULL && !match; tok = strtok_r(NULL, ",", &save))
                match = strcmp(tok, "cpu") == 0;
        }
        if (!match)
            continue;
        if (strlen(f[3]) >= cap || strlen(f[4]) >= cap) {
            rc = -EIO;
            break;
        }
        strcpy(root, f[3]);
        strcpy(point, f[4]);
        rc = 0;
    }
    free(all);
    return rc;
}

/* The group's directory: the mount point plus the group's path below the
 * mount's root (a container's namespace may show "/" for a group the host
 * mounted deeper). */
static int cgroup_dir(int v2, char *dir, size_t cap)
{
    char path[1024], root[1024], point[1024];
    int rc = cgroup_path(v2, path, sizeof path);
    if (rc == 0)
        rc = cgroup_mount(v2, root, point, sizeof root);
    if (rc != 0)
        return rc;
    size_t rl = strlen(root);
    const char *below = path;
    if (strcmp(root, "/") != 0 && strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
        below = path + rl;
    if (strlen(point) + strlen(below) + 1 >= cap)
        return -EIO;
    strcpy(dir, point);
    if (strcmp(below, "/") != 0)
        strcat(dir, below);
    return 0;
}

/* Reads dir/name into buf. */
static int cgroup_file(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[1200];
    if (strlen(dir) + 1 + strlen(name) >= sizeof path)
        return -EIO;
    strcpy(path, dir);
    strcat(path, "/");
    strcat(path, name);
    int n = tt__read_small(path, buf, cap);
    return n < 0 ? n : 0;
}

/* One decimal file (v1 cpu.cfs_quota_us, cpu.cfs_period_us). */
static int cgroup_number(const char *dir, const char *name, int64_t *out)
{
    char buf[64];
    int rc = cgroup_file(dir, name, buf, sizeof buf);
    if (rc != 0)
        return rc;
    const char *end;
    long long v;
    if (tt__parse_decimal(buf, &end, &v) != 0 || (*end != '\n' && *end != '\0'))
        return -EIO;
    *out = v;
    return 0;
}

int tt_cgroup_cpu_read(tt_cgroup_cpu *out)
{
    if (out == NULL)
        return -EFAULT;
    char dir[2200];
    int v2 = 0;
    int rc = cgroup_dir(0, dir, sizeof dir);
    if (rc == -ENOENT) {
        v2 = 1;
        rc = cgroup_dir(1, dir, sizeof dir);
    }
    if (rc != 0)
        return rc;
    char buf[1024];
    tt_cgroup_cpu r = {.version = v2 ? 2 : 1};
    if ((rc = cgroup_file(dir, "cpu.stat", buf, sizeof buf)) != 0)
        return rc == -ENOENT && v2 ? -ENOENT : rc; /* v2 without the cpu controller enabled */
    long long periods = status_field(buf, "nr_periods");
    long long throttled = status_field(buf, "nr_throttled");
    long long time = v2 ? status_field(buf, "throttled_usec") : status_field(buf, "throttled_time");
    if (periods < 0 || throttled < 0 || time < 0)
        return v2 && periods < 0 ? -ENOENT : -EIO; /* v2: cpu.stat without "cpu" has usage only */
    r.periods = periods;
    r.throttled_periods = throttled;
    r.throttled_ns = v2 ? time * 1000 : time;
    if (v2) {
        /* cpu.max: "<quota|max> <period>\n" */
        if ((rc = cgroup_file(dir, "cpu.max", buf, sizeof buf)) != 0)
            return rc;
        const char *p = buf;
        long long q = -1, per;
        if (strncmp(p, "max", 3) == 0)
            p += 3;
        else if (tt__parse_decimal(p, &p, &q) != 0)
            return -EIO;
        if (*p++ != ' ' || tt__parse_decimal(p, &p, &per) != 0)
            return -EIO;
        r.quota_us = q;
        r.period_us = per;
    } else if ((rc = cgroup_number(dir, "cpu.cfs_quota_us", &r.quota_us)) != 0 ||
               (rc = cgroup_number(dir, "cpu.cfs_period_us", &r.period_us)) != 0) {
        return rc;
    }
    if (r.quota_us < 0)
        r.quota_us = -1;
    *out = r;
    return 0;
}
