/* CPU clocks: kernel CPU clockids first, /proc and getrusage() as fallbacks.
 *
 * The fast path of every call is one clock_gettime() on a clockid built at
 * compile time (the caller's) or from a tid, plus one relaxed load of the
 * active method. Only a refused read (seccomp, old kernel) or a forced method
 * leaves it.
 */
#include "internal.h"
#include "linux/clockid.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* ---- method selection ---- */

/* The method thread clocks are read with. Starts optimistic (clockids work
 * on every kernel since 2.6.12); the first refusal moves it to PROCFS unless
 * the user forced a method. Relaxed loads: it only ever changes between
 * whole methods, each of which answers correctly on its own. */
static _Atomic int g_method = TT_METHOD_CLOCKID;
static _Atomic int g_forced = TT_METHOD_AUTO;

static int is_refusal(int64_t err)
{
    return err == -EPERM || err == -ENOSYS || err == -EACCES;
}

static int clockid_refused(void)
{
    int64_t r = tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_VIRT));
    return r < 0 && is_refusal(r);
}

/* Called when a clockid read was refused: fall back, once and for all,
 * unless the user asked for clockids by name. */
static int fall_back(int64_t err)
{
    if (!is_refusal(err) || atomic_load_explicit(&g_forced, memory_order_relaxed) != TT_METHOD_AUTO)
        return 0;
    atomic_store_explicit(&g_method, TT_METHOD_PROCFS, memory_order_relaxed);
    return 1;
}

static int use_clockid(void)
{
    return atomic_load_explicit(&g_method, memory_order_relaxed) == TT_METHOD_CLOCKID;
}

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
    return (tt_method)atomic_load_explicit(&g_method, memory_order_relaxed);
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

void tt__split_merge(tt__split *prev, int64_t total, int64_t sys, tt_times *out)
{
    int64_t user;

    if (total <= prev->user_ns + prev->system_ns) {
        /* A read older than the last answer (a later caller's, or a source
         * that lags): the last answer still holds. */
        user = prev->user_ns;
        sys = prev->system_ns;
    } else {
        user = total - sys;
        /* Keep both parts monotonic; total > prev sum makes this consistent. */
        if (sys < prev->system_ns) {
            sys = prev->system_ns;
            user = total - sys;
        }
        if (user < prev->user_ns) {
            user = prev->user_ns;
            sys = total - user;
        }
        prev->user_ns = user;
        prev->system_ns = sys;
    }
    out->user_ns = user;
    out->system_ns = sys;
    out->total_ns = user + sys;
}

void tt__split_scale(tt__split *prev, int64_t virt, int64_t prof, int64_t sched, tt_times *out)
{
    int64_t utick = virt > 0 ? virt : 0;
    int64_t stick = prof > utick ? prof - utick : 0;
    int64_t sys;

    if (stick == 0)
        sys = 0;
    else if (utick == 0)
        sys = sched;
    else /* 128-bit product: sched * stick overflows 64 bits after ~100 days */
        sys = (int64_t)((__int128)sched * stick / (utick + stick));
    tt__split_merge(prev, sched, sys, out);
}

