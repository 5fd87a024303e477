/* threadtime run [options] -- CMD [ARGS...]: what each thread of a program
 * cost (docs/run.md). Starts CMD with libthreadtime_run.so preloaded, waits
 * for it like a shell would, then reads the recording files back. */
#include "run.h"
#include "run_file.h"
#include "threadtime/threadtime.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int tt_cli_run(int argc, char **argv);

static void usage(FILE *out)
{
    fprintf(out,
            "usage: threadtime run [options] -- CMD [ARGS...]\n"
            "Runs CMD and reports the CPU time of each of its threads (and of its\n"
            "child processes' threads) when it ends.\n\n"
            "  --interval MS     sampling period (default 100; 0: no sampler)\n"
            "  --group           fold numbered names (GC Thread#0..7 -> GC Thread#*)\n"
            "  --format F        text (default), csv, json or chrome (Perfetto)\n"
            "  -o FILE           keep the recording in FILE ('threadtime dump FILE' reads it)\n"
            "  --report FILE     write the report to FILE instead of stderr\n\n"
            "CMD's stdin, stdout and stderr are its own; threadtime exits with CMD's\n"
            "status (128+N when a signal N ended it) and passes SIGTERM/SIGINT on.\n");
}

/* ---- where preloading cannot work ---- */

/* The path execvp would run, or NULL. */
static char *resolve(const char *cmd)
{
    if (strchr(cmd, '/'))
        return strdup(cmd);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char buf[4096];
        if (n + strlen(cmd) + 2 < sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", cmd);
            if (access(buf, X_OK) == 0)
                return strdup(buf);
        }
        p += n + (e != NULL);
        if (!e)
            break;
    }
    return NULL;
}

/* Why LD_PRELOAD cannot reach CMD's threads, or NULL when it can. Reads
 * the ELF program headers (no PT_INTERP: static) and section names (a Go
 * binary carries .go.buildinfo), and the mode bits (setuid/setgid: the
 * loader ignores LD_PRELOAD paths with slashes). */
static const char *preload_blocker(const char *exe)
{
    struct stat st;
    if (stat(exe, &st) != 0)
        return NULL;
    if ((st.st_mode & (S_ISUID | S_ISGID)) && getuid() != 0)
        return "a setuid/setgid program (the loader ignores LD_PRELOAD)";
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    const char *why = NULL;
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        int interp = 0;
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != sizeof ph)
                break;
            interp |= ph.p_type == PT_INTERP;
        }
        Elf64_Shdr strs;
        int go = 0;
        if (eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shstrndx < eh.e_shnum &&
            pread(fd, &strs, sizeof strs, (off_t)(eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof strs)) ==
                sizeof strs) {
            for (int i = 0; i < eh.e_shnum && !go; i++) {
                Elf64_Shdr sh;
                char name[16] = {0};
                if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (uint64_t)i * sizeof sh)) != sizeof sh)
                    break;
                if (pread(fd, name, sizeof name - 1, (off_t)(strs.sh_offset + sh.sh_name)) > 0)
                    go = strcmp(name, ".go.buildinfo") == 0;
            }
        }
        if (!interp)
            why = go ? "a static Go program (its runtime starts threads with clone, and no loader runs)"
                     : "a static binary (no loader runs to preload anything)";
        else if (go)
            why = "a Go program (its runtime starts threads with clone, not pthread_create)";
    }
    close(fd);
    return why;
}

/* ---- sampling from outside (the fallback) ---- */

typedef struct outside {
    tt_run_file f;
    uint32_t round;
} outside;

static tt_run_thread *outside_record(outside *o, uint32_t tid)
{
    uint32_t used = o->f.hdr->threads_used < o->f.hdr->thread_cap ? o->f.hdr->threads_used : o->f.hdr->thread_cap;
    for (uint32_t i = 0; i < used; i++)
        if (o->f.threads[i].tid == tid)
            return &o->f.threads[i];
    return NULL;
}

/* One round over /proc/PID/task: each thread's kernel split (tick
 * resolution) through the core's /proc reader. */
static void outside_round(outside *o, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    uint64_t now = tt_run_now();
    o->round++;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long tid = strtoul(e->d_name, &end, 10);
        if (*end || !tid)
            continue;
        tt_procfs_stat st;
        if (tt_procfs_read(pid, (pid_t)tid, &st) != 0)
            continue;
        tt_run_thread *t = outside_record(o, (uint32_t)tid);
        if (!t && (t = tt_run_thread_take(&o->f)) != NULL) {
            t->tid = (uint32_t)tid;
            t->kind = TT_RUN_KIND_OTHER;
            t->start_ns = (pid_t)tid == pid ? o->f.hdr->start_ns : now;
            memcpy(t->name_start, st.name, TT_RUN_NAME - 1);
        }
        if (!t)
            continue;
        /* SEEN with the kernel's split: the last round is what is known. */
        t->end_ns = now;
        t->user_ns = st.user_ns;
        t->system_ns = st.system_ns;
        t->spare[0] = (uint64_t)(st.user_ns + st.system_ns);
        t->spare[1] = now;
        memcpy(t->name_end, st.name, TT_RUN_NAME - 1);
        tt_run_thread_publish(t, TT_RUN_AT_EXIT);
        tt_run_sample_add(&o->f, now, (uint32_t)tid, o->round, st.user_ns + st.system_ns);
    }
    closedir(d);
    o->f.hdr->end_ns = now;
}

