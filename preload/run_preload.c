/* libthreadtime_run.so: what `threadtime run` preloads into a program.
 *
 * Inert unless THREADTIME_RUN_DIR is set. Then a lone process (one
 * thread, no record, no sampler) appends its START and EXIT records to the
 * run's log (run_file.h), and a process that becomes non-lone gets a crash-safe
 * recording file of its own, in which:
 *  - every thread started through pthread_create takes a record as it
 *    starts and fills it as it ends, with the split it reads itself
 *    (the kernel's scaled split, the figures /proc shows, brought up to
 *    date by a read of its CPU clock first);
 *  - a sampler thread, started with the process's second thread, reads
 *    every thread's CPU clock each interval (one
 *    clock_gettime per thread, see docs/run.md for why inside), which
 *    gives the time series and finds threads started without
 *    pthread_create;
 *  - at exit() the threads still alive (the main thread among them) are
 *    read and the file is marked as exited.
 * Nothing on a thread's start or end path takes a lock or waits, so a
 * thread ending while exit() runs the handler below cannot deadlock it.
 */
#include "event_log.h"
#include "internal.h"
#include "prim/clockid.h"
#include "prim/thread.h"
#include "run_file.h"
#include "settings.h"
#include "threadtime/threadtime.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*setname_fn)(pthread_t, const char *);
typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);

static _Atomic(void *) g_real_create;
static const char *g_dir;      /* from the environment; NULL: inert */
static uint64_t g_interval_ns; /* 0: no sampler */
static uint32_t g_thread_cap, g_sample_cap;
static tt__run_file g_file;     /* hdr NULL: no file (yet) in this process */
static _Atomic int g_creating;  /* one thread creates a fork child's file */
static _Atomic int g_mapping;   /* one thread maps the file */
static _Atomic unsigned g_gen;  /* bumped in a fork child: records of the parent's file are not ours */
static _Atomic int g_sampling;  /* the sampler was started (with the process's second thread) */
static _Atomic int g_stop;      /* the sampler stops at exit */
static _Atomic int g_in_round;  /* the sampler is between its check of g_stop and the end of a round */
static uint64_t g_start_ns;     /* the image's start: its load, or a fork child's fork */
static uint64_t g_start_real_ns;
static tt__run_log_id g_log;    /* the run's log (run_file.h); ino 0: none */
static int g_logged;            /* this image's START record is in the log */
static _Atomic int g_file_err;  /* the errno of this image's failed making of its file (0: none); set by
                                   the thread that tried, read by the one that exits */
static uint32_t g_ppid;         /* read with the key (0: not yet) */
static uint64_t g_key_start, g_key_ino; /* the process's key, once read */
static pid_t g_owner;           /* the process g_file and the state here belong to */
static _Atomic int g_exit_done; /* the exit record is written (or being written) */

/* Thread names without a system call per thread. A thread starts with its
 * creator's name, and names change through pthread_setname_np() or
 * prctl(PR_SET_NAME), both wrapped below to bump g_renames. So a creator
 * keeps its own name until g_renames moves, and a thread whose start saw
 * the same g_renames as its end still has its start name. (A write to
 * /proc/<pid>/task/<tid>/comm or a raw prctl system call is not seen: the
 * name at the end is then the name at the start.) Saves two of the four
 * system calls a recorded thread makes. */
static _Atomic uint64_t g_renames;
typedef struct creator_name {
    uint64_t renames; /* g_renames when name was read; 0: never read */
    char name[TT_RUN_NAME];
} creator_name;
static __thread creator_name t_creator __attribute__((tls_model("initial-exec")));

/* libc's own definition of a function wrapped here, looked up once into
 * *cache (a racing first lookup finds the same pointer). */
static void *real_fn(_Atomic(void *) *cache, const char *name)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}

static create_fn real_create(void)
{
    return (create_fn)real_fn(&g_real_create, "pthread_create");
}

EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
    static _Atomic(void *) real;
    setname_fn f = (setname_fn)real_fn(&real, "pthread_setname_np");
    atomic_fetch_add_explicit(&g_renames, 1, memory_order_relaxed);
    return f ? f(t, name) : ENOSYS;
}

/* 1 once a seccomp filter is known on the process. A filter inherited
 * from the parent (systemd's SystemCallFilter=, a sandbox) or installed
 * since may kill the process for a system call it does not list, so under
 * one the preload makes none that a process without it would not need
 * (docs/run.md lists them). A filter is never removed and passes to
 * children, so once known it is not asked about again; while none is, each
 * question is one prctl(PR_GET_SECCOMP), itself an option a strict filter
 * may kill on: so the prctl wrapper marks a process that sets
 * PR_SET_SECCOMP, or PR_SET_NO_NEW_PRIVS (which an unprivileged process
 * sets before installing a filter with the seccomp system call), before
 * the call. A filter installed with raw system calls alone is not seen. */
static _Atomic int g_filtered;

/* prctl() takes up to four more arguments; every option reads them as
 * unsigned long, so passing four on is what libc's own wrapper does. */
EXPORT int prctl(int option, ...)
{
    static _Atomic(void *) real;
    prctl_fn f = (prctl_fn)real_fn(&real, "prctl");
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    /* Not for a vfork child, which runs on the parent's memory and sets
     * the flag on itself alone (getpid(): a system call, and these options
     * are rare). Before load (g_owner 0) the caller is the process itself:
     * a constructor of the program's own libraries, which may run first. */
    if (option == PR_SET_NAME)
        atomic_fetch_add_explicit(&g_renames, 1, memory_order_relaxed);
    else if ((option == PR_SET_SECCOMP || (option == PR_SET_NO_NEW_PRIVS && a2 == 1)) &&
             (g_owner == 0 || getpid() == g_owner))
        atomic_store_explicit(&g_filtered, 1, memory_order_relaxed);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(option, a2, a3, a4, a5);
}

/* ---- a root process that gives up root ---- */

static int have_file(void);

/* A root process that changes its user or its root can no longer reach
 * the run's directory (root's, 0700) by its path, for its file or the
 * log: its file is made first, while it still can (root's is mapped as it
 * is made, so what it records after needs no path). A process that stays
 * root, as most do, makes none until it needs one. Not seen: the same
 * change made by a raw system call. */
static void before_drop(void)
{
    int e = errno;
    /* Not a vfork child, which runs on the parent's memory. */
    if (g_dir && !g_file.hdr && geteuid() == 0 && getpid() == g_owner)
        have_file();
    errno = e;
}

