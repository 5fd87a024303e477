/* CPU clocks: kernel CPU clockids first, getrusage() and /proc as fallbacks.
 *
 * The fast path of every call is one clock_gettime() on a clockid built at
 * compile time (the caller's) or from a tid, plus one relaxed load of the
 * active method and, for the figures promised monotonic, one raise of a
 * thread-local floor. Only a refused read (seccomp, old kernel) or a forced
 * method leaves it. Nothing here takes a lock: every call a signal handler
 * may make (see cpu.h) completes whatever it interrupted.
 */
#include "internal.h"
#include "threadtime/arch.h"
#include "prim/clockid.h"
#include "prim/thread.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* ---- method selection ---- */

/* The method thread clocks are read with. Starts optimistic (clockids work
 * on every kernel since 2.6.12); the first refusal moves it to PROCFS (the
 * fallback: getrusage() for the caller, /proc for others) unless the user
 * forced a method. Relaxed loads: it only ever changes between whole
 * methods, and the floors below keep each answer from going back when it
 * does. */
static _Atomic int g_method = TT_METHOD_CLOCKID;
static _Atomic int g_forced = TT_METHOD_AUTO;
/* The errno of the refusal that caused the fallback (0: none seen): what a
 * call answers when no other source can. */
static _Atomic int g_refusal;

static int is_refusal(int64_t err)
{
    return err == -EPERM || err == -ENOSYS || err == -EACCES;
}

static int clockid_refused(void)
{
    int64_t r = tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_VIRT));
    if (r < 0 && is_refusal(r)) {
        atomic_store_explicit(&g_refusal, (int)-r, memory_order_relaxed);
        return 1;
    }
    return 0;
}

/* Called when a clockid read was refused: fall back, once and for all,
 * unless the user asked for clockids by name. */
int tt__fall_back(int64_t err)
{
    if (!is_refusal(err))
        return 0;
    atomic_store_explicit(&g_refusal, (int)-err, memory_order_relaxed);
    if (atomic_load_explicit(&g_forced, memory_order_relaxed) != TT_METHOD_AUTO)
        return 0;
    atomic_store_explicit(&g_method, TT_METHOD_PROCFS, memory_order_relaxed);
    return 1;
}

int tt__use_clockid(void)
{
    return atomic_load_explicit(&g_method, memory_order_relaxed) == TT_METHOD_CLOCKID;
}

int tt__forced_method(void) { return atomic_load_explicit(&g_forced, memory_order_relaxed); }

int tt__no_source(void)
{
    int e = atomic_load_explicit(&g_refusal, memory_order_relaxed);
    return e != 0 ? -e : -ENOTSUP;
}

static int procfs_mounted(void) { return access("/proc/self/stat", R_OK) == 0; }

int tt_method_set(tt_method m)
{
    tt_times t;
    tt_procfs_stat st;
    switch (m) {
    case TT_METHOD_AUTO:
        atomic_store(&g_forced, TT_METHOD_AUTO);
        atomic_store(&g_method, clockid_refused() ? TT_METHOD_PROCFS : TT_METHOD_CLOCKID);
        return 0;
    case TT_METHOD_CLOCKID:
        if (clockid_refused())
            return -ENOTSUP;
        break;
    case TT_METHOD_GETRUSAGE:
        if (tt_getrusage_thread(&t) != 0)
            return -ENOTSUP;
        break;
    case TT_METHOD_PROCFS:
        if (tt_procfs_read(0, 0, &st) != 0)
            return -ENOTSUP;
        break;
    default:
        return -EINVAL;
    }
    atomic_store(&g_forced, m);
    atomic_store(&g_method, m);
    return 0;
}

