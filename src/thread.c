/* Thread handles: a tid's clockids, the floors and consistent split that
 * keep its figures monotonic, and, for handles a thread opened on itself, a
 * liveness mark that the thread's exit clears so a reused tid is never read
 * by mistake. Reads take no lock (see tt__split_merge), so a signal
 * handler may read a handle whose read it interrupted. */
#include "internal.h"
#include "prim/clockid.h"
#include "prim/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* One per thread that opened a handle on itself; shared by those handles. */
typedef struct life {
    _Atomic int alive; /* 1 until the thread's exit, then 0 */
    _Atomic int refs;  /* handles + 1 for the thread itself while alive */
} life;

struct tt_thread {
    pid_t tid;
    clockid_t virt, prof, sched;
    life *life; /* NULL for a handle opened on another tid */
    pthread_t owner; /* the thread that opened it on itself (life != NULL) */
    unsigned fork_gen; /* tt__fork_gen when opened: another value = a fork child */
    tt__floor total, user_raw; /* last answers of the two clock reads */
    tt__split split;           /* last answer of tt_thread_times */
};

static pthread_key_t life_key;
static pthread_once_t life_once = PTHREAD_ONCE_INIT;
static int life_key_error;

static void life_put(life *l)
{
    /* acq_rel: the last owner must see every other owner's use before free. */
    if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1)
        free(l);
}

/* pthread key destructor: runs on the exiting thread before the kernel can
 * hand its tid to anybody else. */
static void life_end(void *p)
{
    life *l = p;
    /* release: a reader that sees 0 sees nothing of the dead thread after. */
    atomic_store_explicit(&l->alive, 0, memory_order_release);
    life_put(l);
}

static void life_key_init(void) { life_key_error = pthread_key_create(&life_key, life_end); }

static int life_self(life **out)
{
    pthread_once(&life_once, life_key_init);
    if (life_key_error != 0)
        return -life_key_error;
    life *l = pthread_getspecific(life_key);
    if (l == NULL) {
        l = malloc(sizeof *l);
        if (l == NULL)
            return -ENOMEM;
        atomic_init(&l->alive, 1);
        atomic_init(&l->refs, 1);
        int rc = pthread_setspecific(life_key, l);
        if (rc != 0) {
            free(l);
            return -rc;
        }
    }
    atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
    *out = l;
    return 0;
}

int tt_thread_open(pid_t tid, tt_thread **out)
{
    if (out == NULL)
        return -EFAULT;
    *out = NULL;
    if (tid < 0 || tid > TT__CPUCLOCK_PID_MAX)
        return -EINVAL;
    int self = tid == 0 || tid == tt__gettid();
    if (!self) {
        int64_t r = tt_tid_total_ns(tid); /* exists, and is ours? */
        if (r < 0)
            return (int)r;
    }
    tt_thread *h = calloc(1, sizeof *h);
    if (h == NULL)
        return -ENOMEM;
    if (self) {
        int rc = life_self(&h->life);
        if (rc != 0) {
            free(h);
            return rc;
        }
        tid = tt__gettid();
        h->owner = pthread_self();
        /* Start the split from the kernel's own (the one /proc and getrusage
         * report): never below a figure read from them before the handle. */
        tt_times k;
        if (tt_getrusage_thread(&k) == 0)
            tt__split_merge(&h->split, k.total_ns, k.system_ns, &k);
    }
    h->tid = tid;
    h->fork_gen = atomic_load_explicit(&tt__fork_gen, memory_order_relaxed);
    h->virt = tt__cpu_clockid(tid, 1, TT__CPUCLOCK_VIRT);
    h->prof = tt__cpu_clockid(tid, 1, TT__CPUCLOCK_PROF);
    h->sched = tt__cpu_clockid(tid, 1, TT__CPUCLOCK_SCHED);
    *out = h;
    return 0;
}

void tt_thread_close(tt_thread *h)
{
    if (h == NULL)
        return;
    if (h->life != NULL)
        life_put(h->life);
    free(h);
}

