/* threadtime-vthreads: accounts, their sequence count, and their recycling.
 * See account.h for who writes and who reads. */
#include "account.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* Accounts move between a carrier's spares and the shared pool this many at
 * a time, so the pool's lock is taken once per VT_BATCH virtual threads a
 * carrier starts or ends, never on a mount or unmount. */
#define VT_BATCH 256u
/* A carrier hands a batch back once it holds more spares than this: memory
 * stays bounded even when threads start on one carrier and end on another. */
#define VT_SPARES_MAX (4u * VT_BATCH)

/* ---- the sequence count: one writer, any number of readers ---- */

static void write_begin(vt_account *a)
{
    uint64_t s = __atomic_load_n(&a->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&a->seq, s + 1, __ATOMIC_RELAXED);
    /* The odd count is ordered before every field store that follows: a
     * reader that sees a new field value sees the count moved and retries. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(vt_account *a)
{
    uint64_t s = __atomic_load_n(&a->seq, __ATOMIC_RELAXED);
    /* Release: the fields are visible before the even count vouching for them. */
    __atomic_store_n(&a->seq, s + 1, __ATOMIC_RELEASE);
}

#define LOAD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define STORE(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

void vt_account_open(vt_account *a, int64_t now, pid_t tid)
{
    /* A segment still open here means its unmount was never seen; it was
     * measured on another carrier's clock, so it is dropped, not charged. */
    write_begin(a);
    STORE(a->mark, now);
    STORE(a->carrier, tid);
    write_end(a);
}

void vt_account_close(vt_account *a, int64_t now)
{
    if (LOAD(a->carrier) == 0)
        return;
    int64_t mark = LOAD(a->mark);
    write_begin(a);
    if (now > mark)
        STORE(a->total, LOAD(a->total) + (now - mark));
    STORE(a->carrier, 0);
    write_end(a);
}

int64_t vt_account_self(const vt_account *a, int64_t now)
{
    int64_t total = LOAD(a->total);
    if (LOAD(a->carrier) != 0 && now > LOAD(a->mark))
        total += now - LOAD(a->mark);
    return total;
}

