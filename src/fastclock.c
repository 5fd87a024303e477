/* The fast CPU clock: the calling thread's precise CPU time for
 * the cost of a cycle-counter read.
 *
 * A thread's CPU clock advances with wall time while the thread stays on
 * its CPU, and only then. The kernel tells user space when that stopped
 * being true: when it preempts a thread, delivers it a signal or migrates
 * it, and the thread's rseq area points at a critical-section descriptor
 * whose range does not hold the thread's instruction pointer, it sets that
 * pointer (rseq_cs) to NULL before the thread runs user code again
 * (include/uapi/linux/rseq.h). So:
 *   1. rseq_cs is pointed at our descriptor, whose range is empty: no code
 *      ever runs inside it, so the kernel always just clears the field.
 *   2. The counter is read, then the real clock (one system call): the
 *      anchor. Every answer from it also counts the part of that call
 *      before the kernel's sample, so it is never below the thread's true
 *      CPU time, and at most TT_FAST_EXCESS_NS above it.
 *   3. A later read takes the counter first, then checks the field: still
 *      ours means no switch happened between the anchor and that counter
 *      value, so the CPU time is the anchor plus the counter's advance.
 *   4. Cleared (or the anchor is older than TT_FAST_BOUND_NS of counter
 *      time): one real read, which re-arms.
 * Kernels differ on blocking (mainline's rseq rework leaves the field set
 * when a thread blocks in a system call), so the first use tests it and
 * falls back where blocking leaves the field set.
 *
 * Signals: a handler may read this clock in the middle of a read or of a
 * re-arm on its own thread. Each anchor carries a generation (odd while a
 * re-arm writes it); a read trusts the anchor only if the generation is
 * even and unchanged across its loads, and a handler that finds a re-arm
 * under way answers a real read without touching the anchor.
 */
#include "internal.h"
#include "arch.h"
#include "event_internal.h"
#include "prim/clockid.h"
#include "settings.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A test's hook at the points of the re-arm whose interleaving with the
 * kernel or a signal handler a test must force (tests/test_fastclock_run.c
 * builds this file with it defined, and switches the thread out or raises a
 * signal there): GEN_LOADED, just after slow_read has read the generation,
 * and RUN_CHECKED, just after it has decided whether the run of anchors
 * goes on. Empty in the library. */
#ifndef TT__FAST_TEST_HOOK
#define TT__FAST_TEST_HOOK(point) ((void)0)
#endif

#if defined(TT__RSEQ_SIG)
#define TT__FAST_POSSIBLE 1
#else
#define TT__FAST_POSSIBLE 0
#endif

/* The uapi layouts (include/uapi/linux/rseq.h), written out so the build
 * needs neither kernel nor glibc headers that know rseq. The area is
 * glibc's, per thread; only cpu_id and rseq_cs are read here. */
typedef struct tt__rseq_cs {
    uint32_t version;            /* 0 */
    uint32_t flags;              /* 0 */
    uint64_t start_ip;           /* range [start_ip, start_ip + post_commit_offset) */
    uint64_t post_commit_offset; /* 0 here: the range is empty */
    uint64_t abort_ip;           /* preceded by the registered signature */
} __attribute__((aligned(32))) tt__rseq_cs;

typedef struct tt__rseq_area {
    uint32_t cpu_id_start;
    uint32_t cpu_id; /* < 0 as int32: the area is not registered (glibc's -1, -2) */
    uint64_t rseq_cs;
} tt__rseq_area;

/* support_check's answer when it must be asked again later. */
static const char RETRY[] = "retry";

/* The process-wide decision. */
enum { DECIDE_NOT = 0, DECIDE_RUNNING = 1, DECIDE_DONE = 2 };
static _Atomic int g_decided;
/* 1 while tt_self_fast_ns() may answer from an anchor: supported here, and
 * not turned off. Relaxed: the anchors' own checks keep every answer right
 * whichever value a reader sees. */
