/* threadtime attach: probes into a running JVM.
 *
 * This speaks HotSpot's attach protocol itself and never runs a program of
 * the target's: running the target's java (or anything its user owns) from
 * `sudo threadtime attach` would run that user's code as root.
 *
 * How a HotSpot JVM on Linux takes an agent:
 * - it listens on a Unix socket /tmp/.java_pid<pid> (its own /tmp and its own
 *   pid, as seen from its mount and pid namespaces) once its attach listener
 *   runs; the listener starts on SIGQUIT when a file .attach_pid<pid> owned
 *   by its user (or root) is in its working directory or /tmp; without that
 *   file SIGQUIT only prints a thread dump;
 * - it accepts only a client whose effective uid and gid are its own, or root;
 * - a request is NUL-terminated strings: the protocol version ("1"), the
 *   command, and exactly three arguments; "load instrument false JAR=OPTIONS"
 *   loads a java.lang.instrument agent, whose Agent-Class agentmain runs;
 * - the answer is a status line (0: the command ran), then text; for load,
 *   "return code: N" with N the agent's result (100 bad JAR, 101 not added to
 *   the class path, 102 agentmain threw or is missing).
 *
 * As root for a target of another user, this takes the target's mount
 * namespace and then its uid and gid (supplementary groups dropped) before it
 * touches any of the target's files, and checks that the socket's listener
 * is the target process with the target's uid. The agent is threadtime's JAR
 * (--jar, else $THREADTIME_JAR, else the one a checkout builds beside this
 * binary, java/agent/target/); the target's user must be able to read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "out.h"
#include "settings.h"
#include "threadtime/threadtime.h"

int tt__cli_attach(int argc, char **argv);

/* HotSpot refuses (silently, by closing) an argument longer than this
 * (AttachOperation::arg_length_max on JDK 17 to 25). */
#define ARG_MAX_LEN 1024
/* What is read of an answer at most; a load answers with a line or two. */
#define ANSWER_MAX (64 * 1024)
/* The instrument library's results for load (the JDK's HotSpotVirtualMachine
 * names them the same way). */
#define AGENT_BAD_JAR 100
#define AGENT_NOT_ON_CLASS_PATH 101
#define AGENT_START_FAILED 102
#define JNI_OUT_OF_MEMORY (-4)

static void usage(FILE *f)
{
    fprintf(f, "usage: threadtime attach [--jar JAR] [--timeout SECONDS] PID OPTIONS\n"
               "  loads threadtime's Java agent into the running JVM PID, with OPTIONS\n"
               "  (comma-separated): probe=FILTER[;FILTER...], probes=@FILE, probe=off,\n"
               "  probe.cpu=on|off, out=PATH, ring=N, dump=PATH (java/README.md, \"Probes\")\n"
               "  --jar      threadtime's JAR (default: $THREADTIME_JAR, else the checkout's build)\n"
               "  --timeout  how long to wait for the JVM: for its attach listener to start, then\n"
               "             for it to take each connection and to answer each request (default 10)\n"
               "  Runs nothing of the target's. As root, it acts as the target's user (and in its\n"
               "  mount namespace); that user must be able to read the JAR.\n"
               "  Exit status 0, 1 (the attach or the agent failed) or 2 (usage, no JAR).\n");
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("threadtime attach: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The checkout's JAR, from this binary's place (build/cli/threadtime). */
static int checkout_jar(char *out, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return -1;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    int w = snprintf(out, n, "%s/../../java/agent/target/threadtime-agent-%s.jar", self, tt_version());
    return w > 0 && (size_t)w < n && access(out, R_OK) == 0 ? 0 : -1;
}

/* out=, dump= and probes=@ made absolute here, where the user typed them (as
 * `java -jar threadtime.jar attach` does): the agent runs in the target's
 * working directory. Returns 0, or -ENAMETOOLONG. */
static int absolute_options(const char *options, char *out, size_t n)
{
    static const char *const keys[] = {"out=", "dump=", "probes=@"};
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -errno;
    size_t used = 0;
    const char *item = options;
    for (;;) {
        size_t len = strcspn(item, ",");
        size_t key = 0;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t kl = strlen(keys[k]);
            if (len > kl && strncmp(item, keys[k], kl) == 0 && item[kl] != '/')
                key = kl;
        }
        int w = key ? snprintf(out + used, n - used, "%.*s%s/%.*s%s", (int)key, item, cwd, (int)(len - key),
                               item + key, item[len] ? "," : "")
                    : snprintf(out + used, n - used, "%.*s%s", (int)len, item, item[len] ? "," : "");
        if (w < 0 || (size_t)w >= n - used)
            return -ENAMETOOLONG;
        used += (size_t)w;
        if (!item[len])
            return 0;
        item += len + 1;
    }
}

/* The process as its /proc/PID/status describes it. */
typedef struct target {
    pid_t pid;        /* in our pid namespace */
    pid_t nspid;      /* in its own (innermost) pid namespace: the name of its files */
    uid_t uid;        /* effective: the only client uid its listener accepts, besides root */
    gid_t gid;        /* effective, likewise */
    bool quit_caught; /* a SIGQUIT handler is installed (a JVM's, unless -Xrs) */
    int pidfd;        /* pins the process against pid reuse; -1 on kernels before 5.3 */
    int cwd;          /* O_PATH of its working directory, opened before any namespace change; or -1 */
    char root[64];    /* "" or "/proc/PID/root": the prefix that reaches its files */
} target;

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* Sends sig (0: only checks it lives) to the target itself, not to a process
 * that took its pid after it exited. Returns 0 or -errno (-ESRCH: gone). */
static int signal_target(const target *t, int sig)
{
#ifdef SYS_pidfd_send_signal
    if (t->pidfd >= 0)
        return syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0) == 0 ? 0 : -errno;
#endif
    return kill(t->pid, sig) == 0 ? 0 : -errno;
}