int64_t vt_account_read(const vt_account *a, int64_t owner, int64_t (*carrier_now)(pid_t tid))
{
    for (;;) {
        uint64_t s = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE);
        if (s & 1) {
            /* The writer is inside its few stores; it may have been preempted there. */
            sched_yield();
            continue;
        }
        int64_t own = LOAD(a->owner), total = LOAD(a->total), mark = LOAD(a->mark);
        pid_t carrier = LOAD(a->carrier);
        int64_t now = carrier != 0 ? carrier_now(carrier) : 0;
        /* Acquire: the loads above happen before the count is checked again. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&a->seq, __ATOMIC_RELAXED) != s)
            continue;
        if (own != owner)
            return -1;
        if (carrier != 0 && now > mark)
            total += now - mark;
        return total;
    }
}

/* ---- recycling ---- */

/* A carrier's spare accounts, linked through `next`, and its share of the
 * count of accounts in use. */
typedef struct vt_spares {
    vt_account *head;
    uint32_t count;
    int registered; /* the exit hook below knows this thread */
    /* Accounts this thread took minus those it gave back (a thread often
     * starts on one carrier and ends on another, so one carrier's share can
     * be negative); written only by its thread, summed by vt_account_in_use. */
    int64_t taken;
    struct vt_spares *link; /* g_carriers list, under g_pool_lock */
} vt_spares;

/* initial-exec: a few bytes, reached with one %fs-relative load; small
 * enough for the static TLS surplus glibc keeps for libraries loaded with
 * dlopen, which is how the JVM loads agents. */
static __thread vt_spares t_spares __attribute__((tls_model("initial-exec")));

/* The shared pool: batches of spare accounts, each batch a list through
 * `next`; the head of a batch links to the next batch through its `mark`,
 * which means nothing while the account is free (a stale reader sees
 * owner 0 and discards what it read). */
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static vt_account *g_pool;
static uint64_t g_bytes;
/* Every live thread that has taken or given an account, and the shares of
 * those that have ended; both under g_pool_lock. */
static vt_spares *g_carriers;
static int64_t g_taken_by_ended;
static pthread_key_t g_exit_key;
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;

static vt_account *batch_next(const vt_account *head) { return (vt_account *)(uintptr_t)LOAD(head->mark); }

/* Puts one list of spares (at least one) into the pool. */
static void pool_put(vt_account *head)
{
    pthread_mutex_lock(&g_pool_lock);
    STORE(head->mark, (int64_t)(uintptr_t)g_pool);
    g_pool = head;
    pthread_mutex_unlock(&g_pool_lock);
}

/* A carrier that ends gives its spares to the pool and its share of the
 * in-use count to the ended threads' sum. */
static void on_thread_exit(void *spares)
{
    vt_spares *s = spares;
    if (s->head)
        pool_put(s->head);
    s->head = NULL;
    s->count = 0;
    pthread_mutex_lock(&g_pool_lock);
    g_taken_by_ended += LOAD(s->taken);
    for (vt_spares **p = &g_carriers; *p; p = &(*p)->link) {
        if (*p == s) {
            *p = s->link;
            break;
        }
    }
    pthread_mutex_unlock(&g_pool_lock);
}

static void make_exit_key(void) { pthread_key_create(&g_exit_key, on_thread_exit); }

static vt_spares *my_spares(void)
{
    vt_spares *s = &t_spares;
    if (!s->registered) {
        pthread_once(&g_exit_once, make_exit_key);
        pthread_setspecific(g_exit_key, s);
        s->registered = 1;
        pthread_mutex_lock(&g_pool_lock);
        s->link = g_carriers;
        g_carriers = s;
        pthread_mutex_unlock(&g_pool_lock);
    }
    return s;
}

/* Fills an empty spares list from the pool, else from new memory. */
static int refill(vt_spares *s)
{
    pthread_mutex_lock(&g_pool_lock);
    vt_account *head = g_pool;
    if (head)
        g_pool = batch_next(head);
    pthread_mutex_unlock(&g_pool_lock);
    if (!head) {
        vt_account *chunk = aligned_alloc(sizeof(vt_account), VT_BATCH * sizeof(vt_account));
        if (!chunk)
            return -1;
        for (uint32_t i = 0; i < VT_BATCH; i++) {
            chunk[i] = (vt_account){.next = i + 1 < VT_BATCH ? &chunk[i + 1] : NULL};
        }
        __atomic_fetch_add(&g_bytes, VT_BATCH * sizeof(vt_account), __ATOMIC_RELAXED);
        head = chunk;
    }
    uint32_t n = 0;
    for (vt_account *a = head; a; a = a->next)
        n++;
    s->head = head;
    s->count = n;
    return 0;
}

vt_account *vt_account_take(int64_t owner)
{
    vt_spares *s = my_spares();
    if (!s->head && refill(s) != 0)
        return NULL;
    vt_account *a = s->head;
    s->head = a->next;
    s->count--;
    STORE(s->taken, s->taken + 1);
    a->next = NULL;
    write_begin(a);
    STORE(a->total, 0);
    STORE(a->mark, 0);
    STORE(a->carrier, 0);
    STORE(a->owner, owner);
    write_end(a);
    return a;
}

void vt_account_give(vt_account *a)
{
    write_begin(a);
    STORE(a->owner, 0);
    STORE(a->carrier, 0);
    write_end(a);
    vt_spares *s = my_spares();
    STORE(s->taken, s->taken - 1);
    a->next = s->head;
    s->head = a;
    if (++s->count <= VT_SPARES_MAX)
        return;
    /* Keep VT_SPARES_MAX - VT_BATCH, hand the rest (one batch) back. */
    vt_account *last = s->head;
    for (uint32_t i = 1; i < VT_SPARES_MAX - VT_BATCH; i++)
        last = last->next;
    vt_account *batch = last->next;
    last->next = NULL;
    s->count = VT_SPARES_MAX - VT_BATCH;
    pool_put(batch);
}

uint64_t vt_account_bytes(void) { return __atomic_load_n(&g_bytes, __ATOMIC_RELAXED); }

int64_t vt_account_in_use(void)
{
    pthread_mutex_lock(&g_pool_lock);
    int64_t n = g_taken_by_ended;
    for (const vt_spares *s = g_carriers; s; s = s->link)
        n += LOAD(s->taken);
    pthread_mutex_unlock(&g_pool_lock);
    return n;
}