/* ---- signals ---- */

static volatile sig_atomic_t g_child;

/* A signal sent to threadtime itself goes on to CMD. One the terminal sent
 * to the whole foreground group (si_code SI_KERNEL) reached CMD already. */
static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (g_child > 0 && si->si_code != SI_KERNEL)
        kill(g_child, sig);
}

static int64_t tv_ns(struct timeval tv) { return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000; }

/* The preload library: THREADTIME_RUN_LIB when set, else TT_RUN_LIB from
 * the directory of this executable as the kernel names it (symlinks to it
 * resolved), so an installed threadtime loads the library installed beside
 * it and a build tree's the one built beside it. NULL with *why set when
 * there is none to load or its path cannot travel in LD_PRELOAD (which the
 * loader splits at spaces and colons). */
static char *preload_path(const char **why)
{
    const char *env = getenv("THREADTIME_RUN_LIB");
    char buf[PATH_MAX + sizeof TT_RUN_LIB + 1];
    if (env && *env) {
        snprintf(buf, sizeof buf, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
        char *slash = n > 0 ? memrchr(buf, '/', (size_t)n) : NULL;
        if (!slash) {
            *why = "cannot read /proc/self/exe to find it";
            return NULL;
        }
        snprintf(slash + 1, sizeof buf - (size_t)(slash + 1 - buf), "%s", TT_RUN_LIB);
    }
    char *lib = realpath(buf, NULL);
    if (!lib) {
        *why = strerror(errno);
        return NULL;
    }
    if (strpbrk(lib, " :\t")) {
        *why = "its path holds a space or a colon, which LD_PRELOAD cannot carry";
        free(lib);
        return NULL;
    }
    return lib;
}

static int rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    return rmdir(dir) == 0 ? 0 : -errno;
}