static _Atomic int g_on;
/* Why it cannot work here (NULL: it can); set once by decide(). */
static const char *g_unsupported;
/* Why it is off although it could work (NULL: not off). */
static const char *_Atomic g_off;
/* The counter: ticks one anchor may serve, and ns = (ticks * g_mult) >> 32
 * for any count below g_span (the product stays below 2^63 by construction:
 * g_span ticks are 50 us, so the product is about 5e4 * 2^32; the tests'
 * longer span, 1 s, about 2^62). */
static uint64_t g_span, g_mult;
/* The longest anchoring system call accepted, in ticks (TT_FAST_EXCESS_NS):
 * an answer exceeds the thread's CPU time by at most the part of that call
 * before the kernel's sample. */
static uint64_t g_excess;
/* From glibc >= 2.35, found at load time (NULL/0 before). */
static ptrdiff_t g_rseq_offset;
static unsigned g_rseq_size;
static int g_have_rseq_symbols;
/* THREADTIME_RSEQ=register: where glibc registers no area (before 2.35, or
 * glibc.pthread.rseq=0), each thread that reads this clock registers one of
 * the library's own (t_own_rseq), unless the thread has a registration
 * already: the kernel refuses a second one, so none is ever replaced. The
 * risk, in the docs: a library that registers after us gets EBUSY. */
static int g_own_rseq;

#if TT__FAST_POSSIBLE
TT__RSEQ_ABORT_LABEL(tt__fast_abort);
extern const char tt__fast_abort[];
/* Our descriptor: an empty range, so the kernel finds no thread inside it
 * and clears rseq_cs on every preemption, signal and migration. */
static const tt__rseq_cs g_desc = {
    .version = 0,
    .flags = 0,
    .start_ip = (uint64_t)(uintptr_t)tt__fast_abort,
    .post_commit_offset = 0,
    .abort_ip = (uint64_t)(uintptr_t)tt__fast_abort,
};
#define OURS ((uint64_t)(uintptr_t)&g_desc)
#endif

/* Per thread. initial-exec: reachable from a signal handler without
 * __tls_get_addr, which may allocate. 64 bytes of static TLS.
 *
 * A task other than the one that armed it can find this state: a vfork
 * child or a clone(CLONE_VM) child shares the parent's memory and TLS; an
 * _Fork or raw clone child copies them without running the atfork handlers.
 * None of them is registered for the area's clearing the way the parent
 * was, or its clock continues the parent's. So the state names its task
 * (tid), and every real read of the slow path goes through that task's own
 * clockid: the kernel refuses it (EINVAL) in any other process, which finds
 * such a child at the first slow path for ~15 ns (the pid lookup) instead of
 * a gettid() per anchor. */
enum { THREAD_UNCHECKED = 0, THREAD_OK = 1, THREAD_NO = -1 };
typedef struct fast_state {
    uint64_t gen;        /* even: the anchor below is whole; odd: a re-arm is writing it */
    uint64_t c0;         /* the counter just before the anchor's real read */
    int64_t t0;          /* the anchor's real read */
    uint64_t last;       /* the largest answer given: the monotonic floor */
    uint64_t run;        /* the generation of the first anchor of an unbroken run (tt__fast_ns_run); 0: none */
    tt__rseq_area *area; /* this thread's rseq area, once checked usable */
    int status;          /* THREAD_* */
    pid_t tid;           /* the task this state belongs to (0: not yet known) */
    pid_t pid;           /* and its process */
} fast_state;
static __thread fast_state t_fast __attribute__((tls_model("initial-exec")));

static inline uint64_t load_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void store_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
/* Orders this thread's accesses against a signal handler on the same
 * thread and against the kernel's write on the way back to user space
 * (the kernel writes from the same thread, so program order suffices). */