tt_method tt_method_active(void)
{
    int forced = tt__forced_method();
    if (forced != TT_METHOD_AUTO)
        return (tt_method)forced;
    /* One test read (~300 ns) rather than the state of the last real read:
     * a seccomp filter installed since then has not been met yet. */
    if (tt__use_clockid()) {
        int64_t r = tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_VIRT));
        if (r < 0)
            tt__fall_back(r);
    }
    if (tt__use_clockid())
        return TT_METHOD_CLOCKID;
    /* Without /proc only the caller's own clocks (and its process) answer. */
    return procfs_mounted() ? TT_METHOD_PROCFS : TT_METHOD_GETRUSAGE;
}

const char *tt_method_name(tt_method m)
{
    switch (m) {
    case TT_METHOD_AUTO: return "auto";
    case TT_METHOD_CLOCKID: return "clockid";
    case TT_METHOD_GETRUSAGE: return "getrusage";
    case TT_METHOD_PROCFS: return "procfs";
    }
    return NULL;
}

/* ---- shared helpers ---- */

int tt__classify_missing(pid_t id)
{
    /* kill(id, 0) finds any task by id, thread or process, without sending
     * anything: ESRCH means it is gone; success or EPERM means it exists,
     * so the kernel refused it for belonging to another process (threads)
     * or for not leading its process (process clocks). */
    if (kill(id, 0) != 0 && errno == ESRCH)
        return -ESRCH;
    return -EINVAL;
}

int tt__procfs_missing(pid_t pid, pid_t tid)
{
    /* /proc says ESRCH for a task it cannot find (see tt_procfs_read), and
     * for every task when it is not mounted at all: only the first is the
     * task's fault. tgkill(our pid, tid, 0) finds a live thread of ours
     * without /proc and without sending anything. */
    if (tid != 0)
        return tt__tgkill(getpid(), tid, 0) == 0 ? tt__no_source() : tt__classify_missing(tid);
    int rc = tt__classify_missing(pid);
    return rc == -EINVAL && !procfs_mounted() ? tt__no_source() : rc;
}

int64_t tt__split_propose(int64_t virt, int64_t prof, int64_t sched)
{
    int64_t utick = virt > 0 ? virt : 0;
    int64_t stick = prof > utick ? prof - utick : 0;
    if (stick == 0 || sched <= 0)
        return 0;
    if (utick == 0)
        return sched;
    /* 128-bit product: sched * stick overflows 64 bits after ~100 days. */
    return (int64_t)((__int128)sched * stick / (utick + stick));
}

/* Reads the committed answer of *s consistently: 0 and *q (the seq it
 * belongs to), or -1 if a commit replaced it meanwhile (read again). */
static int split_snapshot(tt__split *s, uint64_t *q, int64_t *user, int64_t *sys)
{
    /* Acquire: the slot that seq names was filled before seq was. */
    *q = atomic_load_explicit(&s->seq, memory_order_acquire);
    unsigned i = (unsigned)(*q >> 1) & 1u;
    *user = atomic_load_explicit(&s->user_ns[i], memory_order_relaxed);
    *sys = atomic_load_explicit(&s->system_ns[i], memory_order_relaxed);
    /* Acquire fence: the slot reads above happen before the re-check. */
    atomic_thread_fence(memory_order_acquire);
    /* Slot i is refilled only by the writer after next: seq past
     * (q | 1) + 1 means the two reads may mix two answers. */
    return atomic_load_explicit(&s->seq, memory_order_relaxed) > (*q | 1u) + 1u ? -1 : 0;
}

void tt__split_last(tt__split *s, tt_times *out)
{
    uint64_t q;
    while (split_snapshot(s, &q, &out->user_ns, &out->system_ns) != 0)
        ;
    out->total_ns = out->user_ns + out->system_ns;
}

/* tt__split_merge; local: *s belongs to the calling thread (only it and its
 * signal handlers write it, nothing else reads it), so the commit's claim
 * needs no bus lock: an unlocked cmpxchg is one instruction a handler
 * cannot split, ~5 ns cheaper per call than the locked one here. */
