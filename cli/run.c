/* threadtime run [options] -- CMD [ARGS...]: what each thread of a program
 * cost (docs/run.md). Starts CMD with libthreadtime_run.so preloaded, waits
 * for it like a shell would, then reads the recording files back. */
#include "internal.h"
#include "run.h"
#include "run_file.h"
#include "settings.h"
#include "threadtime/threadtime.h"
#include "util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

int tt__cli_run(int argc, char **argv);

static void usage(FILE *out)
{
    fprintf(out,
            "usage: threadtime run [options] -- CMD [ARGS...]\n"
            "Runs CMD and reports the CPU time of each of its threads (and of its\n"
            "child processes' threads) when it ends.\n\n"
            "  --interval MS     sampling period (default 100; 0: no sampler)\n"
            "  --group           fold numbered names (GC Thread#0..7 -> GC Thread#*)\n"
            "  --format F        text (default), csv, json, chrome (Perfetto), or csv-series\n"
            "                    (the sampler's time series as CSV)\n"
            "  -o FILE           keep the recording in FILE ('threadtime dump FILE' reads it)\n"
            "  --report FILE     write the report to FILE instead of stderr\n"
            "  --wait-all        wait for every process CMD started, not only CMD (else\n"
            "                    those still running are reported as such)\n\n"
            "CMD's stdin, stdout and stderr are its own; threadtime exits with CMD's\n"
            "status, or dies of the signal that ended it, and passes SIGINT, SIGTERM,\n"
            "SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM on.\n");
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
    /* The kernel marks such an exec secure (AT_SECURE) when it changes
     * the user or group, or, for a caller other than root, when file
     * capabilities add any: the loader then ignores LD_PRELOAD. */
    if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
        return "a setuid/setgid program (the loader ignores LD_PRELOAD there)";
    if (getuid() != 0 && getxattr(exe, "security.capability", NULL, 0) > 0)
        return "a program with file capabilities (the loader ignores LD_PRELOAD there)";
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

/* ---- reading a process from outside ---- */

/* Reads a small /proc file of pid (task tid when not 0) into buf; the
 * byte count, or -1. */
static ssize_t proc_read(pid_t pid, pid_t tid, const char *what, char *buf, size_t cap)
{
    char path[96];
    if (tid)
        snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, what);
    else
        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n >= 0)
        buf[n] = 0;
    return n;
}

/* The parent of a running pid and its key (proc_start, and proc_ino where
 * there is pidfs), or -1 when it is gone or a zombie. The inode is a
 * pidfd's, opened before the stat read: that read is of the same process
 * when the pidfd's process was still there after it (its pid cannot have
 * been given to another meanwhile). */
static pid_t parent_of(pid_t pid, uint64_t *start, uint64_t *ino)
{
    char buf[1024], state = 0;
    uint32_t ppid = 0;
    int pfd = -1;
#ifdef SYS_pidfd_open
    pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    *ino = pfd >= 0 ? tt__run_pidfd_ino(pfd) : 0;
    ssize_t n = proc_read(pid, 0, "stat", buf, sizeof buf);
    int gone = 0;
#ifdef SYS_pidfd_send_signal
    gone = pfd >= 0 && syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0) != 0 && errno == ESRCH;
#endif
    if (pfd >= 0)
        close(pfd);
    if (n <= 0 || gone)
        return -1;
    *start = tt__run_stat_start(buf, &state, &ppid);
    if (!*start || state == 'Z' || state == 'X')
        return -1;
    return (pid_t)ppid;
}

static tt__run_thread *record_of_tid(tt__run_file *f, uint32_t tid)
{
    uint32_t used = f->hdr->threads_used < f->hdr->thread_cap ? f->hdr->threads_used : f->hdr->thread_cap;
    for (uint32_t i = 0; i < used; i++)
        if (f->threads[i].tid == tid && f->threads[i].kind != TT_RUN_KIND_CHILD &&
            f->threads[i].state != TT_RUN_ENDED)
            return &f->threads[i];
    return NULL;
}

/* One round over /proc/PID/task into f: each live thread's runtime (ns,
 * from schedstat) as its latest sample, and its scheduler accounts. With split set (a process sampled
 * from outside all along), each record also gets the kernel's user/system
 * split from its stat line, in clock ticks, scaled to that runtime; else
 * (a process still running when the report is written) a thread without a
 * record gets a SEEN one, like those the preload's sampler makes. */