/* One "Key:\t..." line of /proc/PID/status; its value in out. */
static bool status_field(const char *status, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    for (const char *line = status; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            const char *v = line + kl + 1;
            size_t len = strcspn(v, "\n");
            if (len >= n)
                return false;
            memcpy(out, v, len);
            out[len] = '\0';
            return true;
        }
    }
    return false;
}

/* Reads the target's pid names, ids and signal handling. Returns 0 or -errno. */
static int target_open(target *t, pid_t pid)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->cwd = -1;
    t->pidfd = pidfd_open_(pid);
    if (t->pidfd < 0 && errno != ENOSYS)
        return -errno;
    char path[64], status[8192];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, status, sizeof status - 1);
    int err = errno;
    close(fd);
    if (n <= 0)
        return n < 0 ? -err : -EIO;
    status[n] = '\0';
    char v[256];
    unsigned long euid, egid; /* the second of the real, effective, saved and file ids */
    unsigned long long caught;
    if (!status_field(status, "Uid", v, sizeof v) || sscanf(v, "%*u %lu", &euid) != 1 ||
        !status_field(status, "Gid", v, sizeof v) || sscanf(v, "%*u %lu", &egid) != 1 ||
        !status_field(status, "SigCgt", v, sizeof v) || sscanf(v, "%llx", &caught) != 1)
        return -EIO;
    t->uid = (uid_t)euid;
    t->gid = (gid_t)egid;
    t->quit_caught = caught >> (SIGQUIT - 1) & 1;
    t->nspid = pid;
    if (status_field(status, "NSpid", v, sizeof v)) { /* absent before Linux 4.1: no namespaces to name */
        const char *last = v;
        for (char *p = v; *p; p++)
            if ((*p == ' ' || *p == '\t') && p[1] && p[1] != ' ' && p[1] != '\t')
                last = p + 1;
        t->nspid = (pid_t)strtol(last, NULL, 10);
    }
    /* The status was this process's, not a successor's under a reused pid
     * (EPERM: it lives, but is another user's; become_target says so). */
    int rc = signal_target(t, 0);
    return rc == -EPERM ? 0 : rc;
}

static void target_close(target *t)
{
    if (t->pidfd >= 0)
        close(t->pidfd);
    if (t->cwd >= 0)
        close(t->cwd);
}