/* /proc fallback for one clock of a thread (pid 0 = this process). */
static int64_t procfs_clock(pid_t pid, pid_t tid, unsigned which)
{
    tt_procfs_stat st;
    int rc = tt_procfs_read(pid, tid, &st);
    if (rc != 0)
        return rc;
    switch (which) {
    case TT__CPUCLOCK_VIRT: return st.user_ns;
    default: return st.user_ns + st.system_ns;
    }
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

/* Slow path for the calling thread: a refused clockid or a forced method. */
static int64_t self_fallback(unsigned which)
{
    tt_times t;
    if (tt_method_active() == TT_METHOD_GETRUSAGE) {
        int rc = tt_getrusage_thread(&t);
        if (rc != 0)
            return rc;
        return which == TT__CPUCLOCK_VIRT ? t.user_ns : t.total_ns;
    }
    return procfs_clock(0, gettid(), which);
}

static int64_t self_clock(unsigned which)
{
    if (use_clockid()) {
        int64_t r = tt__read_clock(TT__SELF_THREAD_CLOCK(which));
        if (r >= 0 || !fall_back(r))
            return r;
    }
    return self_fallback(which);
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

/* getrusage() for RUSAGE_THREAD or RUSAGE_SELF, as a split in ns. */
static int rusage_times(int who, tt_times *out)
{
    struct rusage ru;
    if (out == NULL)
        return -EFAULT;
    if (getrusage(who, &ru) != 0)
        return -errno;
    out->user_ns = (int64_t)ru.ru_utime.tv_sec * TT__NS_PER_SEC + (int64_t)ru.ru_utime.tv_usec * 1000;
    out->system_ns = (int64_t)ru.ru_stime.tv_sec * TT__NS_PER_SEC + (int64_t)ru.ru_stime.tv_usec * 1000;
    out->total_ns = out->user_ns + out->system_ns;
    return 0;
}

int tt_getrusage_thread(tt_times *out) { return rusage_times(RUSAGE_THREAD, out); }

/* Per-thread state of the clockid-scaled split for the calling thread.
 * initial-exec: reachable from a signal handler (the event log's CPU
 * intervals) without __tls_get_addr, which may allocate. 16 bytes. */
static __thread tt__split self_split __attribute__((tls_model("initial-exec")));

int tt__self_split_clockid(tt_times *out)
{
    int64_t v[3];
    int rc = tt__read_three(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_VIRT),
                            TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_PROF),
                            TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_SCHED), v);
    if (rc == 0)
        tt__split_scale(&self_split, v[0], v[1], v[2], out);
    return rc;
}

int tt_self_times(tt_times *out)
{
    if (out == NULL)
        return -EFAULT;
    int forced = atomic_load_explicit(&g_forced, memory_order_relaxed);
    if (forced == TT_METHOD_CLOCKID)
        return tt__self_split_clockid(out);
    if (forced == TT_METHOD_PROCFS) {
        tt_procfs_stat st;
        int rc = tt_procfs_read(0, gettid(), &st);
        if (rc == 0)
            tt__times_from_procfs(&st, out);
        return rc;
    }
    /* getrusage(RUSAGE_THREAD): one syscall, already scaled and monotonic
     * by the kernel (it keeps the previous split per task). */
    return tt_getrusage_thread(out);
}

/* ---- another thread, by tid ---- */

static int64_t tid_clock(pid_t tid, unsigned which)
{
    if (tid == 0)
        return self_clock(which);
    if (tid < 0 || tid > TT__CPUCLOCK_PID_MAX)
        return -EINVAL;
    if (use_clockid()) {
        int64_t r = tt__read_clock(tt__cpu_clockid(tid, 1, which));
        if (r >= 0)
            return r;
        if (r == -EINVAL)
            return tt__classify_missing(tid);
        if (!fall_back(r))
            return r;
    }
    int64_t r = procfs_clock(0, tid, which);
    return r == -ESRCH ? tt__classify_missing(tid) : r;
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
    if (r >= 0)
        return r;
    if (r == -EINVAL && pid != 0)
        return tt__classify_missing(pid);
    if (!is_refusal(r))
        return r;
    return procfs_clock(pid, 0, which);
}

int64_t tt_process_total_ns(pid_t pid) { return process_clock(pid, TT__CPUCLOCK_SCHED); }
int64_t tt_process_user_raw_ns(pid_t pid) { return process_clock(pid, TT__CPUCLOCK_VIRT); }
int64_t tt_process_prof_raw_ns(pid_t pid) { return process_clock(pid, TT__CPUCLOCK_PROF); }

int tt_process_times(pid_t pid, tt_times *out)
{
    if (out == NULL)
        return -EFAULT;
    if (pid < 0)
        return -EINVAL;
    if (pid == 0 || pid == getpid())
        return rusage_times(RUSAGE_SELF, out);
    tt_procfs_stat st;
    int rc = tt_procfs_read(pid, 0, &st);
    if (rc == 0)
        tt__times_from_procfs(&st, out);
    return rc;
}