static inline void split_merge(tt__split *s, int64_t total, int64_t sys, tt_times *out, int local)
{
    int64_t user, pu, ps;
    for (;;) {
        uint64_t q;
        if (split_snapshot(s, &q, &pu, &ps) != 0)
            continue;
        if (total <= pu + ps)
            break; /* older than the last answer: it still holds */
        if (sys < ps)
            sys = ps;
        if (sys > total - pu)
            sys = total - pu;
        user = total - sys;
        /* A commit under way (odd): give the last answer rather than wait,
         * since the writer may be the very call a signal handler interrupted. */
        if (q & 1u)
            break;
        if (local ? !tt__cas_local((uint64_t *)&s->seq, q, q + 1)
                  : !atomic_compare_exchange_strong_explicit(&s->seq, &q, q + 1, memory_order_relaxed,
                                                             memory_order_relaxed))
            continue; /* seq moved: start again from the newest answer */
        unsigned next = ((unsigned)(q >> 1) & 1u) ^ 1u;
        /* Release fence: seq odd is visible before either slot store. */
        atomic_thread_fence(memory_order_release);
        atomic_store_explicit(&s->user_ns[next], user, memory_order_relaxed);
        atomic_store_explicit(&s->system_ns[next], sys, memory_order_relaxed);
        /* Release: a reader that sees q + 2 sees the new slot. */
        atomic_store_explicit(&s->seq, q + 2, memory_order_release);
        out->user_ns = user;
        out->system_ns = sys;
        out->total_ns = total;
        return;
    }
    out->user_ns = pu;
    out->system_ns = ps;
    out->total_ns = pu + ps;
}

void tt__split_merge(tt__split *s, int64_t total, int64_t sys, tt_times *out) { split_merge(s, total, sys, out, 0); }

/* The kernel's proportion of system time in a split, as a 2^-62 fraction
 * (tt__split_propose's division, done once per distinct split). */
static int64_t kernel_share(int64_t user, int64_t sys) { return tt__split_propose(user, user + sys, INT64_C(1) << 62); }

/* A kernel split (user, sys) brought up to total >= user + sys with its
 * share: the runtime since the kernel's last update divided as the kernel
 * divided the rest, one 64x64 multiply. Held to [sys, total - user], so
 * neither part is below the kernel's whatever the fraction's rounding (or
 * a share that a signal handler's read left for another split). */
static void with_share(int64_t user, int64_t sys, int64_t total, int64_t share, tt_times *out)
{
    int64_t s = (int64_t)(((unsigned __int128)(uint64_t)total * (uint64_t)share) >> 62);
    if (s < sys)
        s = sys;
    if (s > total - user)
        s = total - user;
    out->user_ns = total - s;
    out->system_ns = s;
    out->total_ns = total;
}

int tt_times_with_total(const tt_times *kernel, int64_t total, tt_times *out)
{
    if (kernel == NULL || out == NULL)
        return -EFAULT;
    int64_t user = kernel->user_ns, sys = kernel->system_ns;
    if (user < 0 || sys < 0 || total < 0 || user > INT64_MAX - sys)
        return -EINVAL;
    /* The kernel's figure may be the later one (a total read before it):
     * it is a runtime the thread has reached, so it stands. */
    if (total < user + sys)
        total = user + sys;
    with_share(user, sys, total, kernel_share(user, sys), out);
    return 0;
}

int tt__procfs_times(pid_t pid, pid_t tid, tt_times *out)
{
    tt_procfs_stat st;
    int rc = tt_procfs_read(pid, tid, &st);
    if (rc == 0)
        tt__times_from_procfs(&st, out);
    return rc;
}

/* One clock out of a consistent split: user for VIRT, total otherwise. */
static int64_t clock_of(const tt_times *t, unsigned which)
{
    return which == TT__CPUCLOCK_VIRT ? t->user_ns : t->total_ns;
}

/* /proc fallback for one clock of a thread (pid 0 = this process). */
static int64_t procfs_clock(pid_t pid, pid_t tid, unsigned which)
{
    tt_times t;
    int rc = tt__procfs_times(pid, tid, &t);
    return rc != 0 ? rc : clock_of(&t, which);
}