/* An exported wrapper of the C library's `name`: `before` runs before the
 * call, `after` once it returned (errno as the call left it). */
#define WRAPPER(ret, name, params, args, before, after)                                                                \
    EXPORT ret name params                                                                                             \
    {                                                                                                                  \
        static _Atomic(void *) real;                                                                                   \
        ret(*f) params = (ret(*) params)real_fn(&real, #name);                                                         \
        if (!f) {                                                                                                      \
            errno = ENOSYS;                                                                                            \
            return -1;                                                                                                 \
        }                                                                                                              \
        before;                                                                                                        \
        ret rc = f args;                                                                                               \
        after;                                                                                                         \
        return rc;                                                                                                     \
    }
#define DROP_WRAPPER(ret, name, params, args) WRAPPER(ret, name, params, args, before_drop(), (void)0)
DROP_WRAPPER(int, setuid, (uid_t u), (u))
DROP_WRAPPER(int, seteuid, (uid_t u), (u))
DROP_WRAPPER(int, setreuid, (uid_t r, uid_t e), (r, e))
DROP_WRAPPER(int, setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
DROP_WRAPPER(int, chroot, (const char *path), (path))

/* A changed limit is read again before the run's files are next written
 * (a write past RLIMIT_FSIZE raises SIGXFSZ: tt__run_fsize_changed). */
#define LIMIT_WRAPPER(name, params, args) WRAPPER(int, name, params, args, (void)0, tt__run_fsize_changed())
LIMIT_WRAPPER(setrlimit, (__rlimit_resource_t r, const struct rlimit *l), (r, l))
LIMIT_WRAPPER(setrlimit64, (__rlimit_resource_t r, const struct rlimit64 *l), (r, l))
LIMIT_WRAPPER(prlimit, (pid_t p, __rlimit_resource_t r, const struct rlimit *n, struct rlimit *o), (p, r, n, o))
LIMIT_WRAPPER(prlimit64, (pid_t p, __rlimit_resource_t r, const struct rlimit64 *n, struct rlimit64 *o), (p, r, n, o))

/* ---- children reaped ---- */

static int have_map(void);

/* A child this process reaped, kept with the kernel's rusage of it (its
 * own CPU and that of the children it reaped in turn): threadtime run
 * counts through it a child that wrote no exit record of its own (killed,
 * like a multiprocessing pool's workers at terminate()). */
static void note_reaped(pid_t pid, int status, const struct rusage *ru)
{
    if (!g_dir || !(WIFEXITED(status) || WIFSIGNALED(status)) || !have_map())
        return;
    tt__run_thread *t = tt__run_thread_take(&g_file);
    if (!t) {
        /* Past the cap: counted apart from the threads (threads_used holds
         * both), so the report says what each drop was. */
        if (atomic_load_explicit(&g_file.hdr->threads_used, memory_order_relaxed) > g_file.hdr->thread_cap)
            atomic_fetch_add_explicit(&g_file.hdr->children_dropped, 1, memory_order_relaxed);
        return;
    }
    t->tid = (uint32_t)pid;
    t->kind = TT_RUN_KIND_CHILD;
    t->start_ns = t->end_ns = tt__run_now();
    t->user_ns = (int64_t)ru->ru_utime.tv_sec * 1000000000 + (int64_t)ru->ru_utime.tv_usec * 1000;
    t->system_ns = (int64_t)ru->ru_stime.tv_sec * 1000000000 + (int64_t)ru->ru_stime.tv_usec * 1000;
    tt__run_thread_publish(t, TT_RUN_ENDED);
}

/* wait(), waitpid() and wait3() come here too: each is wait4() with
 * arguments fixed, and libc's own wait4 keeps them cancellation points.
 * (waitid() gives no rusage and is left alone; so are libc's calls to
 * itself, in system() for one.) */
EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    static _Atomic(void *) real;
    typedef pid_t (*wait4_fn)(pid_t, int *, int, struct rusage *);
    wait4_fn f = (wait4_fn)real_fn(&real, "wait4");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    struct rusage own;
    int st = 0;
    pid_t r = f(pid, &st, options, ru ? ru : &own);
    if (r > 0) {
        int e = errno;
        note_reaped(r, st, ru ? ru : &own);
        errno = e;
        if (status)
            *status = st;
    }
    return r;
}

EXPORT pid_t waitpid(pid_t pid, int *status, int options) { return wait4(pid, status, options, NULL); }
EXPORT pid_t wait(int *status) { return wait4(-1, status, 0, NULL); }
EXPORT pid_t wait3(int *status, int options, struct rusage *ru) { return wait4(-1, status, options, ru); }

static void thread_name(pid_t tid, char name[TT_RUN_NAME])
{
    memset(name, 0, TT_RUN_NAME);
    if (tid == 0) {
        /* The system call, not the exported prctl wrapper: its first call
         * looks libc's up with dlsym, which is no async-signal-safe call,
         * and this runs from _exit() in a signal handler. */
        if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) != 0)
            name[0] = 0;
        return;
    }
    char path[64] = "/proc/self/task/";
    char *p = path + strlen(path);
    char tmp[12];
    int n = 0;
    for (uint32_t v = (uint32_t)tid; v || !n; v /= 10)
        tmp[n++] = (char)('0' + v % 10);
    while (n)
        *p++ = tmp[--n];
    memcpy(p, "/comm", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, name, TT_RUN_NAME - 1);
    close(fd);
    if (r > 0 && name[r - 1] == '\n')
        name[r - 1] = 0;
}

/* ---- the sampler ---- */

/* What the sampler knows of one tid: its record and how often to read it. */
typedef struct tid_entry {
    uint32_t tid;        /* 0: empty slot */
    uint32_t rec;        /* record index */
    uint32_t next_round; /* not read again before this round */
    uint32_t backoff;    /* rounds between reads: 1, doubled while idle, up to BACKOFF_MAX */
    uint32_t seen_round; /* the round that last handled it (a tid listed twice counts once) */
    int64_t last;        /* CPU time at the last read; -1: none */
} tid_entry;

/* tid -> entry, open addressing; the sampler thread's alone. */
typedef struct tid_map {
    tid_entry *e;
    uint32_t cap, used, cursor; /* cursor: records before it are mapped */
} tid_map;

static tid_entry *map_slot(tid_map *m, uint32_t tid)
{
    uint32_t i = (tid * 2654435761u) & (m->cap - 1);
    while (m->e[i].tid && m->e[i].tid != tid)
        i = (i + 1) & (m->cap - 1);
    return &m->e[i];
}