static void outside_round(tt__run_file *f, pid_t pid, uint32_t round, int split)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    uint64_t now = tt__run_now();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long tid = strtoul(e->d_name, &end, 10);
        if (*end || !tid)
            continue;
        tt_procfs_stat st;
        if (tt_procfs_read(pid, (pid_t)tid, &st) != 0)
            continue;
        /* The runtime in ns from its schedstat (its stat line has clock
         * ticks, 10 ms here), with the scheduler's other accounts; the
         * ticks when the kernel keeps no schedstat. */
        tt_sched sc;
        char status[TT__STATUS_BYTES];
        int have_sched = tt__task_sched(pid, (pid_t)tid, &sc, status, sizeof status) == 0;
        int64_t total = have_sched ? sc.on_cpu_ns : st.user_ns + st.system_ns;
        tt__run_thread *t = record_of_tid(f, (uint32_t)tid);
        if (!t && (t = tt__run_thread_take(f)) != NULL) {
            t->tid = (uint32_t)tid;
            t->kind = TT_RUN_KIND_OTHER;
            /* Outside all along: first seen, or the process's start. A
             * survivor read once: not known (0). */
            t->start_ns = !split ? 0 : (pid_t)tid == pid ? f->hdr->start_ns : now;
            t->user_ns = t->system_ns = -1;
            memcpy(t->name_start, st.name, TT_RUN_NAME - 1);
            if (!split)
                tt__run_thread_publish(t, TT_RUN_SEEN);
        }
        if (!t)
            continue;
        t->spare[0] = (uint64_t)total;
        t->spare[1] = now;
        if (have_sched)
            tt__run_thread_sched(t, &sc);
        if (split) {
            /* The last round is what is known. */
            t->end_ns = now;
            t->system_ns = tt__split_propose(st.user_ns, st.user_ns + st.system_ns, total);
            t->user_ns = total - t->system_ns;
            memcpy(t->name_end, st.name, TT_RUN_NAME - 1);
            t->flags |= TT_RUN_NAME_END;
            tt__run_thread_publish(t, TT_RUN_AT_EXIT);
        }
        tt__run_sample_add(f, now, (uint32_t)tid, round, total);
    }
    closedir(d);
    f->hdr->end_ns = now;
}

/* ---- after the command: what its processes did not record ---- */

/* A file held in memory, as one mapped (room for all its capacity). */
static tt__run_file view(const tt__run_proc_buf *b)
{
    tt__run_file f = {.hdr = (tt__run_header *)b->data, .threads = (tt__run_thread *)(b->data + TT_RUN_HEADER_SIZE),
                     .bytes = b->len};
    f.samples = (tt__run_sample *)((unsigned char *)f.threads + (size_t)f.hdr->thread_cap * TT_RUN_THREAD_SIZE);
    atomic_store_explicit(&f.thread_room, f.hdr->thread_cap, memory_order_relaxed);
    f.sample_room = f.hdr->sample_cap;
    return f;
}

static uint32_t records(const tt__run_file *f)
{
    return f->hdr->threads_used < f->hdr->thread_cap ? f->hdr->threads_used : f->hdr->thread_cap;
}

static int64_t tv_ns(struct timeval tv) { return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000; }

/* A file for a process that left none (a fork that never recorded, then
 * was killed or is still running): room for cap records and samples,
 * appended to the set. 0 or -ENOMEM. */
static int made_file(tt__run_set *s, uint32_t pid, uint32_t ppid, const char *exe, uint32_t cap, tt__run_file *out)
{
    size_t n = tt__run_file_bytes(cap, cap);
    unsigned char *b = calloc(1, n);
    if (!b || tt__run_set_add(s, b, n) != 0) {
        free(b);
        return -ENOMEM;
    }
    tt__run_header *h = (tt__run_header *)b;
    memcpy(h->magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN);
    h->version = TT_RUN_VERSION;
    h->header_size = TT_RUN_HEADER_SIZE;
    h->thread_size = TT_RUN_THREAD_SIZE;
    h->sample_size = TT_RUN_SAMPLE_SIZE;
    h->thread_cap = h->sample_cap = cap;
    h->pid = pid;
    h->ppid = ppid;
    snprintf(h->exe, sizeof h->exe, "%s", exe);
    *out = view(&s->procs[s->nprocs - 1]);
    return 0;
}

/* The processes of a set by pid: the files read from the run directory,
 * sorted once, then those made since (appended, few), scanned. A lookup
 * per reaped child instead of a pass over every file: 200 short processes
 * from sh spent ~5 ms of the command's ~10 after the run in those passes,
 * a number that grows with the square of the processes. */
typedef struct pid_index {
    tt__run_set *s;
    struct pid_at {
        uint32_t pid, i;
    } *v;
    uint32_t n; /* files indexed: s->procs[0..n) */
} pid_index;

static uint32_t proc_pid(const tt__run_set *s, uint32_t i) { return ((const tt__run_header *)s->procs[i].data)->pid; }

static int by_pid(const void *a, const void *b)
{
    const struct pid_at *x = a, *y = b;
    return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : (x->i > y->i) - (x->i < y->i);
}

/* Indexes s->procs as it is now; without memory, nothing is indexed and
 * every lookup scans. */
static pid_index index_pids(tt__run_set *s)
{
    pid_index x = {s, s->nprocs ? malloc(s->nprocs * sizeof *x.v) : NULL, 0};
    if (x.v) {
        for (uint32_t i = 0; i < s->nprocs; i++)
            x.v[i] = (struct pid_at){proc_pid(s, i), i};
        x.n = s->nprocs;
        qsort(x.v, x.n, sizeof *x.v, by_pid);
    }
    return x;
}

/* The files of one pid, in the order they were read, then those made
 * since: walk_pid, then walk_next until UINT32_MAX. */
typedef struct pid_walk {
    uint32_t pid;
    uint32_t j; /* the next entry of the index */
    uint32_t i; /* the next file made since (from x->n) */
} pid_walk;

typedef struct pid_key {
    const pid_index *x;
    uint32_t pid;
} pid_key;

static int pid_below(const void *ctx, size_t i)
{
    const pid_key *k = ctx;
    return k->x->v[i].pid < k->pid;
}