static inline void compiler_fence(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

/* Raises the thread's floor to v and returns max(v, floor), also never
 * below the tt_self_total_ns() floor. One unlocked compare-and-swap: only
 * this thread and its handlers write it. */
static inline int64_t answer(fast_state *s, int64_t v)
{
    int64_t total_floor = tt__self_total_floor();
    if (v < total_floor)
        v = total_floor;
    uint64_t cur = load_u64(&s->last);
    while (cur < (uint64_t)v) {
        if (tt__cas_local(&s->last, cur, (uint64_t)v))
            return v;
        cur = load_u64(&s->last);
    }
    return (int64_t)cur;
}

/* ---- the process-wide decision ---- */

#if TT__FAST_POSSIBLE
/* The original 32-byte rseq ABI (registered with that length, it needs no
 * more alignment on any kernel). cpu_id -1 until the kernel fills it in. */
typedef struct own_rseq {
    tt__rseq_area a;
    uint32_t flags, pad[3];
} __attribute__((aligned(32))) own_rseq;
static __thread own_rseq t_own_rseq __attribute__((tls_model("initial-exec"))) = {.a = {.cpu_id = UINT32_MAX}};

/* 1 when glibc registered an area for every thread. */
static int glibc_registers(void)
{
    return g_have_rseq_symbols && g_rseq_size >= offsetof(tt__rseq_area, rseq_cs) + sizeof(uint64_t);
}

static tt__rseq_area *thread_area(void)
{
    if (!glibc_registers())
        return &t_own_rseq.a;
    return (tt__rseq_area *)(void *)(tt__thread_pointer() + g_rseq_offset);
}

/* THREADTIME_RSEQ=register: registers the thread's own area, or finds it
 * registered already (EBUSY: same area, length and signature, e.g. in a
 * fork child). Any other registration makes the kernel refuse (EINVAL),
 * and it stays as it is. */
static const char *own_check(fast_state *s)
{
    int saved = errno;
    long rc = syscall(TT__NR_RSEQ, &t_own_rseq, (unsigned)sizeof t_own_rseq, 0, TT__RSEQ_SIG);
    int e = errno;
    errno = saved;
    if (rc != 0 && e != EBUSY)
        return e == ENOSYS ? "syscall: no rseq in this kernel"
                           : "syscall: this thread's rseq is another library's (THREADTIME_RSEQ=register replaces none)";
    s->area = &t_own_rseq.a;
    return NULL;
}

/* Whether the calling thread's rseq area is registered with the signature
 * our descriptor carries. A descriptor whose signature differs would get
 * the thread killed, so this is asked of the kernel itself: registering the
 * area already registered returns EBUSY when the signature matches, EPERM
 * when it does not, EINVAL when the address or length differ. glibc
 * registers max(__rseq_size, 32) bytes (32 before 2.40). */
static const char *thread_check(fast_state *s)
{
    if (!glibc_registers())
        return own_check(s);
    tt__rseq_area *a = thread_area();
    if ((int32_t)__atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED) < 0)
        return "syscall: this thread has no rseq area";
    unsigned len = g_rseq_size > 32 ? g_rseq_size : 32;
    int saved = errno;
    long rc = syscall(TT__NR_RSEQ, a, len, 0, TT__RSEQ_SIG);
    int e = errno;
    errno = saved;
    if (rc == 0) {
        /* Registered it just now: it was not registered after all. Give
         * it back at once (same area, same signature). */
        syscall(TT__NR_RSEQ, a, len, 1 /* RSEQ_FLAG_UNREGISTER */, TT__RSEQ_SIG);
        errno = saved;
        return "syscall: this thread has no rseq area";
    }
    if (e == EPERM)
        return "syscall: rseq registered with another signature";
    if (e != EBUSY)
        return "syscall: rseq registration unconfirmed";
    s->area = a;
    return NULL;
}

/* Voluntary context switches of the calling thread so far (-1: unknown). */
static long voluntary_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : -1;
}

/* What this kernel does with our field when the thread blocks: arm it,
 * sleep, look. A kernel that clears it on every switch clears it here;
 * mainline's rework leaves it set. A sleep counts only if the thread really
 * left its CPU (its voluntary switches went up): under load the timer can
 * expire before the thread gets to sleep, and then nothing switched. And
 * only if it woke on the CPU it slept on (the area's cpu_id, which the
 * kernel rewrites before the thread runs again): a kernel that clears the
 * field only on migration would otherwise pass on wake-ups elsewhere, and
 * then count preemption on one CPU. Three such blocks must all clear it;
 * one that keeps it decides. */