static bool same_mount_ns(pid_t pid)
{
    char path[64];
    struct stat mine, theirs;
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    if (stat("/proc/self/ns/mnt", &mine) != 0 || stat(path, &theirs) != 0)
        return true; /* cannot tell: the files are then reached the plain way */
    return mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

/* Takes the target's mount namespace (or, when that is refused, reaches its
 * files through /proc/PID/root) and, as root, its uid and gid for good.
 * Returns 0, or 1 after printing why not. */
static int become_target(target *t)
{
    if (geteuid() != 0 && geteuid() != t->uid) {
        fail("permission denied: process %d runs as uid %lu; a JVM takes an agent only from its own user or root "
             "(run this as uid %lu, or with sudo)",
             (int)t->pid, (unsigned long)t->uid, (unsigned long)t->uid);
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cwd", (int)t->pid);
    /* Opened now: after setns, /proc may be the target's own procfs, where
     * our pid names another process or none. */
    t->cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

    bool other_ns = !same_mount_ns(t->pid);
    int ns = -1, ns_err = 0;
    if (other_ns) {
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)t->pid);
        ns = open(path, O_RDONLY | O_CLOEXEC);
        ns_err = errno;
    }
    /* Those opens went through the pid: they reached the target if it
     * still runs now (its pidfd answers for that process, and while it runs
     * no other can have its pid), else maybe a process that took the pid. */
    if (signal_target(t, 0) == -ESRCH) {
        fail("process %d exited before it could be attached (its pid may now be another process's); nothing was done",
             (int)t->pid);
        if (ns >= 0)
            close(ns);
        return 1;
    }
    if (other_ns) {
        if (ns >= 0 && setns(ns, CLONE_NEWNS) == 0) {
            fprintf(stderr, "threadtime attach: entered the mount namespace of process %d\n", (int)t->pid);
        } else {
            int e = ns >= 0 ? errno : ns_err;
            snprintf(t->root, sizeof t->root, "/proc/%d/root", (int)t->pid);
            fprintf(stderr,
                    "threadtime attach: process %d is in another mount namespace, which this cannot enter (%s); "
                    "its files are reached through %s, and the JAR's path must exist in its namespace\n",
                    (int)t->pid, strerror(e), t->root);
        }
        if (ns >= 0)
            close(ns);
    }

    if (geteuid() == 0 && (t->uid != 0 || t->gid != 0)) {
        if (setgroups(0, NULL) != 0 || setresgid(t->gid, t->gid, t->gid) != 0 ||
            setresuid(t->uid, t->uid, t->uid) != 0) {
            fail("cannot take the uid %lu and gid %lu of process %d (%s); nothing was done", (unsigned long)t->uid,
                 (unsigned long)t->gid, (int)t->pid, strerror(errno));
            return 1;
        }
        fprintf(stderr, "threadtime attach: acting as uid %lu, gid %lu (those of process %d), no other groups\n",
                (unsigned long)t->uid, (unsigned long)t->gid, (int)t->pid);
    }
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Creates the trigger file that makes the JVM's SIGQUIT handler start the
 * listener: in the target's working directory, else its /tmp (where the JVM
 * looks next, also when the first is someone else's). Returns the directory
 * fd it was created in (to remove it after), -2 when it could make none but
 * one is there already (left alone: not ours), or -1 after printing why not. */
static int create_trigger(const target *t, const char *name, int *tmp_dir)
{
    int dirs[2] = {t->cwd, -1};
    char tmp[sizeof t->root + 8];
    snprintf(tmp, sizeof tmp, "%s/tmp", t->root);
    dirs[1] = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
    *tmp_dir = dirs[1];
    int errs[2] = {EBADF, dirs[1] < 0 ? errno : EBADF};
    for (int i = 0; i < 2; i++) {
        if (dirs[i] < 0)
            continue;
        int fd = openat(dirs[i], name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            return dirs[i];
        }
        errs[i] = errno;
    }
    if (errs[0] == EEXIST || errs[1] == EEXIST)
        return -2;
    fail("cannot create the trigger file %s in the working directory of process %d (%s) nor in %s (%s)", name,
         (int)t->pid, strerror(errs[0]), tmp, strerror(errs[1]));
    return -1;
}

/* Waits for the JVM's socket, starting its listener when it is not there.
 * Returns 0, or 1 after printing why not. */
static int await_socket(const target *t, const char *socket_path, int timeout_s)
{
    struct stat st;
    if (lstat(socket_path, &st) == 0)
        return 0;
    if (errno != ENOENT) {
        fail("cannot look at %s (%s)", socket_path, strerror(errno));
        return 1;
    }
    if (!t->quit_caught) {
        fail("process %d is not a JVM that can be attached: it has no attach socket %s and no SIGQUIT "
             "handler (the signal would kill it); nothing was sent",
             (int)t->pid, socket_path);
        return 1;
    }
    char name[32];
    snprintf(name, sizeof name, ".attach_pid%d", (int)t->nspid);
    int tmp_dir;
    int made = create_trigger(t, name, &tmp_dir);
    if (made == -1) {
        if (tmp_dir >= 0)
            close(tmp_dir);
        return 1;
    }
    int rc = signal_target(t, SIGQUIT);
    int64_t start = now_ms(), waited = 0, step = 10;
    bool resent = false;
    while (rc == 0 && lstat(socket_path, &st) != 0 && waited < (int64_t)timeout_s * 1000) {
        poll(NULL, 0, (int)step);
        step = step < 200 ? step * 2 : 200;
        waited = now_ms() - start;
        rc = signal_target(t, 0);
        /* A signal that came while the JVM was still starting is lost: one more, as the JDK sends. */
        if (rc == 0 && !resent && waited >= (int64_t)timeout_s * 500) {
            resent = true;
            rc = signal_target(t, SIGQUIT);
        }
    }
    if (made >= 0)
        unlinkat(made, name, 0);
    if (tmp_dir >= 0)
        close(tmp_dir);
    if (rc == -ESRCH) {
        fail("process %d exited while its attach listener was awaited", (int)t->pid);
        return 1;
    }
    if (rc != 0) {
        fail("cannot signal process %d (%s)", (int)t->pid, strerror(-rc));
        return 1;
    }
    if (lstat(socket_path, &st) != 0) {
        fail("process %d is not a JVM that can be attached: no attach listener (%s) appeared within %d s of "
             "SIGQUIT (not a HotSpot JVM, one started with -XX:+DisableAttachMechanism, or one too busy to answer)",
             (int)t->pid, socket_path, timeout_s);
        return 1;
    }
    return 0;
}

/* Connects to the listener and checks that it is the target: the socket file
 * and the peer are the target's user, and the peer is the target process.
 * The connect, and each send on the socket, give up after timeout_s (a
 * listener whose queue is full and that never accepts would block them).
 * Returns the socket, or -1 after printing why not. */
static int connect_checked(const target *t, const char *socket_path, int timeout_s)
{
    struct stat st;
    if (lstat(socket_path, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != t->uid) {
        fail("attach refused: %s is not the socket of process %d (not a socket owned by uid %lu)", socket_path,
             (int)t->pid, (unsigned long)t->uid);
        return -1;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof addr.sun_path) {
        fail("the socket path %s is too long to connect to", socket_path);
        return -1;
    }
    strcpy(addr.sun_path, socket_path);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval bound = {.tv_sec = timeout_s};
    if (s < 0 || setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound) != 0 ||
        connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        char why[96] = "";
        if (e == ECONNREFUSED)
            snprintf(why, sizeof why, ": the JVM's listener is not running (a stale socket?)");
        else if (e == EACCES)
            snprintf(why, sizeof why, ": permission denied");
        else if (e == EAGAIN)
            snprintf(why, sizeof why, ": the JVM's listener took no connection within %d s", timeout_s);
        fail("cannot connect to %s (%s)%s", socket_path, strerror(e), why);
        if (s >= 0)
            close(s);
        return -1;
    }
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
        fail("cannot read the credentials of the listener on %s (%s)", socket_path, strerror(errno));
        close(s);
        return -1;
    }
    if (peer.uid != t->uid || peer.pid != t->pid) {
        fail("attach refused: the listener on %s is process %d of uid %lu, not process %d of uid %lu", socket_path,
             (int)peer.pid, (unsigned long)peer.uid, (int)t->pid, (unsigned long)t->uid);
        close(s);
        return -1;
    }
    return s;
}