/* ---- raw clock ids ---- */

int tt_make_clockid(pid_t id, int thread, tt_clock clock, clockid_t *out)
{
    if (out == NULL)
        return -EFAULT;
    if (id < 0 || id > TT__CPUCLOCK_PID_MAX || (unsigned)clock >= TT__CPUCLOCK_MAX)
        return -EINVAL;
    *out = tt__cpu_clockid(id, thread != 0, (unsigned)clock);
    return 0;
}

int64_t tt_clock_ns(pid_t id, int thread, tt_clock clock)
{
    clockid_t cid;
    int rc = tt_make_clockid(id, thread, clock, &cid);
    if (rc != 0)
        return rc;
    int64_t r = tt__read_clock(cid);
    if (r == -EINVAL && id != 0)
        return tt__classify_missing(id);
    return r;
}

/* ---- the calling thread ---- */

/* What each thread keeps for the calls it makes on itself. initial-exec:
 * reachable from a signal handler without __tls_get_addr, which may
 * allocate. 208 bytes of static TLS, and the SCHED floor apart (the fast
 * clock reads it on every answer). */
typedef struct self_state {
    tt__floor raw[2];                    /* tt_self_*_raw_ns, tt_tid_*_raw_ns(0): PROF, VIRT */
    tt__floor process[TT__CPUCLOCK_MAX]; /* tt_process_*(0) called on this thread */
    tt__split times;                     /* tt_self_times */
    tt__split process_times;             /* tt_process_times(0) called on this thread */
    int64_t kernel_user, kernel_system;  /* the last getrusage() split tt_self_times saw */
    int64_t kernel_share;                /* its system share, in 2^-62 */
    uint64_t kernel_anchor;              /* the fast clock's anchor when it was read */
    tt__split events;                    /* the event log's CPU intervals */
    uint64_t events_anchor;              /* the fast anchor events_share was read for */
    int64_t events_share;                /* the system share of its raw ticks, in 2^-62 */
} self_state;
static __thread self_state t_self __attribute__((tls_model("initial-exec")));
__thread tt__floor tt__total_floor __attribute__((tls_model("initial-exec")));

static tt__floor *self_floor(unsigned which)
{
    return which == TT__CPUCLOCK_SCHED ? &tt__total_floor : &t_self.raw[which];
}

/* ---- fork ---- */

_Atomic unsigned tt__fork_gen;

/* In the child, on the one thread there: every figure this thread kept
 * describes the parent's thread, whose clock the child's does not continue
 * (the child's starts near 0). Stores only: fork may be called from a
 * signal handler. Also called by the fast clock in a child that skipped the
 * atfork handlers (_Fork, a raw clone). */
void tt__fork_child_reset(void)
{
    memset(&t_self, 0, sizeof t_self);
    atomic_store_explicit(&tt__total_floor, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&tt__fork_gen, 1, memory_order_relaxed);
    tt__fast_fork_child();
}

__attribute__((constructor)) static void cpu_load(void) { pthread_atfork(NULL, NULL, tt__fork_child_reset); }

/* getrusage() for RUSAGE_THREAD or RUSAGE_SELF, as a split in ns, and the
 * same call's switch counts into sw unless it is NULL. */
static int rusage_times(int who, tt_times *out, tt_sched *sw)
{
    struct rusage ru;
    if (out == NULL)
        return -EFAULT;
    if (getrusage(who, &ru) != 0)
        return -errno;
    out->user_ns = (int64_t)ru.ru_utime.tv_sec * TT__NS_PER_SEC + (int64_t)ru.ru_utime.tv_usec * 1000;
    out->system_ns = (int64_t)ru.ru_stime.tv_sec * TT__NS_PER_SEC + (int64_t)ru.ru_stime.tv_usec * 1000;
    out->total_ns = out->user_ns + out->system_ns;
    if (sw) {
        sw->voluntary_switches = ru.ru_nvcsw;
        sw->involuntary_switches = ru.ru_nivcsw;
    }
    return 0;
}