static pid_walk walk_pid(const pid_index *x, uint32_t pid)
{
    pid_key k = {x, pid}; /* from the first entry with a pid >= pid */
    return (pid_walk){pid, (uint32_t)tt__lower_bound(x->n, pid_below, &k), x->n};
}

static uint32_t walk_next(const pid_index *x, pid_walk *w)
{
    if (w->j < x->n && x->v[w->j].pid == w->pid)
        return x->v[w->j++].i;
    w->j = x->n;
    for (; w->i < x->s->nprocs; w->i++)
        if (proc_pid(x->s, w->i) == w->pid)
            return w->i++;
    return UINT32_MAX;
}

/* Every reap a parent recorded (its CHILD records): the pid and when,
 * sorted by both. A pid is free again only once reaped, so the process a
 * reap at t took is one that started after the previous reap of its pid. */
typedef struct reap_list {
    struct reap {
        uint32_t pid;
        uint64_t t;
    } *v;
    uint32_t n;
} reap_list;

static int by_pid_time(const void *a, const void *b)
{
    const struct reap *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static reap_list list_reaps(const tt__run_set *s)
{
    reap_list l = {0};
    uint32_t n = 0;
    for (uint32_t pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < s->nprocs; i++) {
            tt__run_file f = view(&s->procs[i]);
            for (uint32_t k = 0; k < records(&f); k++)
                if (f.threads[k].kind == TT_RUN_KIND_CHILD && f.threads[k].state == TT_RUN_ENDED && l.v)
                    l.v[l.n++] = (struct reap){f.threads[k].tid, f.threads[k].end_ns};
                else if (f.threads[k].kind == TT_RUN_KIND_CHILD && f.threads[k].state == TT_RUN_ENDED)
                    n++;
        }
        if (pass == 0 && (!n || !(l.v = malloc(n * sizeof *l.v))))
            break; /* none; or out of memory: each process taken as the pid's latest before its reap */
    }
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, by_pid_time);
    return l;
}

typedef struct reap_key {
    const reap_list *l;
    struct reap r;
} reap_key;

static int reap_below(const void *ctx, size_t i)
{
    const reap_key *k = ctx;
    return by_pid_time(&k->l->v[i], &k->r) < 0;
}

/* The reap of pid before t (0: none). */
static uint64_t reap_before(const reap_list *l, uint32_t pid, uint64_t t)
{
    reap_key k = {l, {pid, t}};
    size_t at = tt__lower_bound(l->n, reap_below, &k); /* the first reap at or after (pid, t) */
    return at && l->v[at - 1].pid == pid ? l->v[at - 1].t : 0;
}

/* A child its parent reaped (a CHILD record: the kernel's rusage of it)
 * that wrote no exit record: killed, like a multiprocessing pool's workers
 * at terminate(), or never recorded at all. Its rusage, less what its own
 * records hold (threads that ended, children it reaped), is the CPU
 * nothing else shows: one FROM_PARENT row in its file (made here when it
 * left none), in place of its threads' last samples.
 *
 * Its files are those of one process (pid and key): the latest of
 * this parent's children of that pid to start after the pid's previous
 * reap and before this one. A file of the pid from before (another
 * process, after a wrap of pids) is not this child's, even one that
 * exited. */