static const char *kernel_check(tt__rseq_area *a)
{
    int blocks = 0;
    int saved = errno;
    const char *why = "syscall: could not test this kernel (no sleep blocked and woke on its CPU)";
    for (int i = 0; i < 16 && blocks < 3; i++) {
        /* Another library's pointer, left after its section, is never
         * overwritten: it serves as the probe itself (the kernel clears
         * any pointer the same way). */
        uint64_t probe = __atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED);
        if (probe == 0)
            probe = OURS;
        long before = voluntary_switches();
        uint32_t cpu_before = __atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED);
        if (probe == OURS)
            __atomic_store_n(&a->rseq_cs, OURS, __ATOMIC_RELAXED);
        compiler_fence();
        /* 20 us, then longer: a timer that expires before the thread
         * sleeps is no block. */
        struct timespec ts = {0, (long)(20 * 1000) << (i / 4)};
        nanosleep(&ts, NULL);
        compiler_fence();
        int kept = __atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED) == probe;
        uint32_t cpu_after = __atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED);
        long after = voluntary_switches();
        if (kept && probe == OURS)
            __atomic_store_n(&a->rseq_cs, 0, __ATOMIC_RELAXED);
        if (before < 0 || after <= before || cpu_after != cpu_before)
            continue;
        if (kept) {
            why = "syscall: this kernel keeps rseq_cs set across a blocking call (Linux 6.19+)";
            break;
        }
        if (++blocks == 3)
            why = NULL;
    }
    errno = saved;
    return why;
}

static const char *support_check(fast_state *s)
{
    if (!g_have_rseq_symbols && !g_own_rseq)
        return "syscall: no rseq area (glibc < 2.35; THREADTIME_RSEQ=register registers one)";
    if (!glibc_registers() && !g_own_rseq)
        return "syscall: no rseq area (glibc < 2.35 or glibc.pthread.rseq=0)";
    double hz = 0;
    int trusted = tt__counter_calibrated_nowait(&hz);
    if (trusted == -EAGAIN)
        return RETRY;
    if (!trusted)
        return "syscall: the cycle counter is not trusted here";
    /* TT_FAST_BOUND_NS of ticks, and 2^32 ns per tick scaled (1 MHz .. 20 GHz). */
    g_span = (uint64_t)(hz / 1e9 * (double)TT_FAST_BOUND_NS);
    g_excess = (uint64_t)(hz / 1e9 * (double)TT_FAST_EXCESS_NS);
    g_mult = (uint64_t)(1e9 / hz * 4294967296.0);
    if (g_span == 0)
        return "syscall: the cycle counter is too slow";
    const char *why = thread_check(s);
    if (why != NULL)
        return why;
    s->status = THREAD_OK;
    return kernel_check(s->area);
}
#endif

int tt__fast_decide_claim(void)
{
    int expect = DECIDE_NOT;
    return atomic_compare_exchange_strong(&g_decided, &expect, DECIDE_RUNNING);
}

void tt__fast_decide_claimed(void)
{
#if TT__FAST_POSSIBLE
    const char *why = support_check(&t_fast);
    if (why == RETRY) {
        /* Another caller is calibrating the counter: decide later. */
        atomic_store_explicit(&g_decided, DECIDE_NOT, memory_order_release);
        return;
    }
    g_unsupported = why;
#else
    g_unsupported = "syscall: no fast clock for this architecture";
#endif
    atomic_store(&g_on, g_unsupported == NULL && atomic_load(&g_off) == NULL);
    /* A tt_fast_clock_set(0) that ran meanwhile wins. */
    if (atomic_load(&g_off) != NULL)
        atomic_store(&g_on, 0);
    /* Release: g_unsupported and the counter's scale before DONE. */
    atomic_store_explicit(&g_decided, DECIDE_DONE, memory_order_release);
}

/* Decides once per process. A caller that finds the decision under way
 * (another thread, or the very call a signal handler interrupted) does not
 * wait: it answers with a real read this time. */