int tt_getrusage_thread(tt_times *out) { return rusage_times(RUSAGE_THREAD, out, NULL); }

int tt__own_split_switches(tt_times *out, tt_sched *sw) { return rusage_times(RUSAGE_THREAD, out, sw); }

/* The caller's own thread (RUSAGE_THREAD) or process (RUSAGE_SELF) without
 * clockids, cheapest source first: getrusage() (one call, us), then /proc
 * (~10 us, clock ticks); a forced method alone. Errors are never about the
 * caller's existence: when nothing answers, the refusal. */
int tt__own_times(int who, tt_times *out)
{
    int forced = tt__forced_method();
    if (forced != TT_METHOD_PROCFS) {
        int rc = rusage_times(who, out, NULL);
        if (rc == 0 || forced == TT_METHOD_GETRUSAGE)
            return rc;
    }
    int rc = who == RUSAGE_THREAD ? tt__procfs_times(0, tt__gettid(), out) : tt__procfs_times(0, 0, out);
    if (rc == -ESRCH)
        return tt__no_source(); /* we exist: /proc is what is missing */
    return rc;
}

/* Slow path for the calling thread: a refused clockid or a forced method. */
static int64_t self_fallback(unsigned which)
{
    tt_times t;
    int rc = tt__own_times(RUSAGE_THREAD, &t);
    return rc != 0 ? rc : clock_of(&t, which);
}

static int64_t self_clock(unsigned which)
{
    int64_t r;
    if (tt__use_clockid()) {
        r = tt__read_clock(TT__SELF_THREAD_CLOCK(which));
        if (r < 0 && tt__fall_back(r))
            r = self_fallback(which);
    } else {
        r = self_fallback(which);
    }
    return r < 0 ? r : tt__floor_raise(self_floor(which), r);
}

int64_t tt_self_total_ns(void) { return self_clock(TT__CPUCLOCK_SCHED); }
int64_t tt_self_user_raw_ns(void) { return self_clock(TT__CPUCLOCK_VIRT); }
int64_t tt_self_prof_raw_ns(void) { return self_clock(TT__CPUCLOCK_PROF); }

int64_t tt_self_system_raw_ns(void)
{
    int64_t user = tt_self_user_raw_ns();
    if (user < 0)
        return user;
    int64_t prof = tt_self_prof_raw_ns();
    if (prof < 0)
        return prof;
    return prof > user ? prof - user : 0;
}

static int self_split_clockid(tt__split *s, tt_times *out)
{
    int64_t v[3];
    int rc = tt__read_three(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_VIRT),
                            TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_PROF),
                            TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_SCHED), v);
    if (rc == 0)
        tt__split_scale(s, v[0], v[1], v[2], out);
    return rc;
}

int tt__self_split_at(uint64_t counter, tt_times *out)
{
    uint64_t anchor;
    int64_t total = tt__fast_ns_at(counter, &anchor);
    if (total < 0)
        return (int)total;
    /* Ticks once per anchor: a handler that lands between these reads and
     * the stores below reads its own; both are recent enough to proportion. */
    if (anchor == UINT64_MAX || anchor != t_self.events_anchor) {
        int64_t virt = tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_VIRT));
        int64_t prof = tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_PROF));
        if (virt < 0 || prof < 0) {
            /* No clockids (a seccomp filter): the kernel's own split. */
            tt_times t;
            int rc = tt__own_times(RUSAGE_THREAD, &t);
            if (rc == 0)
                split_merge(&t_self.events, t.total_ns, t.system_ns, out, 1);
            return rc;
        }
        /* The share, not the ticks: tt__split_propose's 128-bit division
         * once per anchor instead of at every read (~5 ns a read here).
         * Rounded down twice, the system part is at most 1 ns below the
         * division's. */
        t_self.events_share = tt__split_propose(virt, prof, INT64_C(1) << 62);
        t_self.events_anchor = anchor;
    }
    int64_t sys = (int64_t)(((unsigned __int128)(uint64_t)total * (uint64_t)t_self.events_share) >> 62);
    split_merge(&t_self.events, total, sys, out, 1);
    return 0;
}