static void settle_one(const pid_index *x, const reap_list *reaps, const tt__run_header *parent,
                       const tt__run_thread *child)
{
    tt__run_set *s = x->s;
    uint32_t pid = child->tid;
    uint64_t after = reap_before(reaps, pid, child->end_ns), latest = 0, key_start = 0, key_ino = 0;
    int found = 0;
    pid_walk w = walk_pid(x, pid);
    for (uint32_t i; (i = walk_next(x, &w)) != UINT32_MAX;) {
        const tt__run_header *h = (const tt__run_header *)s->procs[i].data;
        if (h->start_ns > after && h->start_ns <= child->end_ns && h->ppid == parent->pid &&
            (!found || h->start_ns >= latest)) {
            found = 1;
            latest = h->start_ns;
            key_start = h->proc_start;
            key_ino = h->proc_ino;
        }
    }
    tt__run_file killed = {0};
    int64_t rest = child->user_ns + child->system_ns;
    w = walk_pid(x, pid);
    for (uint32_t i; found && (i = walk_next(x, &w)) != UINT32_MAX;) {
        tt__run_file f = view(&s->procs[i]);
        /* By the key both files have (tt__run_same_key); without one (a
         * file from before it was kept): the files in the window of time. */
        int ino = key_ino && f.hdr->proc_ino, start = key_start && f.hdr->proc_start;
        if (ino || start ? !tt__run_same_key(key_start, key_ino, f.hdr->proc_start, f.hdr->proc_ino)
                         : f.hdr->start_ns <= after || f.hdr->start_ns > child->end_ns)
            continue;
        if (f.hdr->state == TT_RUN_PROC_EXITED || f.hdr->state == TT_RUN_PROC_REAPED)
            return; /* its own exit record counts it (or this was done) */
        if (f.hdr->state == TT_RUN_PROC_RUNNING)
            killed = f;
        for (uint32_t k = 0; k < records(&f); k++) {
            const tt__run_thread *t = &f.threads[k];
            if (t->kind == TT_RUN_KIND_CHILD && t->state == TT_RUN_ENDED)
                rest -= t->user_ns + t->system_ns;
            else if ((t->state == TT_RUN_ENDED || t->state == TT_RUN_AT_EXIT) && t->user_ns >= 0 && t->system_ns >= 0)
                rest -= t->user_ns + t->system_ns;
            else if ((t->state == TT_RUN_LIVE || t->state == TT_RUN_SEEN) && f.hdr->state == TT_RUN_PROC_EXECED &&
                     t->tid != pid && t->spare[1])
                rest -= (int64_t)t->spare[0]; /* shown as the last sample of an earlier image */
        }
    }
    tt__run_file made, *f = &killed;
    /* A fork runs its parent's program. */
    if (!killed.hdr && made_file(s, pid, parent->pid, parent->exe, 1, f = &made) != 0)
        return;
    /* The killed image's threads without an end: their CPU is in the rest.
     * A record taken and never published (killed in between) is free. */
    tt__run_thread *slot = NULL;
    for (uint32_t k = 0; k < records(f); k++) {
        tt__run_thread *t = &f->threads[k];
        if (t->state == TT_RUN_LIVE || t->state == TT_RUN_SEEN || t->state == TT_RUN_WRITING ||
            t->state == TT_RUN_EMPTY) {
            t->state = TT_RUN_EMPTY;
            slot = slot ? slot : t;
        }
    }
    if (!slot && f->hdr->threads_used < f->hdr->thread_cap)
        slot = &f->threads[f->hdr->threads_used++];
    if (!slot)
        return; /* full of records that ended: the report shows those */
    int64_t total = child->user_ns + child->system_ns;
    if (rest < 0)
        rest = 0;
    memset(slot, 0, sizeof *slot);
    slot->tid = pid;
    slot->kind = TT_RUN_KIND_OTHER;
    slot->start_ns = f->hdr->start_ns;
    slot->end_ns = child->end_ns;
    /* Divided as the kernel divided the whole. */
    slot->system_ns = total > 0 ? (int64_t)((__int128)child->system_ns * rest / total) : 0;
    slot->user_ns = rest - slot->system_ns;
    slot->state = TT_RUN_FROM_PARENT;
    if (!f->hdr->end_ns || f->hdr->end_ns < child->end_ns)
        f->hdr->end_ns = child->end_ns;
    if (!f->hdr->start_ns)
        f->hdr->start_ns = f->hdr->end_ns;
    f->hdr->state = TT_RUN_PROC_REAPED;
}

static void count_entry(void *ctx, uint32_t n)
{
    (void)n;
    (*(uint32_t *)ctx)++;
}

/* Calls fn for each numeric entry of a /proc directory (pid or tid). */
static void each_number(const char *path, void (*fn)(void *ctx, uint32_t n), void *ctx)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end;
        unsigned long n = strtoul(e->d_name, &end, 10);
        if (!*end && n && n <= UINT32_MAX)
            fn(ctx, (uint32_t)n);
    }
    if (d)
        closedir(d);
}

/* Every process running now with its parent, sorted by pid: one read of
 * /proc/PID/stat each. (Reading each process's chain of parents instead
 * read ~4 files per process of the host: ~3 ms of a run here, with 120
 * processes and nothing of the command left.) */
typedef struct proc_tree {
    struct proc_parent {
        uint32_t pid, ppid;
        uint64_t start, ino; /* its key: proc_start, proc_ino */
    } *v;
    uint32_t n, cap;
} proc_tree;

static void note_process(void *ctx, uint32_t pid)
{
    proc_tree *t = ctx;
    uint64_t start, ino;
    pid_t ppid = parent_of((pid_t)pid, &start, &ino);
    if (ppid < 0)
        return; /* gone, or a zombie */
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        struct proc_parent *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return; /* out of memory: a survivor below it goes unseen */
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (struct proc_parent){pid, (uint32_t)ppid, start, ino};
}

static int by_proc_pid(const void *a, const void *b)
{
    const struct proc_parent *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static proc_tree running_now(void)
{
    proc_tree t = {0};
    each_number("/proc", note_process, &t);
    if (t.n)
        qsort(t.v, t.n, sizeof *t.v, by_proc_pid);
    return t;
}

/* 1 when pid was running below this process, and was the process of file
 * header h (when not NULL: a file of the pid from before was another
 * process's, tt__run_same_key). threadtime is the subreaper of every
 * descendant, so a live descendant's chain of parents ends here; a reused
 * pid's ends elsewhere. */
static int descendant(const proc_tree *t, uint32_t pid, const tt__run_header *h)
{
    uint32_t self = (uint32_t)getpid();
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        struct proc_parent key = {pid, 0, 0, 0}, *at = t->n ? bsearch(&key, t->v, t->n, sizeof key, by_proc_pid) : NULL;
        if (!at || (depth == 0 && h && !tt__run_same_key(h->proc_start, h->proc_ino, at->start, at->ino)))
            return 0;
        if ((pid = at->ppid) == self)
            return 1;
    }
    return 0;
}

/* A process running below threadtime with no file of its own (a fork
 * that has not needed one yet): one is made, read from outside. */
