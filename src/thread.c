/* Thread handles: a tid's clockids, the state of its consistent split, and,
 * for handles a thread opened on itself, a liveness mark that the thread's
 * exit clears so a reused tid is never read by mistake. */
#include "internal.h"
#include "linux/clockid.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
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
    pthread_mutex_t lock; /* guards prev: readers on any thread */
    tt__split prev;
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
    int self = tid == 0 || tid == gettid();
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
        tid = gettid();
        h->owner = pthread_self();
        /* Start the split from the kernel's own (the one /proc and getrusage
         * report): never below a figure read from them before the handle. */
        tt_times k;
        if (tt_getrusage_thread(&k) == 0)
            tt__split_merge(&h->prev, k.total_ns, k.system_ns, &k);
    }
    h->tid = tid;
    h->virt = tt__cpu_clockid(tid, 1, TT__CPUCLOCK_VIRT);
    h->prof = tt__cpu_clockid(tid, 1, TT__CPUCLOCK_PROF);
    h->sched = tt__cpu_clockid(tid, 1, TT__CPUCLOCK_SCHED);
    pthread_mutex_init(&h->lock, NULL);
    *out = h;
    return 0;
}

void tt_thread_close(tt_thread *h)
{
    if (h == NULL)
        return;
    if (h->life != NULL)
        life_put(h->life);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

pid_t tt_thread_tid(const tt_thread *h) { return h == NULL ? -EFAULT : h->tid; }

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

static int64_t handle_clock(tt_thread *h, clockid_t id, int64_t (*fallback)(pid_t))
{
    if (h == NULL)
        return -EFAULT;
    if (dead(h))
        return -ESRCH;
    if (tt_method_active() != TT_METHOD_CLOCKID)
        return checked(h, fallback(h->tid));
    return checked(h, tt__read_clock(id));
}

int64_t tt_thread_total_ns(tt_thread *h) { return handle_clock(h, h ? h->sched : 0, tt_tid_total_ns); }
int64_t tt_thread_user_raw_ns(tt_thread *h) { return handle_clock(h, h ? h->virt : 0, tt_tid_user_raw_ns); }

int tt_thread_times(tt_thread *h, tt_times *out)
{
    if (h == NULL || out == NULL)
        return -EFAULT;
    if (dead(h))
        return -ESRCH;
    if (tt_method_active() != TT_METHOD_CLOCKID) {
        /* /proc already holds the kernel's monotonic split. */
        tt_procfs_stat st;
        int rc = tt_procfs_read(0, h->tid, &st);
        if (rc == 0 && dead(h))
            rc = -ESRCH;
        if (rc != 0)
            return rc == -ESRCH ? tt__classify_missing(h->tid) : rc;
        tt__times_from_procfs(&st, out);
        return 0;
    }
    if (h->life != NULL && pthread_equal(h->owner, pthread_self())) {
        /* The owner reads itself: one getrusage() gives the kernel's split
         * (~350 ns against ~1 us for three clock reads), folded into the
         * same sequence other readers see, so nobody sees it go back. */
        tt_times k;
        int rc = tt_getrusage_thread(&k);
        if (rc != 0)
            return rc;
        pthread_mutex_lock(&h->lock);
        tt__split_merge(&h->prev, k.total_ns, k.system_ns, out);
        pthread_mutex_unlock(&h->lock);
        return 0;
    }
    int64_t v[3];
    int rc = tt__read_three(h->virt, h->prof, h->sched, v);
    int64_t r = checked(h, rc);
    if (r < 0)
        return (int)r;
    pthread_mutex_lock(&h->lock);
    tt__split_scale(&h->prev, v[0], v[1], v[2], out);
    pthread_mutex_unlock(&h->lock);
    return 0;
}