/* Sends one version-1 request (the command and exactly three arguments) and
 * reads the whole answer into out (NUL-terminated), giving up when it is not
 * complete within timeout_s. Returns its length, or -1 after printing why
 * not. */
static ssize_t request(int s, const char *const args[4], char *out, size_t n, pid_t pid, int timeout_s)
{
    char req[16 + 4 * (ARG_MAX_LEN + 1)];
    size_t len = 0;
    memcpy(req, "1", 2);
    len = 2;
    for (int i = 0; i < 4; i++) {
        size_t a = strlen(args[i]) + 1;
        memcpy(req + len, args[i], a);
        len += a;
    }
    for (size_t sent = 0; sent < len;) {
        ssize_t w = send(s, req + sent, len - sent, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            fail("cannot send the request to JVM %d (%s)", (int)pid, strerror(errno));
            return -1;
        }
        sent += (size_t)w;
    }
    size_t got = 0;
    int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
    for (;;) {
        struct pollfd in = {.fd = s, .events = POLLIN};
        int64_t left = deadline - now_ms();
        int ready = left > 0 ? poll(&in, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            fail("JVM %d did not answer '%s' within %d s (%zu bytes came); gave up waiting, though the JVM may "
                 "still act on it",
                 (int)pid, args[0], timeout_s, got);
            return -1;
        }
        ssize_t r = ready < 0 ? -1 : read(s, out + got, n - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fail("cannot read the answer of JVM %d (%s)", (int)pid, strerror(errno));
            return -1;
        }
        if (r == 0 || (got += (size_t)r) == n - 1)
            break;
    }
    out[got] = '\0';
    return (ssize_t)got;
}