static void add_survivor(const pid_index *x, const proc_tree *t, struct proc_parent p)
{
    tt__run_set *s = x->s;
    uint32_t pid = p.pid;
    pid_walk w = walk_pid(x, pid);
    for (uint32_t i; (i = walk_next(x, &w)) != UINT32_MAX;) {
        const tt__run_header *h = (const tt__run_header *)s->procs[i].data;
        if (tt__run_same_key(h->proc_start, h->proc_ino, p.start, p.ino))
            return; /* its own file (or one that cannot say it is not) */
    }
    if (!descendant(t, pid, NULL))
        return;
    char path[64], exe[256] = "?";
    snprintf(path, sizeof path, "/proc/%u/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    exe[n > 0 ? n : 1] = 0;
    uint32_t threads = 0;
    snprintf(path, sizeof path, "/proc/%u/task", pid);
    each_number(path, count_entry, &threads);
    tt__run_file f;
    if (made_file(s, pid, p.ppid, exe, threads + 8, &f) != 0)
        return;
    f.hdr->proc_start = p.start;
    f.hdr->proc_ino = p.ino;
    f.hdr->start_ns = tt__run_now(); /* its start is not known (wall 0): its figures are */
    outside_round(&f, (pid_t)pid, 1, 0);
    f.hdr->state = TT_RUN_PROC_ALIVE;
}

/* Settles every reaped child (settle_one), marks the processes still
 * running below threadtime and reads their threads now (making a file for
 * those that have none), then clears the CHILD records: the report shows
 * threads. With no child left (running 0), there is nothing running below
 * threadtime, and /proc is not read. */
static void settle(tt__run_set *s, int running)
{
    pid_index x = index_pids(s);
    reap_list reaps = list_reaps(s);
    uint32_t n = s->nprocs; /* settle_one may append */
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0;; k++) {
            tt__run_file f = view(&s->procs[i]); /* again each time: settle_one may move s->procs */
            if (k >= records(&f))
                break;
            if (f.threads[k].kind == TT_RUN_KIND_CHILD && f.threads[k].state == TT_RUN_ENDED) {
                tt__run_thread child = f.threads[k];
                tt__run_header parent = *f.hdr;
                settle_one(&x, &reaps, &parent, &child);
            }
        }
    }
    proc_tree t = running ? running_now() : (proc_tree){0};
    for (uint32_t i = 0; i < s->nprocs; i++) {
        tt__run_file f = view(&s->procs[i]);
        for (uint32_t k = 0; k < records(&f); k++)
            if (f.threads[k].kind == TT_RUN_KIND_CHILD)
                f.threads[k].state = TT_RUN_EMPTY;
        if (f.hdr->state == TT_RUN_PROC_RUNNING && descendant(&t, f.hdr->pid, f.hdr)) {
            outside_round(&f, (pid_t)f.hdr->pid, UINT32_MAX, 0);
            f.hdr->state = TT_RUN_PROC_ALIVE;
        }
    }
    for (uint32_t i = 0; i < t.n; i++)
        add_survivor(&x, &t, t.v[i]);
    free(t.v);
    free(x.v);
    free(reaps.v);
}

/* The cgroup's figures over the run into h: the counters at the end less
 * those at the start, or the error that kept either read from being made.
 * A group whose counters went back (made again under the same path) has
 * no figure either. */
static void cgroup_delta(tt__runset_header *h, int rc, const tt_cgroup_cpu *a, const tt_cgroup_cpu *b)
{
    if (!rc && (b->version != a->version || b->periods < a->periods ||
                b->throttled_periods < a->throttled_periods || b->throttled_ns < a->throttled_ns))
        rc = -ESTALE;
    h->cgroup_error = -rc;
    if (rc)
        return;
    h->cgroup_version = b->version;
    h->cgroup_quota_us = b->quota_us;
    h->cgroup_period_us = b->period_us;
    h->cgroup_periods = b->periods - a->periods;
    h->cgroup_throttled_periods = b->throttled_periods - a->throttled_periods;
    h->cgroup_throttled_ns = b->throttled_ns - a->throttled_ns;
}

/* ---- signals and the run directory ---- */

static volatile sig_atomic_t g_child;     /* CMD's pid while it runs */
static volatile sig_atomic_t g_reporting; /* CMD has ended: a signal now ends threadtime */
static volatile sig_atomic_t g_waiting_all; /* --wait-all waits for the rest: so does the terminal's */
static int g_dirfd = -1;                  /* the run directory, opened when made */
static const char *volatile g_report_tmp; /* --report's new file until it is in place */
static char g_dir[4096];                  /* and its path */
static char g_gone[sizeof g_dir + 8];     /* the name it is removed under */

/* Empties and removes the run directory through the descriptor opened when
 * it was made, so a symlink put in its place is never followed. It is first
 * renamed to g_gone: a process that outlived the command finds no directory
 * at the path it was given and adds no file meanwhile. (Making it read-only
 * instead kept every user but root from emptying it too.) Up to three passes
 * where the rename failed. Only system calls: a signal ends threadtime
 * through it. */