int tt_cli_run(int argc, char **argv)
{
    double interval_ms = 100;
    int group = 0;
    enum out_format fmt = FMT_TEXT;
    const char *keep = NULL, *report = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (a[0] != '-') {
            break;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--group") == 0) {
            group = 1;
        } else if (strcmp(a, "--interval") == 0 && i + 1 < argc) {
            char *end;
            interval_ms = strtod(argv[++i], &end);
            if (*end || !(interval_ms >= 0) || interval_ms > 3600e3 || (interval_ms > 0 && interval_ms < 1)) {
                fprintf(stderr, "threadtime run: --interval wants 0 or 1..3600000 ms, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            if (out_parse_format(argv[++i], &fmt) != 0) {
                fprintf(stderr, "threadtime run: unknown format '%s' (" OUT_FORMAT_NAMES ")\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            keep = argv[++i];
        } else if (strcmp(a, "--report") == 0 && i + 1 < argc) {
            report = argv[++i];
        } else {
            fprintf(stderr, "threadtime run: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "threadtime run: no command given\n");
        usage(stderr);
        return 2;
    }
    char **cmd = argv + i;
    out_file rep = {0};
    const char *why;
    if (report && out_file_open(report, &rep, &why) != 0) {
        fprintf(stderr, "threadtime run: cannot write the report to %s: %s\n", report, why);
        return 2;
    }

    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/threadtime-run.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "threadtime run: cannot make a directory in %s: %s\n", tmp && *tmp ? tmp : "/tmp",
                strerror(errno));
        out_file_close(&rep, 0);
        return 2;
    }
    char *exe = resolve(cmd[0]);
    const char *blocked = exe ? preload_blocker(exe) : NULL;
    free(exe);
    uint64_t interval_ns = (uint64_t)(interval_ms * 1e6);
    if (blocked) {
        if (!interval_ns)
            interval_ns = 100000000;
        fprintf(stderr, "threadtime run: %s is %s: sampling its threads from outside through /proc every %.0f ms "
                        "instead (threads shorter than that are missed; no child processes)\n",
                cmd[0], blocked, (double)interval_ns / 1e6);
    }

    /* Everything CMD needs is prepared before the fork: the child only execs. */
    const char *why_lib = NULL;
    char *lib = blocked ? NULL : preload_path(&why_lib);
    if (!blocked && !lib) {
        const char *env = getenv("THREADTIME_RUN_LIB");
        fprintf(stderr, "threadtime run: no preload library (%s): %s\n",
                env && *env ? env : TT_RUN_LIB " from this executable's directory", why_lib);
        rm_dir(dir);
        out_file_close(&rep, 0);
        return 2;
    }
    char interval[32];
    snprintf(interval, sizeof interval, "%llu", (unsigned long long)interval_ns);
    if (lib) {
        const char *old = getenv("LD_PRELOAD");
        size_t plen = strlen(lib) + (old ? strlen(old) : 0) + 2;
        char *preload = malloc(plen);
        if (preload)
            snprintf(preload, plen, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", lib);
        if (!preload || setenv("LD_PRELOAD", preload, 1) || setenv(TT_RUN_ENV_DIR, dir, 1) ||
            setenv(TT_RUN_ENV_INTERVAL, interval, 1)) {
            fprintf(stderr, "threadtime run: %s\n", strerror(errno));
            free(preload);
            free(lib);
            rm_dir(dir);
            out_file_close(&rep, 0);
            return 2;
        }
        free(preload);
    }

    struct sigaction sa = {0};
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int fwd[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction saved[4];
    sigset_t held, mask;
    sigemptyset(&held);
    for (int k = 0; k < 4; k++) {
        sigaction(fwd[k], &sa, &saved[k]);
        sigaddset(&held, fwd[k]);
    }
    /* Held until g_child is set: CMD can exec and be seen (and a SIGTERM
     * sent to us for it) before fork returns here; taken then, with
     * g_child still 0, the signal would reach nobody. */
    sigprocmask(SIG_BLOCK, &held, &mask);

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "threadtime run: fork: %s\n", strerror(errno));
        sigprocmask(SIG_SETMASK, &mask, NULL);
        rm_dir(dir);
        out_file_close(&rep, 0);
        return 2;
    }
    if (pid == 0) {
        for (int k = 0; k < 4; k++)
            sigaction(fwd[k], &saved[k], NULL);
        sigprocmask(SIG_SETMASK, &mask, NULL);
        execvp(cmd[0], cmd);
        int e = errno;
        fprintf(stderr, "threadtime run: cannot run %s: %s\n", cmd[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    g_child = pid;
    sigprocmask(SIG_SETMASK, &mask, NULL); /* one that came meanwhile goes on now */

    outside o = {0};
    if (blocked && tt_run_file_create(dir, pid, getpid(), 16384, 65536, &o.f) == 0) {
        o.f.hdr->flags = TT_RUN_FLAG_OUTSIDE;
        o.f.hdr->interval_ns = interval_ns;
        snprintf(o.f.hdr->exe, sizeof o.f.hdr->exe, "%s", cmd[0]);
    }
    int status = 0;
    struct rusage ru = {0};
    for (;;) {
        pid_t r = wait4(pid, &status, o.f.hdr ? WNOHANG : 0, &ru);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "threadtime run: wait: %s\n", strerror(errno));
            break;
        }
        if (o.f.hdr && r == 0) {
            outside_round(&o, pid);
            struct timespec ts = {(time_t)(interval_ns / 1000000000u), (long)(interval_ns % 1000000000u)};
            nanosleep(&ts, NULL);
        }
    }
    g_child = 0;
    if (o.f.hdr)
        o.f.hdr->state = TT_RUN_PROC_EXITED;
    tt_run_file_close(&o.f);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

    tt_run_set set = {0};
    tt_run_set_load_dir(dir, &set);
    set.h.exit_status = code;
    set.h.rusage_user_ns = tv_ns(ru.ru_utime);
    set.h.rusage_system_ns = tv_ns(ru.ru_stime);
    set.h.flags = blocked != NULL;
    size_t clen = 1;
    for (char **c = cmd; *c; c++)
        clen += strlen(*c) + 1;
    if ((set.cmd = malloc(clen)) != NULL) {
        set.cmd[0] = 0;
        for (char **c = cmd; *c; c++)
            strcat(strcat(set.cmd, c == cmd ? "" : " "), *c);
    }
    if (set.nprocs == 0 && !blocked)
        fprintf(stderr, "threadtime run: %s left no recording: the preload library %s did not load (check that "
                        "it exists and matches the program's architecture)\n",
                cmd[0], lib);
    free(lib);
    sink *out = sink_new(report ? rep.f : stderr);
    int rc = out ? tt_run_report(&set, fmt, group, out) : -ENOMEM;
    free(out);
    if (rc)
        fprintf(stderr, "threadtime run: no report: %s\n", strerror(-rc));
    if (report && (rc = out_file_close(&rep, rc == 0)) != 0)
        fprintf(stderr, "threadtime run: writing the report to %s: %s\n", report, strerror(-rc));
    if (keep) {
        rc = tt_run_set_save(&set, keep);
        if (rc)
            fprintf(stderr, "threadtime run: cannot write %s: %s\n", keep, tt_strerror(rc));
    }
    tt_run_set_free(&set);
    rm_dir(dir);
    return code;
}