static void decide(void)
{
    if (tt__fast_decide_claim())
        tt__fast_decide_claimed();
}

static int decided(void)
{
    if (atomic_load_explicit(&g_decided, memory_order_acquire) != DECIDE_DONE)
        decide();
    return atomic_load_explicit(&g_decided, memory_order_acquire) == DECIDE_DONE;
}

/* Reads the environment (tt__env: nothing under setuid, setgid or file
 * capabilities) and glibc's rseq symbols at load time: both may take locks
 * a signal handler must not wait for. dlsym, not a link-time
 * reference: __rseq_offset and __rseq_size are GLIBC_2.35 symbols, and the
 * library must load on older glibc. */
__attribute__((constructor)) static void fast_load(void)
{
    unsigned on, own;
    if (tt__setting_enum(TT__SET_FAST_CLOCK, &on) < 0) /* read as 0 */
        atomic_store(&g_off, "syscall: off (THREADTIME_FAST_CLOCK is not 0 or 1)");
    else if (!on)
        atomic_store(&g_off, "syscall: off (THREADTIME_FAST_CLOCK=0)");
    tt__setting_enum(TT__SET_RSEQ, &own); /* off|register; another value reads as off */
    g_own_rseq = own == 1;
    const ptrdiff_t *off = dlsym(RTLD_DEFAULT, "__rseq_offset");
    const unsigned *size = dlsym(RTLD_DEFAULT, "__rseq_size");
    if (off != NULL && size != NULL) {
        g_rseq_offset = *off;
        g_rseq_size = *size;
        g_have_rseq_symbols = 1;
    }
}

/* ---- reading ---- */

/* 1 if the calling task has an rseq area registered (any area), 0 if not,
 * found without changing anything: the kernel first compares an address
 * with the one registered (EINVAL when they differ), and only for a task
 * with none goes on to check that the address is in user space (EFAULT).
 * The address asked about is 32-aligned and in the kernel's half. */
static int task_has_rseq(void)
{
#if TT__FAST_POSSIBLE
    int saved = errno;
    long rc = syscall(TT__NR_RSEQ, (void *)(uintptr_t)-64, 32, 0, TT__RSEQ_SIG);
    int e = errno;
    errno = saved;
    return rc != 0 && e == EINVAL;
#else
    return 0;
#endif
}

/* The state was written by another task (see fast_state). If that task
 * was our parent, we are its child:
 *   - with memory of our own (_Fork, a raw fork-like clone), we inherited
 *     its registration of this very area with glibc's signature: our state
 *     is reset as fork()'s atfork handler would have done (every
 *     per-thread figure of the core), and we own it;
 *   - on its memory (vfork, clone(CLONE_VM)), the kernel dropped the
 *     registration: we must not write its state at all, and read our own
 *     clock bare. So do we wherever there is no rseq to tell the two apart.
 * If not, a child of ours that ran on our memory (a vfork child that read
 * the clock, which POSIX does not allow it) wrote its name here: the state
 * is ours again, the fast clock's part of it reset. Returns 1 when the
 * caller now owns the state, else 0 with the bare read in *bare. Rare:
 * once per such child. */
__attribute__((noinline, cold)) static int adopt(fast_state *s, pid_t me, int64_t *bare)
{
    if (s->pid != getppid()) {
        tt__fast_fork_child();
        s->tid = me;
        s->pid = getpid();
        return 1;
    }
#if TT__FAST_POSSIBLE
    fast_state probe = {0};
    if (task_has_rseq() && thread_check(&probe) == NULL) {
        tt__fork_child_reset(); /* calls tt__fast_fork_child: s is cleared */
        s->tid = me;
        s->pid = getpid();
        return 1;
    }
#endif
    *bare = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    return 0;
}

/* One real read for the state's owner. *own gets 0 when the caller is not
 * the owner and may not write the state (the answer is then its own bare
 * clock). The first read on a thread learns its tid (one gettid()). */