static void remove_dir(void)
{
    int fd = g_dirfd;
    g_dirfd = -1;
    if (fd < 0)
        return;
    const char *path = g_dir;
    struct stat a, b;
    if (fstat(fd, &a) == 0 && lstat(g_dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
        syscall(SYS_renameat2, AT_FDCWD, g_dir, AT_FDCWD, g_gone, RENAME_NOREPLACE) == 0)
        path = g_gone;
    for (int pass = 0; pass < 3; pass++) {
        char buf[4096];
        long n;
        lseek(fd, 0, SEEK_SET);
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                struct dirent64 *d = (struct dirent64 *)(buf + off);
                off += d->d_reclen;
                if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
                    unlinkat(fd, d->d_name, 0);
            }
        if (fstat(fd, &a) != 0 || lstat(path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
            break; /* something else is at that path now: left alone */
        if (rmdir(path) == 0 || errno != ENOTEMPTY)
            break;
    }
    close(fd);
}

/* The run's log (run_file.h), made in the run directory before CMD starts,
 * mode TT_RUN_LOG_MODE whatever the umask, its device, inode and owner in
 * the environment: the lone processes' START and EXIT records go there.
 * Where it cannot be made, the variables are unset (not an outer run's)
 * and every process makes a file. 0 or -errno of a failed setenv. */
static int g_logfd = -1;
static int make_log(void)
{
    const char *dev = tt__settings[TT__SET_RUN_LOG_DEV].name, *ino = tt__settings[TT__SET_RUN_LOG_INO].name;
    const char *uid = tt__settings[TT__SET_RUN_LOG_UID].name;
    struct stat st;
    g_logfd = openat(g_dirfd, TT_RUN_LOG_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, TT_RUN_LOG_MODE);
    if (g_logfd < 0 || fchmod(g_logfd, TT_RUN_LOG_MODE) != 0 || fstat(g_logfd, &st) != 0) {
        if (g_logfd >= 0)
            close(g_logfd);
        g_logfd = -1;
        return unsetenv(dev) || unsetenv(ino) || unsetenv(uid) ? -errno : 0;
    }
    char v[3][24];
    snprintf(v[0], sizeof v[0], "%llu", (unsigned long long)st.st_dev);
    snprintf(v[1], sizeof v[1], "%llu", (unsigned long long)st.st_ino);
    snprintf(v[2], sizeof v[2], "%lu", (unsigned long)st.st_uid);
    return setenv(dev, v[0], 1) || setenv(ino, v[1], 1) || setenv(uid, v[2], 1) ? -errno : 0;
}

/* The log's processes added to s (tt__run_set_add_log); damage in it is
 * said, and costs only the records it hit. */
static void load_log(tt__run_set *s)
{
    unsigned char *b = NULL;
    size_t n = 0, skipped = 0;
    int rc = g_logfd >= 0 ? tt__read_all(g_logfd, &b, &n) : 0;
    if (!rc)
        rc = tt__run_set_add_log(s, b, n, &skipped);
    if (rc)
        fprintf(stderr, "threadtime run: cannot read the run's log: %s\n", strerror(-rc));
    else if (skipped)
        fprintf(stderr, "threadtime run: %zu bytes of the run's log were no whole record (cut short, or written by "
                        "the command): left out; the records around them were read\n", skipped);
    free(b);
    if (g_logfd >= 0)
        close(g_logfd);
    g_logfd = -1;
}

/* Ends threadtime by sig as if it had none of its own handling: the
 * report's end (or a command's death by that signal) is then the shell's
 * to see, "Terminated" or "Segmentation fault". No core of threadtime. */
static void die_of(int sig)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
}

/* A signal sent to threadtime itself goes on to CMD. One the terminal sent
 * to the whole foreground group (si_code SI_KERNEL: Ctrl-C) reached CMD
 * already, and CMD's handling of it decides: it may end by it, and the
 * report follows (the signal can come here after CMD has ended, when CMD
 * was quicker). Once CMD has ended, any other signal stops the report, as
 * does the terminal's while --wait-all waits for the rest: the run
 * directory goes, then threadtime dies of it. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si->si_code == SI_KERNEL && !g_waiting_all)
        return;
    /* CMD may have ended (a zombie takes no signal) or been reaped before
     * the wait here has said so: that is the time after CMD too. */
    pid_t child = g_child;
    siginfo_t ended = {0};
    if (child > 0 && waitid(P_PID, (id_t)child, &ended, WEXITED | WNOHANG | WNOWAIT) == 0 && ended.si_pid == 0) {
        kill(child, sig);
    } else if (child > 0 || g_reporting) {
        remove_dir();
        if (g_report_tmp)
            unlink(g_report_tmp); /* the report is not written: no half of it stays */
        die_of(sig);
    }
}

/* The preload library: THREADTIME_RUN_LIB when set, else TT_RUN_LIB from
 * the directory of this executable as the kernel names it (symlinks to it
 * resolved), so an installed threadtime loads the library installed beside
 * it and a build tree's the one built beside it. NULL with *why set when
 * there is none to load or its path cannot travel in LD_PRELOAD (which the
 * loader splits at spaces and colons). */
static char *preload_path(const char **why)
{
    const char *env = tt__setting_path(TT__SET_RUN_LIB);
    char buf[PATH_MAX + sizeof TT_RUN_LIB + 1];
    if (env) {
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

/* Where the run directory goes: $TMPDIR when set; else /dev/shm when it is
 * a tmpfs this user can write, so the files are memory and never disk (one
 * made and removed per process: 200 runs of /bin/true from sh took 3.2-4.5
 * s under threadtime with them on ext4, 0.44-0.64 s on tmpfs, 0.20-0.24 s
 * alone); else /tmp. */
static const char *run_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    struct statfs fs;
    if (t && *t)
        return t;
    if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC && access("/dev/shm", W_OK | X_OK) == 0)
        return "/dev/shm";
    return "/tmp";
}