static int map_put(tid_map *m, uint32_t tid, uint32_t rec)
{
    if ((m->used + 1) * 2 > m->cap) {
        tid_map n = {calloc(m->cap * 2, sizeof(tid_entry)), m->cap * 2, m->used, m->cursor};
        if (!n.e)
            return -ENOMEM;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->e[i].tid)
                *map_slot(&n, m->e[i].tid) = m->e[i];
        free(m->e);
        *m = n;
    }
    tid_entry *e = map_slot(m, tid);
    if (!e->tid)
        m->used++;
    /* A new record for the tid (a new thread that reuses it) starts afresh. */
    if (!e->tid || e->rec != rec)
        *e = (tid_entry){tid, rec, 0, 1, 0, -1};
    return 0;
}

/* The record of a live thread tid: a pthread one published since the last
 * look, else a new SEEN record. UINT32_MAX when the file is full. */
static uint32_t record_of(tid_map *m, uint32_t tid, uint64_t now)
{
    tid_entry *e = map_slot(m, tid);
    if (e->tid) {
        uint32_t r = e->rec;
        uint32_t st = atomic_load_explicit(&g_file.threads[r].state, memory_order_acquire);
        if (st == TT_RUN_LIVE || st == TT_RUN_SEEN || st == TT_RUN_WRITING)
            return r;
    }
    uint32_t used = atomic_load_explicit(&g_file.hdr->threads_used, memory_order_acquire);
    if (used > g_file.hdr->thread_cap)
        used = g_file.hdr->thread_cap;
    uint32_t found = UINT32_MAX;
    for (; m->cursor < used; m->cursor++) {
        tt__run_thread *t = &g_file.threads[m->cursor];
        uint32_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st == TT_RUN_EMPTY)
            break; /* taken, not yet published: look again next round */
        if (t->kind == TT_RUN_KIND_CHILD)
            continue; /* a reaped child's pid, not a thread */
        if (map_put(m, t->tid, m->cursor) != 0)
            return UINT32_MAX;
        if (t->tid == tid && (st == TT_RUN_LIVE || st == TT_RUN_SEEN))
            found = m->cursor;
    }
    if (found != UINT32_MAX)
        return found;
    tt__run_thread *t = tt__run_thread_take(&g_file);
    if (!t)
        return UINT32_MAX;
    t->tid = tid;
    t->kind = TT_RUN_KIND_OTHER;
    t->start_ns = tid == g_file.hdr->pid ? g_file.hdr->start_ns : now;
    t->user_ns = t->system_ns = -1;
    thread_name((pid_t)tid, t->name_start);
    tt__run_thread_publish(t, TT_RUN_SEEN);
    uint32_t r = (uint32_t)(t - g_file.threads);
    return map_put(m, tid, r) == 0 ? r : UINT32_MAX;
}

/* The exit handler's scratch, in turn the listing's buffer and each
 * thread's /proc status file: static, not on the stack, as the handler may
 * run from _exit() in a signal handler on a small alternate stack, and runs
 * once per process. */
static char g_exit_scratch[8192];

/* Calls fn(tid, ctx) for every thread of this process, listing through
 * buf; 0 or -errno. */
static int each_task(void (*fn)(uint32_t tid, void *ctx), void *ctx, char *buf, size_t cap)
{
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, cap);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            uint32_t tid = 0;
            const char *c = d->d_name;
            for (; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (uint32_t)(*c - '0');
            if (!*c && tid)
                fn(tid, ctx);
        }
    }
    close(fd);
    return 0;
}

/* The tids a round read; the next round starts from them. */
typedef struct tid_list {
    uint32_t *v;
    uint32_t n, cap;
} tid_list;

static void list_push(tid_list *l, uint32_t tid)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 256;
        uint32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return; /* this tid waits for the next full listing */
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = tid;
}

typedef struct round_ctx {
    tid_map *map;
    tid_list *next;
    uint32_t self, round;
    uint64_t now;
} round_ctx;

/* A thread whose CPU time did not move is read at doubling intervals, up
 * to every BACKOFF_MAX rounds: 1,000 idle threads then cost ~70 reads a
 * round, not 1,000. Its CPU time is never lost, only its rate averaged
 * over the longer span; it is read every round again once it moves. */
#define BACKOFF_MAX 16

static void sample_one(uint32_t tid, void *p)
{
    round_ctx *c = p;
    if (tid == c->self)
        return;
    tid_entry *e = map_slot(c->map, tid);
    if (e->tid && e->seen_round == c->round)
        return; /* listed twice in this round */
    if (e->tid && e->next_round > c->round) {
        uint32_t st = atomic_load_explicit(&g_file.threads[e->rec].state, memory_order_relaxed);
        if (st == TT_RUN_LIVE || st == TT_RUN_SEEN) {
            e->seen_round = c->round;
            list_push(c->next, tid); /* idle lately: not this round */
            return;
        }
    }
    int64_t total = tt_tid_total_ns((pid_t)tid);
    if (total < 0)
        return; /* ended since it was listed */
    uint32_t r = record_of(c->map, tid, c->now);
    if (r == UINT32_MAX)
        return; /* the file is full: nothing to keep it in */
    e = map_slot(c->map, tid); /* record_of may have grown the map */
    e->seen_round = c->round;
    e->backoff = e->last == total ? (e->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : e->backoff * 2) : 1;
    e->next_round = c->round + e->backoff;
    e->last = total;
    /* The latest sample, kept beside the record for a reader after a
     * crash; relaxed stores, read only once the process is gone. */
    __atomic_store_n(&g_file.threads[r].spare[0], (uint64_t)total, __ATOMIC_RELAXED);
    __atomic_store_n(&g_file.threads[r].spare[1], c->now, __ATOMIC_RELAXED);
    tt__run_sample_add(&g_file, c->now, tid, c->round, total);
    list_push(c->next, tid);
}

/* Samples the threads started through pthread_create since the last look
 * (their records), for a round that does not list /proc. */
static void sample_new_records(round_ctx *c)
{
    tid_map *m = c->map;
    uint32_t used = atomic_load_explicit(&g_file.hdr->threads_used, memory_order_acquire);
    if (used > g_file.hdr->thread_cap)
        used = g_file.hdr->thread_cap;
    for (; m->cursor < used; m->cursor++) {
        tt__run_thread *t = &g_file.threads[m->cursor];
        uint32_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st == TT_RUN_EMPTY)
            break; /* taken, not yet published: next round */
        if (t->kind == TT_RUN_KIND_CHILD)
            continue;
        if (map_put(m, t->tid, m->cursor) != 0)
            return;
        if (st == TT_RUN_LIVE)
            sample_one(t->tid, c);
    }
}