/* Prints text from the target, which may hold anything, line by line with
 * the CLI's escaping for a terminal (out.h's put_escaped), so that none of
 * it reaches the terminal as a control. */
static void print_untrusted(FILE *f, const char *text)
{
    sink *s = sink_new(f);
    if (!s) {
        fputs("(not shown: out of memory)\n", f);
        return;
    }
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        put_escaped(s, line, len);
        if (line[len] == '\n')
            put(s, "\n", 1), len++;
        line += len;
    }
    sink_flush(s);
    free(s);
}

/* The system properties in which threadtime's agentmain leaves what the
 * attacher should say: the attach protocol carries only agentmain's return
 * code (102 when it threw), and libinstrument prints the exception on the
 * target's stderr alone. Each holds lines. */
#define AGENT_ERROR_PROPERTY "threadtime.attach.error"       /* the message it failed with */
#define AGENT_WARNINGS_PROPERTY "threadtime.attach.warnings" /* e.g. a filter that matched nothing */
/* What is read of an answer to "properties" at most: a long class path can be
 * most of it. */
#define PROPERTIES_MAX (1024 * 1024)

/* Appends code point c as UTF-8. */
static size_t put_utf8(char *out, unsigned long c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The four hex digits at p as *v, if there are four. Stops at the first
 * byte that is not one, so never reads past the text's NUL. */
static bool hex4(const char *p, unsigned long *v)
{
    unsigned long x = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_value(p[i]);
        if (d < 0)
            return false;
        x = x << 4 | (unsigned long)d;
    }
    *v = x;
    return true;
}

/* The value of key in an answer to "properties", which is Java's
 * Properties.store format: key=value lines, '#' comments, backslash escapes
 * (\t \n \r \f, \uXXXX for all but printable ASCII, \ before any other
 * character). Decoded as UTF-8 into out; false when the key is absent. */
static bool property_value(const char *props, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    for (const char *line = props; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != '\0')) {
        if (strncmp(line, key, kl) != 0 || (line[kl] != '=' && line[kl] != ':'))
            continue;
        size_t used = 0;
        for (const char *p = line + kl + 1; *p && *p != '\n' && used + 8 < n; p++) {
            unsigned long c = (unsigned char)*p, low;
            if (c == '\\' && p[1]) {
                p++;
                c = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p == 'f' ? '\f' : (unsigned char)*p;
                if (*p == 'u' && hex4(p + 1, &c)) {
                    p += 4;
                    /* A character beyond the 16-bit range comes as two \u escapes (a surrogate pair). */
                    if (c >= 0xd800 && c < 0xdc00 && p[1] == '\\' && p[2] == 'u' && hex4(p + 3, &low) &&
                        low >= 0xdc00 && low < 0xe000) {
                        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
                        p += 6;
                    } else if (c >= 0xd800 && c < 0xe000) {
                        c = 0xfffd;
                    }
                }
            }
            used += c < 0x80 ? (out[used] = (char)c, 1) : put_utf8(out + used, c);
        }
        out[used] = '\0';
        return true;
    }
    return false;
}