/* The value of option name given as "name VALUE" or "name=VALUE" at
 * argv[*i] (advancing *i past a separate value), or NULL. */
static const char *option(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

int tt__cli_run(int argc, char **argv)
{
    double interval_ms = 100;
    int group = 0, wait_all = 0;
    enum out_format fmt = FMT_TEXT;
    const char *keep = NULL, *report = NULL, *v;
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
        } else if (strcmp(a, "--wait-all") == 0) {
            wait_all = 1;
        } else if ((v = option(argc, argv, &i, "--interval")) != NULL) {
            char *end;
            interval_ms = strtod(v, &end);
            if (!*v || *end || !(interval_ms >= 0) || interval_ms > 3600e3 || (interval_ms > 0 && interval_ms < 1)) {
                fprintf(stderr, "threadtime run: --interval wants 0 or 1..3600000 ms, not '%s'\n", v);
                return 2;
            }
        } else if ((v = option(argc, argv, &i, "--format")) != NULL) {
            if (out_parse_format(v, &fmt) != 0) {
                fprintf(stderr, "threadtime run: unknown format '%s' (" OUT_FORMAT_NAMES ")\n", v);
                return 2;
            }
        } else if ((v = option(argc, argv, &i, "-o")) != NULL) {
            keep = v;
        } else if ((v = option(argc, argv, &i, "--report")) != NULL) {
            report = v;
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
    g_report_tmp = rep.tmp;

    const char *tmp = run_tmpdir();
    snprintf(g_dir, sizeof g_dir, "%s/threadtime-run.XXXXXX", tmp);
    if (!mkdtemp(g_dir) || (g_dirfd = open(g_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        fprintf(stderr, "threadtime run: cannot make a directory in %s: %s\n", tmp, strerror(errno));
        rmdir(g_dir);
        out_file_close(&rep, 0);
        return 2;
    }
    snprintf(g_gone, sizeof g_gone, "%s.gone", g_dir);
    char *exe = resolve(cmd[0]);
    const char *blocked = exe ? preload_blocker(exe) : NULL;
    free(exe);
    uint64_t interval_ns = (uint64_t)(interval_ms * 1e6);
    if (blocked) {
        if (!interval_ns)
            interval_ns = 100000000;
        fprintf(stderr, "threadtime run: %s is %s: sampling its threads from outside through /proc every %.0f ms "
                        "instead (threads shorter than that are missed, the split is the kernel's ticks scaled to "
                        "its ns runtime; no child processes; the whole command's rusage is exact)\n",
                cmd[0], blocked, (double)interval_ns / 1e6);
    }

    /* Everything CMD needs is prepared before the fork: the child only execs. */
    const char *why_lib = NULL;
    char *lib = blocked ? NULL : preload_path(&why_lib);
    if (!blocked && !lib) {
        const char *env = tt__setting_path(TT__SET_RUN_LIB);
        fprintf(stderr, "threadtime run: no preload library (%s): %s\n",
                env ? env : TT_RUN_LIB " from this executable's directory", why_lib);
        remove_dir();
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
        if (!preload || setenv("LD_PRELOAD", preload, 1) ||
            setenv(tt__settings[TT__SET_RUN_DIR].name, g_dir, 1) ||
            setenv(tt__settings[TT__SET_RUN_INTERVAL_NS].name, interval, 1) || make_log() != 0) {
            fprintf(stderr, "threadtime run: %s\n", strerror(errno));
            free(preload);
            free(lib);
            remove_dir();
            out_file_close(&rep, 0);
            return 2;
        }
        free(preload);
    }

    /* Signals that would end threadtime go on to CMD while it runs (and
     * stop the report after): none leaves the run directory behind. */
    struct sigaction sa = {0};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    enum { NFWD = 7 };
    int fwd[NFWD] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
    struct sigaction saved[NFWD];
    sigset_t held, mask;
    sigemptyset(&held);
    for (int k = 0; k < NFWD; k++) {
        sigaddset(&sa.sa_mask, fwd[k]); /* one handler at a time */
        sigaddset(&held, fwd[k]);
    }
    for (int k = 0; k < NFWD; k++)
        sigaction(fwd[k], &sa, &saved[k]);
    /* Held until g_child is set: CMD can exec and be seen (and a SIGTERM
     * sent to us for it) before fork returns here; taken then, with
     * g_child still 0, the signal would reach nobody. */
    sigprocmask(SIG_BLOCK, &held, &mask);
    /* Every descendant that loses its parent comes to threadtime, not to
     * init: one that outlives the command is still seen (and reaped). */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* The exec's errno, or nothing when it succeeds (close on exec). */
    int ex[2];
    if (pipe2(ex, O_CLOEXEC) != 0)
        ex[0] = ex[1] = -1;

    /* The cgroup's throttling counters before and after: the command runs
     * in threadtime's group. */
    tt_cgroup_cpu cg_start;
    int cg_rc = tt_cgroup_cpu_read(&cg_start);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "threadtime run: fork: %s\n", strerror(errno));
        sigprocmask(SIG_SETMASK, &mask, NULL);
        remove_dir();
        out_file_close(&rep, 0);
        return 2;
    }
    if (pid == 0) {
        for (int k = 0; k < NFWD; k++)
            sigaction(fwd[k], &saved[k], NULL);
        sigprocmask(SIG_SETMASK, &mask, NULL);
        execvp(cmd[0], cmd);
        int e = errno;
        fprintf(stderr, "threadtime run: cannot run %s: %s\n", cmd[0], strerror(e));
        if (ex[1] >= 0)
            (void)!write(ex[1], &e, sizeof e);
        _exit(e == ENOENT ? 127 : 126);
    }
    g_child = pid;
    sigprocmask(SIG_SETMASK, &mask, NULL); /* one that came meanwhile goes on now */
    /* A report written into a closed pipe (| head) must not kill
     * threadtime before it passes CMD's status on and cleans up. */
    signal(SIGPIPE, SIG_IGN);
    int exec_errno = 0;
    if (ex[1] >= 0) {
        close(ex[1]);
        while (read(ex[0], &exec_errno, sizeof exec_errno) < 0 && errno == EINTR)
            ;
        close(ex[0]);
    }

    tt__run_file outside = {0};
    uint32_t round = 0;
    tt__run_file_init init = {pid, getpid(), 16384, 65536, TT_RUN_FLAG_OUTSIDE, interval_ns, 0, cmd[0]};
    if (blocked && tt__run_file_create(g_dir, &init, &outside) == 0 && tt__run_file_map(&outside) != 0) {
        unlink(outside.path); /* no header of a process that has no records */
        tt__run_file_close(&outside);
    }
    int status = 0;
    for (;;) {
        /* Any child: CMD, or an orphan of its tree that came here. */
        pid_t r = wait4(-1, &status, outside.hdr ? WNOHANG : 0, NULL);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "threadtime run: wait: %s\n", strerror(errno));
            break;
        }
        if (outside.hdr && r == 0) {
            outside_round(&outside, pid, ++round, 1);
            struct timespec ts = {(time_t)(interval_ns / 1000000000u), (long)(interval_ns % 1000000000u)};
            nanosleep(&ts, NULL);
        }
    }
    g_reporting = 1; /* first: a signal in between finds one of the two */
    g_child = 0;
    tt_cgroup_cpu cg_end;
    if (!cg_rc)
        cg_rc = tt_cgroup_cpu_read(&cg_end);
    if (outside.hdr)
        outside.hdr->state = TT_RUN_PROC_EXITED;
    tt__run_file_close(&outside);
    /* Orphans that ended are reaped; with --wait-all every descendant is
     * waited for, else those still running are reported as such. */
    g_waiting_all = wait_all;
    pid_t left;
    while ((left = wait4(-1, NULL, (wait_all ? 0 : WNOHANG) | __WALL, NULL)) > 0 || (wait_all && errno == EINTR))
        ;
    /* No child left: then no process runs below threadtime at all, as the
     * subreaper of them all (one whose parent ended came here), and /proc
     * need not be read for them: one read per process of the host, ~1 ms
     * of each run here with ~90 of them. */
    int running = !(left < 0 && errno == ECHILD);
    g_waiting_all = 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (exec_errno) {
        remove_dir();
        free(lib);
        out_file_close(&rep, 0);
        return code; /* the child said why; nothing ran to report */
    }

    tt__run_set set = {0};
    tt__run_set_load_dir(g_dir, &set); /* which follows no symlink in its place */
    load_log(&set);
    settle(&set, running);
    /* The command and every descendant reaped here (orphans), with the
     * children they reaped in turn. */
    struct rusage ru = {0};
    getrusage(RUSAGE_CHILDREN, &ru);
    set.h.exit_status = code;
    set.h.rusage_user_ns = tv_ns(ru.ru_utime);
    set.h.rusage_system_ns = tv_ns(ru.ru_stime);
    set.h.rusage_voluntary = ru.ru_nvcsw;
    set.h.rusage_involuntary = ru.ru_nivcsw;
    cgroup_delta(&set.h, cg_rc, &cg_start, &cg_end);
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
    int rc = out ? tt__run_report(&set, fmt, group, out) : -ENOMEM;
    free(out);
    if (rc)
        fprintf(stderr, "threadtime run: no report: %s\n", strerror(-rc));
    /* Signals wait while the report is put in place (a regular file, whose
     * writes end): a handler that came between the rename and the clearing
     * of the name, or after out_file_close freed it, would leave the new
     * file behind or read freed memory. */
    sigset_t all, was;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &was);
    if (report && (rc = out_file_close(&rep, rc == 0)) != 0)
        fprintf(stderr, "threadtime run: writing the report to %s: %s\n", report, strerror(-rc));
    g_report_tmp = NULL;
    sigprocmask(SIG_SETMASK, &was, NULL);
    if (keep) {
        rc = tt__run_set_save(&set, keep);
        if (rc)
            fprintf(stderr, "threadtime run: cannot write %s: %s\n", keep, tt_strerror(rc));
    }
    tt__run_set_free(&set);
    remove_dir();
    if (WIFSIGNALED(status)) {
        fflush(stderr);
        die_of(WTERMSIG(status));
    }
    return code;
}