/* Listing /proc/self/task costs ~0.5 us per thread on top of the ~0.6 us
 * clock read, so with many threads only every FULL_EVERY-th round lists
 * it (to find threads started without pthread_create); the others read
 * the threads of the last round and the records published since. */
#define FULL_EVERY 10
#define FULL_ALWAYS_BELOW 128

static void *sampler_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "tt-sampler");
    uint32_t self = (uint32_t)tt__gettid();
    tid_map map = {calloc(1024, sizeof(tid_entry)), 1024, 0, 0};
    tid_list lists[2] = {{0}};
    char dents[8192]; /* the listing's buffer: its own stack is 128 KiB */
    if (!map.e)
        goto out;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (uint32_t round = 1; !atomic_load_explicit(&g_stop, memory_order_relaxed); round++) {
        uint64_t ns = (uint64_t)next.tv_nsec + g_interval_ns;
        next.tv_sec += (time_t)(ns / 1000000000u);
        next.tv_nsec = (long)(ns % 1000000000u);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        /* Sequentially consistent, with the exit handler's store of g_stop
         * then load of g_in_round: either this round sees the stop, or the
         * handler sees the round and waits for it to end. */
        atomic_store(&g_in_round, 1);
        if (atomic_load(&g_stop)) {
            atomic_store(&g_in_round, 0);
            break;
        }
        tid_list *prev = &lists[round & 1], *cur = &lists[(round + 1) & 1];
        cur->n = 0;
        round_ctx c = {&map, cur, self, round, tt__run_now()};
        if (round == 1 || prev->n < FULL_ALWAYS_BELOW || round % FULL_EVERY == 0) {
            each_task(sample_one, &c, dents, sizeof dents);
        } else {
            for (uint32_t i = 0; i < prev->n; i++)
                sample_one(prev->v[i], &c);
            sample_new_records(&c);
        }
        atomic_store_explicit(&g_file.hdr->end_ns, tt__run_now(), memory_order_relaxed);
        int64_t own = tt_self_total_ns();
        if (own >= 0)
            atomic_store_explicit(&g_file.hdr->sampler_cpu_ns, (uint64_t)own, memory_order_relaxed);
        atomic_fetch_add_explicit(&g_file.hdr->sampler_rounds, 1, memory_order_relaxed);
        atomic_store(&g_in_round, 0);
    }
out:
    free(map.e);
    free(lists[0].v);
    free(lists[1].v);
    return NULL;
}

/* Starts the sampler with every signal blocked but those a fault raises
 * (tt__signals_hold), so it never takes a signal meant for the program's
 * threads (a program waiting in sigwait() relies on no thread accepting its
 * signals); a fault is the faulting thread's own. */
static void start_sampler(void)
{
    if (!g_interval_ns || !g_file.threads)
        return;
    sigset_t old;
    int held = tt__signals_hold(&old);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 128 * 1024);
    /* The creator learns the sampler's tid (libc's clock id for a thread
     * holds it), so the thread is never taken for one of the program's
     * before it has run. */
    clockid_t c;
    if (!real_create() || real_create()(&t, &a, sampler_main, NULL) != 0)
        g_file.hdr->sampler_tid = 0;
    else if (pthread_getcpuclockid(t, &c) == 0)
        g_file.hdr->sampler_tid = (uint32_t)tt__cpu_clockid_pid(c);
    pthread_attr_destroy(&a);
    tt__signals_release(&old, held);
}

/* ---- the file of this process ---- */

static int filtered(void)
{
    if (!atomic_load_explicit(&g_filtered, memory_order_relaxed) &&
        syscall(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) != 0)
        atomic_store_explicit(&g_filtered, 1, memory_order_relaxed);
    return atomic_load_explicit(&g_filtered, memory_order_relaxed);
}

/* The process's parent and key, read once (a fork child reads its own). */
static void read_key(void)
{
    if (g_ppid)
        return;
    g_ppid = (uint32_t)getppid();
    tt__run_proc_key(g_owner, filtered(), &g_key_start, &g_key_ino);
}

/* 0 or -errno. */
static int make_file(void)
{
    /* Made when first needed, so its start is the image's (g_start_ns),
     * which joins it to the image's START record in the log. g_owner is
     * this process's pid: set by run_init and fork_child before any file
     * is made, so no second getpid() here. */
    read_key();
    tt__run_file_init init = {g_owner, (pid_t)g_ppid, g_thread_cap, g_sample_cap, 0, g_interval_ns, g_start_ns,
                              program_invocation_name, filtered(), g_key_start, g_key_ino, g_start_real_ns};
    return tt__run_file_create(g_dir, &init, &g_file);
}

/* A log record of this image, kind and what every kind holds. */
static void log_fill(tt__run_log_rec *r, uint16_t kind)
{
    memset(r, 0, sizeof *r);
    r->magic = TT_RUN_LOG_MAGIC;
    r->size = TT_RUN_LOG_SIZE;
    r->kind = kind;
    r->pid = (uint32_t)g_owner;
    r->ppid = g_ppid;
    r->proc_start = g_key_start;
    r->proc_ino = g_key_ino;
    r->start_ns = g_start_ns;
    r->start_real_ns = g_start_real_ns;
    r->boot_offset = tt__run_boot_offset();
    strncpy(r->exe, program_invocation_name, sizeof r->exe - 1);
    r->end = TT_RUN_LOG_END;
}

/* The image's START record, in place of a file of its own: 1 when the log
 * took it. */
static int log_start(void)
{
    if (!g_log.ino)
        return 0;
    tt__run_log_rec r;
    read_key();
    log_fill(&r, TT_RUN_LOG_START);
    g_logged = tt__run_log_append(g_dir, &g_log, &r) == 0;
    return g_logged;
}

/* The image could not make its file (err): what it runs from now on
 * (threads, children's reaps) goes unrecorded, so its EXIT record would be
 * short of it. A NOFILE record says so in the log, in place of that EXIT
 * record; its parent's wait4 then counts the process. Where the log cannot
 * take it either (the descriptor that failed the file fails it too), the
 * image reads as one that did not exit. */
static void log_no_file(int err)
{
    atomic_store_explicit(&g_file_err, err, memory_order_relaxed);
    if (!g_log.ino)
        return;
    tt__run_log_rec r;
    log_fill(&r, TT_RUN_LOG_NOFILE);
    r.end_ns = tt__run_now();
    r.err = err >= 1 && err <= TT_RUN_LOG_ERR_MAX ? (uint32_t)err : EIO;
    (void)tt__run_log_append(g_dir, &g_log, &r);
}