/* Asks the JVM for the property key that threadtime's agent set, and prints
 * each of its lines after prefix. Returns whether there was such a line. */
static bool print_agent_property(const target *t, const char *socket_path, int timeout_s, const char *key,
                                 const char *prefix)
{
    int s = connect_checked(t, socket_path, timeout_s);
    if (s < 0)
        return false;
    static char message[8192];
    char *props = malloc(PROPERTIES_MAX);
    const char *const ask[4] = {"properties", "", "", ""};
    ssize_t n = props ? request(s, ask, props, PROPERTIES_MAX, t->pid, timeout_s) : -1;
    close(s);
    bool found = n > 0 && strncmp(props, "0\n", 2) == 0 &&
                 property_value(props + 2, key, message, sizeof message) && message[0];
    free(props);
    for (char *line = message; found && line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (*line) {
            fprintf(stderr, "%s", prefix);
            print_untrusted(stderr, line);
            fputc('\n', stderr);
        }
        line = next;
    }
    return found;
}

/* Reads a load answer. Returns the exit status: 0, or 1 after printing why. */
static int report_load(const char *answer, const target *t, const char *socket_path, int timeout_s,
                       const char *options)
{
    int pid = (int)t->pid;
    char *end;
    long status = strtol(answer, &end, 10);
    if (end == answer || (*end != '\n' && *end != '\0')) {
        if (!*answer)
            fail("JVM %d closed the connection without an answer: it takes an agent only from a client with its own "
                 "effective uid and gid (or root)",
                 pid);
        else {
            fail("JVM %d answered something that is not the attach protocol:", pid);
            print_untrusted(stderr, answer);
            fputc('\n', stderr);
        }
        return 1;
    }
    const char *text = *end ? end + 1 : end;
    if (status != 0) {
        fprintf(stderr, "threadtime attach: JVM %d refused the agent (status %ld): ", pid, status);
        print_untrusted(stderr, *text ? text : "no reason given\n");
        return 1;
    }
    /* JDK 9 and later write "return code: N"; the number alone on older ones. */
    const char *rc_text = strstr(text, "return code: ");
    rc_text = rc_text ? rc_text + strlen("return code: ") : text;
    long rc = strtol(rc_text, &end, 10);
    if (end == rc_text) {
        fprintf(stderr, "threadtime attach: JVM %d did not load the agent: ", pid);
        print_untrusted(stderr, *text ? text : "no reason given\n");
        return 1;
    }
    char prefix[96];
    if (rc == 0) {
        fprintf(stderr, "threadtime: JVM %d took %s\n", pid, options);
        snprintf(prefix, sizeof prefix, "threadtime: JVM %d: ", pid);
        print_agent_property(t, socket_path, timeout_s, AGENT_WARNINGS_PROPERTY, prefix);
        return 0;
    }
    snprintf(prefix, sizeof prefix, "threadtime attach: the agent in JVM %d failed: ", pid);
    if (rc == AGENT_START_FAILED && print_agent_property(t, socket_path, timeout_s, AGENT_ERROR_PROPERTY, prefix))
        return 1;
    const char *why = rc == AGENT_BAD_JAR ? "it could not open the JAR or found no Agent-Class in it"
                      : rc == AGENT_NOT_ON_CLASS_PATH ? "it could not add the JAR to its class path"
                      : rc == AGENT_START_FAILED      ? "the agent failed to start (a wrong option, or agentmain threw)"
                      : rc == JNI_OUT_OF_MEMORY       ? "it ran out of memory"
                                                      : "the agent returned an error";
    fail("JVM %d did not take the agent: %s (return code %ld); the target's stderr says more", pid, why, rc);
    return 1;
}