/* tt__self_kernel_times, inline in tt_self_times. On the default path the
 * fast clock's total comes first: while it answers from the same anchor as
 * when this thread last read getrusage(), nothing switched the thread out
 * since, and at most TT_FAST_BOUND_NS of CPU went by, so that split still
 * gives the proportion (the kernel moves it only at a tick, 4 ms here) and
 * the call costs the fast read and the arithmetic (~30 ns against ~200 for
 * getrusage). A new anchor, or none, reads getrusage() again. */
static inline int self_kernel_times(tt_times *out)
{
    uint64_t anchor = UINT64_MAX;
    int64_t total = -1;
    int rc = -1;
    if (tt__forced_method() == TT_METHOD_AUTO && tt__use_clockid()) {
        total = tt__fast_ns(&anchor);
        if (total >= 0 && anchor != UINT64_MAX && anchor == t_self.kernel_anchor) {
            int64_t user = t_self.kernel_user, sys = t_self.kernel_system;
            with_share(user, sys, total > user + sys ? total : user + sys, t_self.kernel_share, out);
            return 0;
        }
        rc = rusage_times(RUSAGE_THREAD, out, NULL);
    }
    if (rc != 0)
        rc = tt__own_times(RUSAGE_THREAD, out);
    /* Only while clockids are the method is there a precise total: a
     * forced getrusage or /proc is that source's figure alone. */
    if (rc != 0 || !tt__use_clockid())
        return rc;
    if (total < 0 && (total = tt__fast_ns(&anchor)) < 0)
        return 0;
    /* The kernel's split lags the runtime by up to a tick: whichever was
     * read first, the precise total is the later figure, and max() keeps
     * the kernel's if the order ever made it larger. The share is kept
     * with the split (the 128-bit division once per split, not per call).
     * A signal handler that interleaves its own update here leaves a
     * mixed split at worst, whose parts each still lie below the total, so
     * with_share's bounds hold; the anchor is stored last. */
    int64_t user = out->user_ns, sys = out->system_ns;
    if (user != t_self.kernel_user || sys != t_self.kernel_system) {
        t_self.kernel_share = kernel_share(user, sys);
        t_self.kernel_user = user;
        t_self.kernel_system = sys;
    }
    /* The split before the anchor, also in the compiler's order: a signal
     * handler that finds this anchor finds this split. */
    atomic_signal_fence(memory_order_seq_cst);
    t_self.kernel_anchor = anchor;
    with_share(user, sys, total > user + sys ? total : user + sys, t_self.kernel_share, out);
    return 0;
}

int tt__self_kernel_times(tt_times *out) { return self_kernel_times(out); }

int tt_self_times(tt_times *out)
{
    if (out == NULL)
        return -EFAULT;
    tt_times t;
    if (tt__forced_method() == TT_METHOD_CLOCKID) {
        /* Forced, so a refusal is answered as it is (no fall back). */
        int rc = self_split_clockid(&t_self.times, out);
        if (rc == 0 || !tt__fall_back(rc))
            return rc;
    }
    /* By default the fast clock, with getrusage(RUSAGE_THREAD) only when
     * it re-anchored (self_kernel_times): 0.22 x one getrusage() in
     * make bench-split while the anchor holds. Every answer is merged
     * into the state. A shortcut that answered a reading at or above the
     * state without merging it failed under a signal storm: a handler's
     * answer landed between this reading and the check, and this call then
     * answered below it (test_signal, TSan). */
    int rc = self_kernel_times(&t);
    if (rc == 0)
        split_merge(&t_self.times, t.total_ns, t.system_ns, out, 1);
    return rc;
}

/* ---- another thread, by tid ---- */