/* A process makes its own file when it first needs one (a thread start or
 * a record, or an exit the log did not take), so a child that only calls
 * exec, and a lone process, cost no file. Tried once per image. */
static int have_file(void)
{
    if (g_file.hdr)
        return 1;
    if (!g_dir || atomic_exchange_explicit(&g_creating, 1, memory_order_acquire))
        return 0;
    int rc = make_file();
    if (rc)
        log_no_file(-rc);
    return !rc;
}

/* The file mapped, which its first record needs (a thread started, a child
 * reaped). One thread maps it, with its signals held meanwhile: a handler
 * that reaps a child (a shell's SIGCHLD handler) would otherwise find the
 * mapping under way and record nothing. A file that cannot be mapped (a
 * full disk) takes no record; the exit record of a single-threaded process
 * needs no mapping. */
static int have_map(void)
{
    if (__atomic_load_n(&g_file.threads, __ATOMIC_ACQUIRE))
        return 1;
    sigset_t old;
    int held = tt__signals_hold(&old);
    int ok = have_file() && !atomic_exchange_explicit(&g_mapping, 1, memory_order_acquire);
    if (ok) {
        int rc = tt__run_file_map(&g_file);
        if (rc) /* no record can be taken: an exit record of the main thread alone would be short */
            atomic_store_explicit(&g_file_err, -rc, memory_order_relaxed);
        ok = !rc;
    }
    tt__signals_release(&old, held);
    return ok;
}

static void fork_child(void)
{
    int e = errno; /* fork() returns to the child after this */
    /* The parent's file is the parent's: drop the mapping (one system call,
     * allowed in a fork child) and let the parent's records go. */
    tt__run_file_close(&g_file);
    g_start_ns = tt__run_now(); /* the vDSO clocks: no lock, fine here */
    g_start_real_ns = tt__run_now_real();
    g_logged = 0; /* the key and parent are this child's, read when needed */
    atomic_store_explicit(&g_file_err, 0, memory_order_relaxed);
    g_ppid = 0;
    g_key_start = g_key_ino = 0;
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_relaxed);
    atomic_store_explicit(&g_creating, 0, memory_order_relaxed);
    atomic_store_explicit(&g_mapping, 0, memory_order_relaxed);
    g_owner = getpid();
    atomic_store_explicit(&g_exit_done, 0, memory_order_relaxed);
    atomic_store_explicit(&g_sampling, 0, memory_order_relaxed); /* threads do not survive fork */
    errno = e;
}

/* ---- threads started through pthread_create ---- */

typedef struct start_arg {
    void *(*fn)(void *);
    void *arg;
    uint64_t renames;         /* g_renames when the creator's name was read */
    char name[TT_RUN_NAME];   /* the creator's name: the thread's at start */
} start_arg;

typedef struct life {
    tt__run_thread *rec;
    unsigned gen;
    uint64_t renames;
} life;

/* The calling thread's split as of now. getrusage() alone gives the
 * runtime as of the thread's last tick or context switch, up to a tick
 * (4 ms at HZ=250) behind; reading the thread's CPU clock first makes the
 * kernel bring that runtime up to date, so the getrusage() after it splits
 * the runtime of this moment (its total truncated to whole microseconds,
 * under 2 us below the clock). Two system calls, ~1 us. */
static int self_split_now(tt_times *out)
{
    tt_self_total_ns();
    return tt_getrusage_thread(out);
}

/* self_split_now with the switch counts of its getrusage (its wait for a
 * CPU unknown), for a thread too short to pay a read of its /proc: one
 * system call fewer than reading them apart. */
static int self_split_brief(tt_times *out, tt_sched *s)
{
    *s = (tt_sched){.run_wait_ns = -1, .timeslices = -1};
    tt_self_total_ns();
    return tt__own_split_switches(out, s);
}

static void thread_end(void *p)
{
    life *l = p;
    if (!l->rec || l->gen != atomic_load_explicit(&g_gen, memory_order_relaxed))
        return;
    int e = errno; /* seen by the thread's TLS destructors, run after this */
    /* The scheduler's accounts before the split, so that the CPU time,
     * read last, holds the cost of this read too (~40 us for the first
     * read of a thread's /proc file): a pread of the thread's schedstat
     * and a getrusage (its switch counts); for a thread shorter than
     * TT_RUN_WAIT_MIN_NS the split's getrusage alone. */
    tt_sched s;
    tt_times t;
    int src, rc;
    if (tt__run_now() - l->rec->start_ns >= TT_RUN_WAIT_MIN_NS) {
        src = tt_self_sched(&s);
        rc = self_split_now(&t);
    } else {
        src = rc = self_split_brief(&t, &s);
    }
    char name[TT_RUN_NAME];
    int renamed = atomic_load_explicit(&g_renames, memory_order_relaxed) != l->renames;
    if (renamed)
        thread_name(0, name);
    uint64_t now = tt__run_now();
    if (!tt__run_thread_claim(l->rec, TT_RUN_LIVE)) {
        errno = e;
        return; /* the exit handler read this thread already */
    }
    l->rec->end_ns = now;
    l->rec->user_ns = rc ? -1 : t.user_ns;
    l->rec->system_ns = rc ? -1 : t.system_ns;
    if (!src)
        tt__run_thread_sched(l->rec, &s);
    memcpy(l->rec->name_end, renamed ? name : l->rec->name_start, TT_RUN_NAME);
    l->rec->flags |= TT_RUN_NAME_END;
    tt__run_thread_publish(l->rec, TT_RUN_ENDED);
    errno = e;
}