static int64_t owner_read(fast_state *s, int *own)
{
    *own = 1;
    if (s->tid == 0) {
        s->tid = (pid_t)syscall(SYS_gettid);
        s->pid = getpid();
    }
    int saved = errno;
    int64_t r = tt__read_clock(tt__cpu_clockid(s->tid, 1, TT__CPUCLOCK_SCHED));
    errno = saved;
    if (r == -EINVAL) {
        pid_t me = (pid_t)syscall(SYS_gettid);
        if (me != s->tid) {
            int64_t bare = 0;
            if (!adopt(s, me, &bare)) {
                *own = 0;
                return bare;
            }
        }
    }
    /* Refused clockids (a seccomp filter) and the like: the core's own
     * read with its fallbacks. */
    return r < 0 ? tt_self_total_ns() : r;
}

/* A real read, answered through the floor (the owner's). */
static int64_t real_answer(fast_state *s)
{
    int own;
    int64_t r = owner_read(s, &own);
    return r < 0 || !own ? r : answer(s, r);
}

/* The slow path: decide if needed, then a real read that re-arms. *anchor
 * gets the anchor's generation when the answer comes from an armed anchor,
 * UINT64_MAX when it does not. Out of line: inlined, its registers made
 * every fast read save and restore five callee-saved registers (the JAR's
 * natives, clang -O3: a 6-push prologue around a 10 ns read). */