static int64_t tid_clock(pid_t tid, unsigned which)
{
    if (tid == 0)
        return self_clock(which);
    if (tid < 0 || tid > TT__CPUCLOCK_PID_MAX)
        return -EINVAL;
    if (tt__use_clockid()) {
        int64_t r = tt__read_clock(tt__cpu_clockid(tid, 1, which));
        if (r >= 0)
            return r;
        if (r == -EINVAL)
            return tt__classify_missing(tid);
        if (!tt__fall_back(r))
            return r;
    }
    /* Off the fast path, so the gettid system call costs nothing. */
    if (tid == tt__gettid())
        return self_clock(which);
    int64_t r = procfs_clock(0, tid, which);
    return r == -ESRCH ? tt__procfs_missing(0, tid) : r;
}

int64_t tt_tid_total_ns(pid_t tid) { return tid_clock(tid, TT__CPUCLOCK_SCHED); }
int64_t tt_tid_user_raw_ns(pid_t tid) { return tid_clock(tid, TT__CPUCLOCK_VIRT); }
int64_t tt_tid_prof_raw_ns(pid_t tid) { return tid_clock(tid, TT__CPUCLOCK_PROF); }

int64_t tt_tid_system_raw_ns(pid_t tid)
{
    int64_t user = tid_clock(tid, TT__CPUCLOCK_VIRT);
    if (user < 0)
        return user;
    int64_t prof = tid_clock(tid, TT__CPUCLOCK_PROF);
    if (prof < 0)
        return prof;
    return prof > user ? prof - user : 0;
}

/* ---- processes ---- */

static int64_t process_clock(pid_t pid, unsigned which)
{
    if (pid < 0 || pid > TT__CPUCLOCK_PID_MAX)
        return -EINVAL;
    int64_t r = tt__read_clock(tt__cpu_clockid(pid, 0, which));
    if (r < 0) {
        if (r == -EINVAL && pid != 0)
            return tt__classify_missing(pid);
        if (!is_refusal(r))
            return r;
        atomic_store_explicit(&g_refusal, (int)-r, memory_order_relaxed);
        if (pid == 0 || pid == getpid()) {
            tt_times t;
            int rc = tt__own_times(RUSAGE_SELF, &t);
            if (rc != 0)
                return rc;
            r = clock_of(&t, which);
            pid = 0;
        } else {
            r = procfs_clock(pid, 0, which);
            return r == -ESRCH ? tt__procfs_missing(pid, 0) : r;
        }
    }
    /* The own process's figures, per calling thread: a floor shared by all
     * threads would put one contended cache line on every read. */
    return pid == 0 ? tt__floor_raise(&t_self.process[which], r) : r;
}

int64_t tt_process_total_ns(pid_t pid) { return process_clock(pid, TT__CPUCLOCK_SCHED); }
int64_t tt_process_user_raw_ns(pid_t pid) { return process_clock(pid, TT__CPUCLOCK_VIRT); }
int64_t tt_process_prof_raw_ns(pid_t pid) { return process_clock(pid, TT__CPUCLOCK_PROF); }

int tt_process_times(pid_t pid, tt_times *out)
{
    if (out == NULL)
        return -EFAULT;
    if (pid < 0 || pid > TT__CPUCLOCK_PID_MAX)
        return -EINVAL;
    if (pid == 0 || pid == getpid()) {
        tt_times t;
        int rc = rusage_times(RUSAGE_SELF, &t, NULL);
        if (rc != 0)
            return rc;
        /* getrusage() truncates each part to us; the process clock read
         * after it gives the ns total (and never less: both bring the
         * calling thread up to date, other threads count as of their last
         * tick in both). Refused: getrusage()'s figure alone. */
        int64_t total = tt__read_clock(tt__cpu_clockid(0, 0, TT__CPUCLOCK_SCHED));
        if (total >= 0)
            tt_times_with_total(&t, total, &t);
        split_merge(&t_self.process_times, t.total_ns, t.system_ns, out, 1);
        return 0;
    }
    int rc = tt__procfs_times(pid, 0, out);
    return rc == -ESRCH ? tt__procfs_missing(pid, 0) : rc;
}