int tt__cli_attach(int argc, char **argv)
{
    const char *jar = NULL;
    int timeout_s = 10;
    int a = 1;
    if (a < argc && (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    for (;;) {
        if (a + 1 < argc && strcmp(argv[a], "--jar") == 0) {
            jar = argv[a + 1];
            a += 2;
        } else if (a + 1 < argc && strcmp(argv[a], "--timeout") == 0) {
            char *end;
            long v = strtol(argv[a + 1], &end, 10);
            if (end == argv[a + 1] || *end || v < 1 || v > 3600) {
                fail("--timeout takes whole seconds, 1 to 3600, not '%s'", argv[a + 1]);
                return 2;
            }
            timeout_s = (int)v;
            a += 2;
        } else {
            break;
        }
    }
    if (argc - a != 2 || argv[a][0] == '\0' || strspn(argv[a], "0123456789") != strlen(argv[a]) ||
        strlen(argv[a]) > 9 || atoi(argv[a]) < 1) {
        usage(stderr);
        return 2;
    }
    pid_t pid = (pid_t)atoi(argv[a]);
    const char *options = argv[a + 1];

    char found[PATH_MAX], jar_abs[PATH_MAX];
    if (!jar)
        jar = tt__setting_path(TT__SET_JAR);
    if (!jar && checkout_jar(found, sizeof found) == 0)
        jar = found;
    if (!jar) {
        fail("no threadtime JAR found; give --jar or set THREADTIME_JAR");
        return 2;
    }
    if (!realpath(jar, jar_abs)) {
        fail("cannot read %s: %s", jar, strerror(errno));
        return 2;
    }
    if (strchr(jar_abs, '=')) {
        fail("the JAR's path %s holds '=', which the JVM takes for the end of the path; move or link it", jar_abs);
        return 2;
    }
    char opts[ARG_MAX_LEN + 1], arg[ARG_MAX_LEN + 2];
    int err = absolute_options(options, opts, sizeof opts);
    if (err == 0 && (size_t)snprintf(arg, sizeof arg, "%s=%s", jar_abs, opts) > ARG_MAX_LEN)
        err = -ENAMETOOLONG;
    if (err != 0) {
        fail("the JAR's path and the options (paths made absolute) come to over %d bytes, the most a JVM takes; "
             "use shorter paths, or probes=@FILE",
             ARG_MAX_LEN);
        return 2;
    }

    target t;
    err = target_open(&t, pid);
    if (err != 0) {
        fail("process %d: %s", (int)pid,
             err == -ENOENT || err == -ESRCH ? "no such process"
             : err == -EINVAL                ? "not a process id (a thread's?)"
                                             : strerror(-err));
        target_close(&t);
        return 1;
    }
    int status = become_target(&t);
    if (status != 0)
        goto out;

    /* The JVM opens the JAR as its user, in its namespace: check as that user, there. */
    char path[sizeof t.root + PATH_MAX];
    snprintf(path, sizeof path, "%s%s", t.root, jar_abs);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fail("uid %lu, the user of process %d, cannot read the JAR %s (%s): the JVM loads it as that user%s; "
             "put a copy where it can",
             (unsigned long)geteuid(), (int)pid, path, strerror(errno),
             t.root[0] ? ", from its own file system" : "");
        status = 1;
        goto out;
    }
    close(fd);

    char socket_path[sizeof t.root + 32];
    snprintf(socket_path, sizeof socket_path, "%s/tmp/.java_pid%d", t.root, (int)t.nspid);
    status = await_socket(&t, socket_path, timeout_s);
    if (status != 0)
        goto out;
    int s = connect_checked(&t, socket_path, timeout_s);
    if (s < 0) {
        status = 1;
        goto out;
    }
    static char answer[ANSWER_MAX];
    const char *const load[4] = {"load", "instrument", "false", arg};
    ssize_t n = request(s, load, answer, sizeof answer, pid, timeout_s);
    close(s);
    status = n < 0 ? 1 : report_load(answer, &t, socket_path, timeout_s, opts);
out:
    target_close(&t);
    return status;
}