__attribute__((noinline, cold)) static int64_t slow_read(fast_state *s, uint64_t *anchor, uint64_t *run)
{
    *anchor = UINT64_MAX;
    if (run != NULL)
        *run = UINT64_MAX;
    /* Off or unsupported: every read is a real one, still through the
     * owner's clockid, so a child that skipped the atfork handlers gets
     * its own figures here too (glibc < 2.35 hosts fall back this way). */
    if (!decided() || !atomic_load_explicit(&g_on, memory_order_relaxed))
        return real_answer(s);
#if TT__FAST_POSSIBLE
    if (s->status == THREAD_UNCHECKED)
        s->status = thread_check(s) == NULL ? THREAD_OK : THREAD_NO;
    if (s->status != THREAD_OK)
        return real_answer(s);
    tt__rseq_area *a = s->area;
    /* Still registered? Another library that takes the registration over
     * unregisters this area first, and the kernel then sets its cpu_id to
     * -1 and stops clearing its rseq_cs: from then on the field proves
     * nothing, for good on this thread. Checked here, not on the fast
     * path (whose cost stays one counter read): a takeover while an anchor
     * is armed can count at most the rest of that anchor's span. */
    if ((int32_t)__atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED) < 0) {
        s->status = THREAD_NO;
        return real_answer(s);
    }
    uint64_t g = load_u64(&s->gen);
    if (g & 1)
        return real_answer(s); /* we interrupted this thread's own re-arm */
    TT__FAST_TEST_HOOK(GEN_LOADED);
    uint64_t cs = __atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED);
    if (cs != 0 && cs != OURS) {
        /* Another library's descriptor (tcmalloc-style per-CPU code): never
         * overwrite it; the kernel clears it at this thread's next switch. */
        return real_answer(s);
    }
    /* Odd from here on: a handler leaves the anchor alone. One instruction
     * (tt__cas_local), so a handler that re-armed between the load above
     * and here is seen: it moved the generation on, and its anchor, armed
     * after the signal cleared the field, is newer than anything this call
     * could arm. A plain store would take the generation back and give two
     * anchors one number (the split's per-anchor cache in cpu.c would then
     * serve one anchor's figures for the other). */
    if (!tt__cas_local(&s->gen, g, g + 1))
        return real_answer(s);
    compiler_fence();
    /* Still ours, read with the generation odd: the last anchor was kept,
     * and nothing switched the thread out since it was armed, so this one
     * continues its run. The field is then left as it is, not stored again:
     * a switch after this load clears it, the clear stays, and the checks
     * below see it (the anchor is not used and the next read starts a new
     * run). Storing it unconditionally would hide such a switch, and the
     * run, with the run-queue wait kept for it (tt__run_wait_at), would go
     * on across it. */
    uint64_t seen = __atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED);
    int unbroken = seen == OURS && s->run != 0;
    TT__FAST_TEST_HOOK(RUN_CHECKED);
    /* Cleared (or never armed): arm it. A switch between the load and this
     * store is hidden, but the run was ending anyway, and the anchor covers
     * only what comes after: armed before the real read, a switch at any
     * point after this store clears it. The anchor's counter value is read
     * before the real read too: every answer from this anchor, r + (now -
     * c0), then also counts the part of the system call before the
     * kernel's sample (~100-300 ns), so it is never below the thread's
     * true CPU time at that counter value, and so never below any real
     * read taken before it. Taking c0 after the read instead leaves out the
     * part after the sample, and a real read of another caller just before
     * could then come out above the answer (Python measured 63,250 of
     * 200,000 reads below an earlier time.thread_time_ns(), by up to
     * 2.5 us). */
    if (seen != OURS)
        __atomic_store_n(&a->rseq_cs, OURS, __ATOMIC_RELAXED);
    compiler_fence();
    uint64_t c0 = tt__counter_read();
    compiler_fence();
    int own;
    int64_t r = owner_read(s, &own);
    compiler_fence();
    if (!own) {
        /* A child sharing the owner's memory: it takes back its own store,
         * if it made one, so the field is as it found it (the owner's,
         * cleared or armed for the owner's anchor), and puts the generation
         * forward to even with the owner's anchor unchanged. A child that
         * runs beside its parent on the same TLS (clone(CLONE_VM) without
         * CLONE_SETTLS) races the parent here as it does on glibc's own
         * TLS; a vfork child's parent is stopped. */
        if (seen != OURS)
            __atomic_compare_exchange_n(&a->rseq_cs, &(uint64_t){OURS}, seen, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
        store_u64(&s->gen, g + 2);
        return r;
    }
    /* This read's own answer comes from the anchor as later ones will (so
     * the next fast answer continues it without a jump). Unless the thread
     * was switched out during the call (the field is clear: the real read
     * stands, the next read re-arms), or the call took longer than
     * TT_FAST_EXCESS_NS (an interrupt or the hypervisor inside it): then
     * the part before the sample, which every answer of this anchor would
     * carry, could be that long, so the anchor is dropped. */
    uint64_t c1 = tt__counter_read();
    compiler_fence();
    int keep = r >= 0 && c1 - c0 < g_excess && s->status == THREAD_OK;
    if (!keep)
        __atomic_compare_exchange_n(&a->rseq_cs, &(uint64_t){OURS}, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    g = load_u64(&s->gen) | 1; /* adopt() may have reset the state */
    s->c0 = c0;
    s->t0 = r;
    s->run = unbroken && keep ? s->run : g + 1;
    compiler_fence();
    store_u64(&s->gen, g + 1);
    if (r < 0)
        return r;
    if (!keep || __atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED) != OURS)
        return answer(s, r);
    *anchor = g + 1;
    if (run != NULL)
        *run = s->run;
    return answer(s, r + (int64_t)(((c1 - c0) * g_mult) >> 32));
#else
    return real_answer(s);
#endif
}

/* The fast path, inline in both readers: a leaf up to the tail call into
 * slow_read. given: a counter value the caller read just before (the event
 * log's record time), NULL to read one here. A given value may predate a
 * re-arm by a signal handler; it then lies before the new anchor's c0, and
 * the unsigned span check sends the read to the slow path. */
__attribute__((always_inline)) static inline int64_t fast_read(const uint64_t *given, uint64_t *anchor,
                                                               uint64_t *run)
{
    fast_state *s = &t_fast;
#if TT__FAST_POSSIBLE
    if (__builtin_expect(atomic_load_explicit(&g_on, memory_order_relaxed), 1)) {
        uint64_t g = load_u64(&s->gen);
        compiler_fence();
        tt__rseq_area *a = s->area;
        uint64_t c0 = s->c0;
        int64_t t0 = s->t0;
        uint64_t r = run != NULL ? s->run : 0;
        /* The counter first, then the field: if the field still holds our
         * descriptor, nothing switched this thread out between the anchor
         * and this counter value. */
        uint64_t c = given != NULL ? *given : tt__counter_read();
        compiler_fence();
        if (a != NULL && __atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED) == OURS && c - c0 < g_span) {
            compiler_fence();
            /* Unchanged and even: no handler re-armed between our loads. */
            if (load_u64(&s->gen) == g && !(g & 1)) {
                *anchor = g;
                if (run != NULL)
                    *run = r;
                return answer(s, t0 + (int64_t)(((c - c0) * g_mult) >> 32));
            }
        }
    }