static void *trampoline(void *p)
{
    int e = errno; /* the new thread's own, as the program would find it */
    start_arg a = *(start_arg *)p;
    free(p);
    life l = {NULL, atomic_load_explicit(&g_gen, memory_order_relaxed), a.renames};
    if (g_file.threads && (l.rec = tt__run_thread_take(&g_file)) != NULL) {
        l.rec->tid = (uint32_t)tt__gettid();
        l.rec->kind = TT_RUN_KIND_PTHREAD;
        l.rec->start_ns = tt__run_now();
        memcpy(l.rec->name_start, a.name, TT_RUN_NAME);
        tt__run_thread_publish(l.rec, TT_RUN_LIVE);
    }
    void *ret;
    errno = e;
    /* Runs on return, pthread_exit() and cancellation alike. */
    pthread_cleanup_push(thread_end, &l);
    ret = a.fn(a.arg);
    pthread_cleanup_pop(1);
    return ret;
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    create_fn real = real_create();
    if (!real)
        return EAGAIN;
    /* The preload's own calls may fail (making the file: a run's directory
     * gone, a fork child's): the program sees errno as libc leaves it. */
    int e = errno;
    int mapped = g_dir && have_map();
    errno = e;
    if (!mapped)
        return real(t, attr, fn, arg);
    /* The sampler comes with a process's second thread: a single-threaded
     * one (a shell, a compiler) is read whole at its exit, and its parent's
     * wait4 counts it if it is killed; a thread and a mapped stack less per
     * process (~20 % of the cost of 200 short processes under threadtime). */
    if (!atomic_exchange_explicit(&g_sampling, 1, memory_order_relaxed))
        start_sampler();
    start_arg *a = malloc(sizeof *a);
    if (!a) {
        errno = e;
        return real(t, attr, fn, arg); /* unrecorded rather than refused */
    }
    a->fn = fn;
    a->arg = arg;
    /* Loaded before the name is read: a rename in between makes the next
     * creation and this thread's end read again. +1 keeps 0 for "never". */
    uint64_t renames = atomic_load_explicit(&g_renames, memory_order_relaxed) + 1;
    if (t_creator.renames != renames) {
        thread_name(0, t_creator.name);
        t_creator.renames = renames;
    }
    a->renames = renames - 1;
    memcpy(a->name, t_creator.name, TT_RUN_NAME);
    errno = e;
    int rc = real(t, attr, trampoline, a);
    if (rc)
        free(a);
    return rc;
}

/* ---- process exit ---- */

/* Reads a live thread's split and scheduler accounts into r, and its end
 * right after its CPU (now: when the exit handler started, which says
 * whether the calling thread is short); 0, or the error when the thread
 * ended since it was listed (r is then left as it was). The threads run
 * while the others are read: an end taken once for all would be before
 * the CPU of a thread read late, which could then show more CPU than its
 * life. Another thread's split is its three clocks, the runtime divided in
 * the proportion of its raw ticks as the kernel divides it for /proc; no
 * allocation, no lock. */
static int read_alive(tt__run_thread *r, uint32_t tid, int self, uint64_t now)
{
    /* The scheduler's accounts first, through the thread's /proc files:
     * nothing kept open, no lock, as a handler run by _exit() needs. The
     * calling thread reads them as at a thread's end: before its CPU time,
     * so that holds their cost, and, when it is known to be shorter than
     * TT_RUN_WAIT_MIN_NS (a short process's main thread), its switch
     * counts alone, from the split's own getrusage (a /proc read is ~10-40 us, a third of all the preload
     * costs such a process here). */
    tt_sched s;
    tt_times t;
    int src;
    if (self && r->start_ns && now - r->start_ns < TT_RUN_WAIT_MIN_NS) {
        src = self_split_brief(&t, &s);
        if (src)
            return src;
    } else if (self) {
        src = tt__own_sched(&s);
        int rc = self_split_now(&t);
        if (rc)
            return rc;
    } else {
        src = tt__task_sched(0, (pid_t)tid, &s, g_exit_scratch, sizeof g_exit_scratch);
        int64_t virt = tt_tid_user_raw_ns((pid_t)tid), prof = tt_tid_prof_raw_ns((pid_t)tid);
        int64_t sched = tt_tid_total_ns((pid_t)tid);
        if (virt < 0 || prof < 0 || sched < 0)
            return (int)(sched < 0 ? sched : virt < 0 ? virt : prof);
        t.system_ns = tt__split_propose(virt, prof, sched);
        t.user_ns = sched - t.system_ns;
    }
    if (src == 0)
        tt__run_thread_sched(r, &s);
    r->end_ns = tt__run_now();
    thread_name(self ? 0 : (pid_t)tid, r->name_end);
    r->flags |= TT_RUN_NAME_END;
    r->user_ns = t.user_ns;
    r->system_ns = t.system_ns;
    return 0;
}

/* The exit handler's listing of the live tids: each one counted, and put
 * in the map (rec UINT32_MAX: no record read for it yet) while it is at
 * most half full. The map is never grown (it is no malloc's): a count
 * above what it took says to list again into a larger one. */
typedef struct exit_list {
    tid_map map;
    uint32_t listed, left_out;
} exit_list;

static void list_task(uint32_t tid, void *p)
{
    exit_list *l = p;
    l->listed++;
    if ((l->map.used + 1) * 2 <= l->map.cap)
        map_put(&l->map, tid, UINT32_MAX);
    else
        l->left_out++;
}

/* 1 when the kernel counts one thread in this process (the caller), 0
 * when more or when it cannot say; a thread started by clone() that the
 * preload never saw still counts. unshare(CLONE_THREAD) asks without
 * /proc: it fails with EINVAL while the caller's thread group holds
 * another thread, and otherwise succeeds having changed nothing
 * (kernel/fork.c, check_unshare_flags; no privilege needed). The first
 * /proc access of a process makes its /proc entries, which its end then
 * drops: ~35 us of a short process here, for the stat below. A seccomp
 * filter may answer a call it does not expect by killing the process, so
 * unshare is made only where the process has none (filtered());
 * else the link count of /proc/PID/task says it: 2 (its "." and its entry
 * in /proc/PID) plus the threads as the kernel counts them
 * (fs/proc/base.c, proc_task_getattr). */
static int only_thread(void)
{
    if (!filtered()) {
        if (syscall(SYS_unshare, CLONE_THREAD) == 0)
            return 1;
        if (errno == EINVAL)
            return 0;
    }
    struct stat st;
    return stat("/proc/self/task", &st) == 0 && st.st_nlink == 3;
}

/* The one thread of a lone process at its exit (its leader: self is the
 * pid), read as any at exit. */
static void read_lone(tt__run_thread *r, uint32_t self, uint64_t now)
{
    memset(r, 0, sizeof *r);
    r->tid = self;
    r->kind = TT_RUN_KIND_OTHER;
    r->start_ns = g_start_ns;
    if (read_alive(r, self, 1, now) == 0) {
        memcpy(r->name_start, r->name_end, TT_RUN_NAME); /* one name read for both */
    } else {
        thread_name(0, r->name_start);
        r->end_ns = tt__run_now(); /* known to have lived, its CPU unknown */
        r->user_ns = r->system_ns = -1;
    }
    atomic_store_explicit(&r->state, TT_RUN_AT_EXIT, memory_order_relaxed);
}