pid_t tt_thread_tid(const tt_thread *h) { return h == NULL ? -EFAULT : h->tid; }

/* A handle the parent opened names a thread of the parent: in a fork child
 * every read says so (-EINVAL), the clocks and the split alike, rather than
 * the split answering the parent's last figure. */
static int inherited(const tt_thread *h)
{
    return h->fork_gen != atomic_load_explicit(&tt__fork_gen, memory_order_relaxed);
}

static int dead(const tt_thread *h)
{
    /* acquire: pairs with the release in life_end(). */
    return h->life != NULL && !atomic_load_explicit(&h->life->alive, memory_order_acquire);
}

/* A read is trusted only if the thread was still alive after it: its exit
 * mark is set before its tid can be reused, so the clock read the right task. */
static int64_t checked(const tt_thread *h, int64_t r)
{
    if (dead(h))
        return -ESRCH;
    if (r == -EINVAL)
        return tt__classify_missing(h->tid);
    return r;
}

/* The owner reading the handle it opened on itself. */
static int owner_reads(const tt_thread *h)
{
    return h->life != NULL && pthread_equal(h->owner, pthread_self());
}

/* The kernel's split of the handle's thread: the caller's own as
 * tt_self_times reads it (the precise total in getrusage()'s proportion;
 * needs no /proc), another thread's from /proc. */
static int fallback_times(const tt_thread *h, tt_times *out)
{
    int rc;
    if (owner_reads(h) || h->tid == tt__gettid())
        rc = tt__self_kernel_times(out);
    else if ((rc = tt__procfs_times(0, h->tid, out)) == -ESRCH)
        rc = tt__procfs_missing(0, h->tid);
    return dead(h) ? -ESRCH : rc;
}

static int64_t handle_clock(tt_thread *h, unsigned which)
{
    if (h == NULL)
        return -EFAULT;
    if (inherited(h))
        return -EINVAL;
    if (dead(h))
        return -ESRCH;
    int64_t r = 0;
    if (tt__use_clockid())
        r = checked(h, tt__read_clock(which == TT__CPUCLOCK_VIRT ? h->virt : h->sched));
    if (r < 0 && !tt__fall_back(r))
        return r;
    if (!tt__use_clockid()) { /* a forced method, or clockids refused */
        tt_times t;
        int rc = fallback_times(h, &t);
        r = rc != 0 ? rc : which == TT__CPUCLOCK_VIRT ? t.user_ns : t.total_ns;
    }
    if (r < 0)
        return r;
    return tt__floor_raise(which == TT__CPUCLOCK_VIRT ? &h->user_raw : &h->total, r);
}

int64_t tt_thread_total_ns(tt_thread *h) { return handle_clock(h, TT__CPUCLOCK_SCHED); }
int64_t tt_thread_user_raw_ns(tt_thread *h) { return handle_clock(h, TT__CPUCLOCK_VIRT); }

int tt_thread_times(tt_thread *h, tt_times *out)
{
    if (h == NULL || out == NULL)
        return -EFAULT;
    if (inherited(h))
        return -EINVAL;
    if (dead(h))
        return -ESRCH;
    /* The owner reads itself as tt_self_times does (fallback_times): the
     * fast clock in getrusage()'s proportion (~55 ns while the anchor holds,
     * against ~1 us for three clock reads), merged into the sequence other
     * readers see. */
    if (tt__use_clockid() && !owner_reads(h)) {
        int64_t v[3];
        int64_t r = checked(h, tt__read_three(h->virt, h->prof, h->sched, v));
        if (r == 0) {
            tt__split_scale(&h->split, v[0], v[1], v[2], out);
            return 0;
        }
        if (!tt__fall_back(r))
            return (int)r;
    }
    /* The kernel's own split (getrusage or /proc; the former gives the
     * precise total its proportion), merged against the last answer: its
     * rounding differs from the clockid scaling's. */
    tt_times t;
    int rc = fallback_times(h, &t);
    if (rc == 0)
        tt__split_merge(&h->split, t.total_ns, t.system_ns, out);
    return rc;
}