#endif
    return slow_read(s, anchor, run);
}

int64_t tt_self_fast_ns(void)
{
    uint64_t anchor;
    return fast_read(NULL, &anchor, NULL);
}

int64_t tt__fast_ns(uint64_t *anchor) { return fast_read(NULL, anchor, NULL); }

int64_t tt__fast_ns_at(uint64_t counter, uint64_t *anchor) { return fast_read(&counter, anchor, NULL); }

int tt__fast_known_off(void)
{
    return atomic_load_explicit(&g_decided, memory_order_acquire) == DECIDE_DONE
           && !atomic_load_explicit(&g_on, memory_order_relaxed);
}

int64_t tt__fast_ns_run(uint64_t *run)
{
    uint64_t anchor;
    return fast_read(NULL, &anchor, run);
}

/* ---- control ---- */

int tt_fast_clock(void)
{
    decided();
    return atomic_load_explicit(&g_on, memory_order_relaxed) ? TT_FAST_RSEQ : TT_FAST_SYSCALL;
}

const char *tt_fast_clock_name(void)
{
    if (!decided())
        return "syscall: deciding (another thread is testing this kernel)";
    const char *off = atomic_load(&g_off);
    if (g_unsupported != NULL)
        return g_unsupported;
    if (off != NULL)
        return off;
#if TT__FAST_POSSIBLE
    if (!glibc_registers())
        return "rseq+" TT__ARCH_COUNTER_NAME " (own rseq areas: THREADTIME_RSEQ=register)";
#endif
    return "rseq+" TT__ARCH_COUNTER_NAME;
}

int tt_fast_clock_set(int on)
{
    if (on != 0 && on != 1)
        return -EINVAL;
    if (on == 0) {
        atomic_store(&g_off, "syscall: off (tt_fast_clock_set(0))");
        atomic_store(&g_on, 0);
        return 0;
    }
    if (!decided())
        return -EAGAIN;
    if (g_unsupported != NULL)
        return -ENOTSUP;
    atomic_store(&g_off, NULL);
    atomic_store(&g_on, 1);
    return 0;
}

int64_t tt__fast_span_set(int64_t ns)
{
    if (!decided() || g_unsupported != NULL || ns <= 0)
        return -EINVAL;
    double ticks_per_ns = 4294967296.0 / (double)g_mult; /* the rate, not g_span's: it may be set already */
    int64_t old = (int64_t)((double)g_span / ticks_per_ns + 0.5);
    g_span = (uint64_t)((double)ns * ticks_per_ns);
    return old;
}

/* ---- fork ---- */

void tt__fast_fork_child(void)
{
    fast_state *s = &t_fast;
    /* The child's clock restarts near 0: nothing of the parent's anchor or
     * floor may answer for it. Our field may survive the fork (the kernel
     * copies the registration and the memory); clear it so the next read
     * re-arms. The generation moves on: a read this interrupted (fork from
     * a signal handler) distrusts what it loaded. */
#if TT__FAST_POSSIBLE
    if (s->area != NULL && __atomic_load_n(&s->area->rseq_cs, __ATOMIC_RELAXED) == OURS)
        __atomic_store_n(&s->area->rseq_cs, 0, __ATOMIC_RELAXED);
#endif
    store_u64(&s->gen, (load_u64(&s->gen) | 1) + 1);
    s->c0 = 0;
    s->t0 = 0;
    s->run = 0;
    s->tid = 0; /* the child's own: learnt at its first slow path */
    s->pid = 0;
    store_u64(&s->last, 0);
}