/* The EXIT record of a lone process with no file: its one thread, appended
 * to the log. Static, not on the stack: _exit() in a signal handler may
 * run this on a small alternate stack, once per process. 0 or -errno. */
static tt__run_log_rec g_exit_rec;
static int log_exit(uint32_t self, uint64_t now)
{
    if (!g_log.ino)
        return -ENOENT;
    read_key(); /* a fork child's, read here: it logged no START */
    log_fill(&g_exit_rec, TT_RUN_LOG_EXIT);
    read_lone(&g_exit_rec.thread, self, now);
    g_exit_rec.end_ns = g_exit_rec.thread.end_ns;
    return tt__run_log_append(g_dir, &g_log, &g_exit_rec);
}

/* The exit record of a lone process that has a file (the log did not take
 * it): its thread and the header's end, written beside the header (with
 * pwrite, or through the mapping of a file made by root). Called with
 * every signal held: a handler that reaped a child or started a thread
 * meanwhile would take a record, and this record, written beside the
 * header, would then be lost. The mapping is claimed first, and a file
 * mapped when made lets its records go, so a handler that runs once
 * signals are let through again (while exit() ends) takes none either:
 * the record stays whole, and what such a handler does is not recorded. */
static void exit_alone(uint32_t self, uint64_t now)
{
    atomic_store_explicit(&g_mapping, 1, memory_order_relaxed);
    __atomic_store_n(&g_file.threads, NULL, __ATOMIC_RELEASE);
    tt__run_thread r;
    read_lone(&r, self, now);
    atomic_store_explicit(&g_file.head.threads_used, 1, memory_order_relaxed);
    atomic_store_explicit(&g_file.head.end_ns, r.end_ns, memory_order_relaxed);
    atomic_store_explicit(&g_file.head.state, TT_RUN_PROC_EXITED, memory_order_relaxed);
    tt__run_file_put_alone(&g_file, &r);
}

/* Writes the exit record: every thread alive now, read, and the file
 * marked EXITED. Run by exit() (an atexit handler) and by _exit() (which
 * dash, forked children and signal handlers call), so it takes no lock and
 * calls no malloc: a signal handler may have interrupted either. Scratch
 * memory comes from the stack, or from mmap for many threads. Once per
 * process. */
static void write_exit(void)
{
    /* A vfork child runs on the parent's memory until it execs, and a
     * child of a raw clone() on a copy with the parent's file mapped: not
     * a process of ours (no fork handler ran for it). getpid() is a
     * system call, never a cached value. */
    if (g_owner != getpid() || atomic_exchange(&g_exit_done, 1))
        return;
    /* Signals held from the count of threads to the end of a lone
     * process's record: a handler in between could start a thread or map
     * the file (exit_alone). Let through again before exit() goes on: a
     * signal the program's last writes raise (SIGPIPE) must act as it
     * would without the preload. Not those a fault raises
     * (tt__signals_hold): held, the kernel kills the process for them, as
     * it would one whose seccomp filter answers a call with SIGSYS (a
     * sandbox that emulates the call in its handler). */
    sigset_t old;
    int held = tt__signals_hold(&old);
    int alone = only_thread();
    /* The only thread of a process is its leader, whose tid is the pid:
     * unshare(CLONE_THREAD) succeeds only for a leader with no other thread
     * (thread_group_empty), and the link count counts a leader that ended
     * before the others (a zombie until they end) as a thread. */
    uint32_t self = alone ? (uint32_t)g_owner : (uint32_t)tt__gettid();
    if (alone && (!__atomic_load_n(&g_file.threads, __ATOMIC_ACQUIRE) ||
                  !atomic_load_explicit(&g_file.hdr->threads_used, memory_order_relaxed))) {
        /* A lone process without a file writes its EXIT record to the log
         * (none where it failed to make its file: its NOFILE record stands,
         * as threads it ran since are in no figure here); one the log
         * refuses, or one with a file, writes its file. */
        uint64_t now = tt__run_now();
        int lost = atomic_load_explicit(&g_file_err, memory_order_relaxed);
        int done = !g_file.hdr && !lost && log_exit(self, now) == 0;
        /* Logged: no file after it either, as exit_alone lets its records
         * go, so a handler that runs once signals are let through (and
         * reaps a child) records nothing beside this image's EXIT record. */
        if (done)
            atomic_store_explicit(&g_creating, 1, memory_order_relaxed);
        else if (!lost && have_file() && (!__atomic_load_n(&g_file.threads, __ATOMIC_ACQUIRE) ||
                                 !atomic_load_explicit(&g_file.hdr->threads_used, memory_order_relaxed))) {
            exit_alone(self, now);
            done = 1;
        }
        if (done || !g_file.hdr) {
            tt__signals_release(&old, held);
            return;
        }
    }
    tt__signals_release(&old, held);
    if (!have_map())
        return;
    /* A round under way would add a SEEN record beside the ones read
     * below: let it end (a round takes ~0.3 ms per 1,000 threads; the
     * wait is bounded at 100 ms in case the sampler cannot run). */
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 2000 && atomic_load(&g_in_round); i++)
        nanosleep(&(struct timespec){0, 50000}, NULL);
    /* From after the wait: the round's figures were taken before. Each
     * thread's end is taken at its read (read_alive), the process's after
     * the last. */
    uint64_t now = tt__run_now();
    /* Listed once into a map on the stack, which holds the threads of most
     * processes; only a process with more is listed again into one sized
     * from the count. Two listings and an mmap were ~30 us of a short
     * process's exit here. A process the kernel counts one thread in (a
     * shell, a compiler) is not listed at all: its one thread is this one. */
    static tid_entry few[32];
    memset(few, 0, sizeof few);
    exit_list l = {{few, 32, 0, 0}, 0, 0};
    if (alone)
        list_task(self, &l);
    else
        each_task(list_task, &l, g_exit_scratch, sizeof g_exit_scratch);
    tid_map m = l.map;
    size_t mapped = 0;
    if (l.left_out) {
        m = (tid_map){NULL, 64, 0, 0};
        while (m.cap < 4 * (l.listed + 16))
            m.cap *= 2;
        mapped = m.cap * sizeof *m.e;
        m.e = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m.e == MAP_FAILED)
            m.e = NULL; /* out of memory at exit: the records taken so far stand */
        l = (exit_list){m, 0, 0};
        if (m.e)
            each_task(list_task, &l, g_exit_scratch, sizeof g_exit_scratch);
        m = l.map;
    }
    uint32_t sampler = g_file.hdr->sampler_tid;
    uint32_t used = atomic_load_explicit(&g_file.hdr->threads_used, memory_order_acquire);
    if (used > g_file.hdr->thread_cap)
        used = g_file.hdr->thread_cap;
    /* Records of threads alive now: read them and mark their tid done
     * (seen_round 1). One record per live thread. A SEEN record of a
     * pthread comes after its own (the sampler listed the thread before
     * its record was published): the thread's own record, earlier, was
     * read already. */
    for (uint32_t i = 0; m.e && i < used; i++) {
        tt__run_thread *r = &g_file.threads[i];
        uint32_t st = atomic_load_explicit(&r->state, memory_order_acquire);
        if (r->kind == TT_RUN_KIND_CHILD)
            continue; /* its pid may be a thread's tid by now */
        tid_entry *e = map_slot(&m, r->tid);
        if (!e->tid || e->seen_round || (st != TT_RUN_LIVE && st != TT_RUN_SEEN && st != TT_RUN_ENDED))
            continue;
        e->seen_round = 1; /* an ended thread still listed while it finishes counts too */
        /* Still listed but gone by the read (a thread whose end the
         * program already waited for can linger in /proc/self/task): its
         * record stays what it was, the sampler's last figure. */
        if (st != TT_RUN_ENDED && tt__run_thread_claim(r, st))
            tt__run_thread_publish(r, read_alive(r, e->tid, e->tid == self, now) == 0 ? TT_RUN_AT_EXIT : st);
    }
    for (uint32_t i = 0; m.e && i < m.cap; i++) {
        tid_entry *e = &m.e[i];
        if (!e->tid || e->seen_round || e->tid == sampler)
            continue;
        tt__run_thread *r = tt__run_thread_take(&g_file);
        if (!r)
            break;
        r->tid = e->tid;
        r->kind = TT_RUN_KIND_OTHER;
        r->start_ns = e->tid == g_file.hdr->pid ? g_file.hdr->start_ns : 0; /* 0: start unknown */
        /* Its own name without /proc: one prctl() for the calling thread. */
        thread_name(e->tid == self ? 0 : (pid_t)e->tid, r->name_start);
        if (read_alive(r, e->tid, e->tid == self, now) != 0) {
            r->end_ns = tt__run_now(); /* gone by the read: known to have lived, its CPU unknown */
            r->user_ns = r->system_ns = -1;
        }
        tt__run_thread_publish(r, TT_RUN_AT_EXIT);
    }
    if (mapped && m.e)
        munmap(m.e, mapped);
    if (sampler) {
        int64_t s = tt_tid_total_ns((pid_t)sampler);
        if (s >= 0)
            atomic_store_explicit(&g_file.hdr->sampler_cpu_ns, (uint64_t)s, memory_order_relaxed);
    }
    /* The process's end after every thread's. */
    atomic_store_explicit(&g_file.hdr->end_ns, tt__run_now(), memory_order_relaxed);
    /* A reservation failed (a full disk), for records or samples: from
     * then on a record that needed blocks was lost, a thread's or this
     * handler's own. The file says why and stays RUNNING, so that its
     * parent's wait4 counts what the records here do not hold (all of it
     * may be here where only samples found none). */
    int full = atomic_load_explicit(&g_file.full, memory_order_relaxed);
    if (full) {
        g_file.hdr->file_errno = (uint32_t)full;
        return;
    }
    /* Release: a reader that sees EXITED sees every record above. */
    atomic_store_explicit(&g_file.hdr->state, TT_RUN_PROC_EXITED, memory_order_release);
}

/* errno as the program left it: atexit handlers registered before this
 * one run after it. */
static void at_exit(void)
{
    int e = errno;
    write_exit();
    errno = e;
}

/* _exit() and _Exit() end the process without exit()'s handlers: dash
 * ends that way, as do forked children (a multiprocessing worker) and
 * many signal handlers. The record is written first, then the process
 * ends as libc's _exit() ends it (exit_group, for every thread). Calls
 * that libc makes to its own _exit inside (exit() itself, posix_spawn's
 * child) do not come through here. */
EXPORT __attribute__((noreturn)) void _exit(int status)
{
    if (g_dir)
        at_exit();
    for (;;)
        syscall(SYS_exit_group, status);
}
EXPORT __attribute__((noreturn, alias("_exit"))) void _Exit(int status);

/* A setting's value; out of its range, its default (settings.def): the
 * library runs inside other programs and says nothing on their stderr. */
static uint64_t setting(tt__setting_id id)
{
    uint64_t v;
    tt__setting_uint(id, &v);
    return v;
}

/* THREADTIME_RUN_DIR, copied: the program may change its environment, or
 * write over it (a process title). Static, not strdup: no malloc arena is
 * set up in a process that would make none. */
static char g_dir_copy[4096];

/* Only what every process needs is done here: libc's pthread_create and
 * the other wrapped functions are looked up when first called. */
static void load(void);
__attribute__((constructor)) static void run_init(void)
{
    int e = errno; /* main() finds it as the loader left it: 0, as C says */
    load();
    errno = e;
}

static void load(void)
{
    /* The settings' readers (tt__env): nothing from the environment under
     * setuid, setgid or file capabilities (the loader drops LD_PRELOAD there
     * anyway). */
    const char *dir = tt__setting_path(TT__SET_RUN_DIR);
    size_t n = dir ? strlen(dir) : 0;
    if (!n || n >= sizeof g_dir_copy)
        return; /* unset, or a path no file could be made under */
    memcpy(g_dir_copy, dir, n + 1);
    g_dir = g_dir_copy;
    g_interval_ns = setting(TT__SET_RUN_INTERVAL_NS);
    g_thread_cap = (uint32_t)setting(TT__SET_RUN_THREADS); /* at most TT_RUN_*_CAP_MAX */
    g_sample_cap = (uint32_t)setting(TT__SET_RUN_SAMPLES);
    g_log.dev = setting(TT__SET_RUN_LOG_DEV);
    g_log.ino = setting(TT__SET_RUN_LOG_INO);
    g_log.uid = (uint32_t)setting(TT__SET_RUN_LOG_UID);
    g_owner = getpid();
    g_start_ns = tt__run_now();
    g_start_real_ns = tt__run_now_real();
    pthread_atfork(NULL, NULL, fork_child);
    /* The image's start goes to the log; its own file waits until it is
     * needed. Where the log cannot be written, the file is made now, as a
     * process killed before its exit is still seen by it. */
    if (!log_start() && !have_file())
        return;
    atexit(at_exit);
}
