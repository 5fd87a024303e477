/* Probes: begin/end records plus per-thread accumulators that count every
 * call, however far the rings wrap; and the virtual-thread markers.
 *
 * Each OS thread that ends a probe owns one accumulator block: an
 * open-addressing table of TT__ACC_SLOTS entries holding at most
 * TT_PROBE_IDS_PER_THREAD ids (calls of further ids are counted as overflow),
 * plus a small stack of open _cpu begins. Only the owner writes its block,
 * with single-instruction adds (tt__add, tt__cas_local): no lock, no atomic
 * shared with another thread, and a signal handler that probes in the middle
 * of an update cannot undo it. The one write of many words, the clearing at
 * a thread's first probe of a run, holds the thread's signals. A dump reads the blocks while they move; a
 * call still being added may be missing from it, never torn into two.
 *
 * Blocks are mmap'd (async-signal-safe, unlike malloc) at a thread's first
 * probe and never unmapped; they form a push-only list. When a thread exits,
 * its sums are folded into one process-wide table and its block is free for
 * the next thread, so memory is bounded by the number of threads that probe
 * at once. Sums belong to a run: a block tagged with an older run's key is
 * cleared by its owner before it adds anything. */
#include "internal.h"
#include "util.h"
#include "arch.h"
#include "event_internal.h"
#include "event_log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Slots per thread table: a power of two, a quarter left empty so that a
 * lookup of an absent id stops after a few probes. */
#define TT__ACC_SLOTS 512u
_Static_assert(TT_PROBE_IDS_PER_THREAD <= TT__ACC_SLOTS * 3 / 4, "table load factor");
/* Nested open _cpu probes a thread tracks; deeper ones count as apart. */
#define TT__ACC_OPEN 32u
/* The table exited threads' sums are folded into. */
#define TT__RETIRED_SLOTS 8192u
#define TT__RETIRED_IDS 6144u

typedef struct acc_entry {
    uint64_t key; /* id + 1; 0 marks an empty slot */
    tt__probe_sums s;
} acc_entry;

typedef struct acc_open {
    uint64_t t0;
    uint64_t user, system;
} acc_open;

enum { ACC_FREE = 0, ACC_OWNED = 1 };

typedef struct acc_block {
    struct acc_block *next; /* every block ever made; push-only */
    uint64_t state;         /* ACC_FREE or ACC_OWNED, changed with CAS */
    uint64_t gen;           /* key of the run these sums belong to */
    uint64_t ids;           /* slots claimed */
    uint64_t overflow;      /* calls whose id found no room */
    uint64_t depth;         /* open _cpu begins on the stack below */
    acc_open open[TT__ACC_OPEN];
    acc_entry e[TT__ACC_SLOTS];
} acc_block;

/* The calling thread's block; initial-exec, 16 bytes (see event.h). */
typedef struct acc_self {
    acc_block *block;
    int exited; /* past the exit destructor: no new block */
} acc_self;
static __thread acc_self t_acc __attribute__((tls_model("initial-exec")));

static acc_block *_Atomic g_blocks;
/* Guards the retired table and a block's passage back to FREE; taken by
 * thread exit and the dump, never on the recording path. */
static pthread_mutex_t g_acc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t g_acc_exit;
static struct {
    uint64_t gen, overflow;
    size_t ids;
    acc_entry *e; /* TT__RETIRED_SLOTS, calloc'd at first use */
} g_retired;

static size_t slot_of(uint32_t id, size_t mask)
{
    return (size_t)(((uint64_t)id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

/* The entry of id in a thread table, claiming a slot on first sight; NULL
 * if the table holds its most ids already. */
static acc_entry *entry_of(acc_block *b, uint32_t id)
{
    uint64_t key = (uint64_t)id + 1;
    for (size_t i = slot_of(id, TT__ACC_SLOTS - 1);; i = (i + 1) & (TT__ACC_SLOTS - 1)) {
        acc_entry *e = &b->e[i];
        uint64_t k = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
        if (k == key)
            return e;
        if (k)
            continue;
        if (__atomic_load_n(&b->ids, __ATOMIC_RELAXED) >= TT_PROBE_IDS_PER_THREAD)
            return NULL;
        /* A handler on this thread may take the same slot between our load
         * and this CAS: then look again at what it stored. */
        if (tt__cas_local(&e->key, 0, key)) {
            tt__add(&b->ids, 1);
            return e;
        }
        if (__atomic_load_n(&e->key, __ATOMIC_RELAXED) == key)
            return e;
    }
}

/* Clears a block for run gen; the owner does it before publishing gen
 * (release), so a dump that reads gen with acquire sees the zeros. */
static void block_reset(acc_block *b, uint64_t gen)
{
    memset(b->e, 0, sizeof b->e);
    b->ids = b->overflow = b->depth = 0;
    __atomic_store_n(&b->gen, gen, __ATOMIC_RELEASE);
}

/* A test's hook at the one point of a table's reset whose interleaving with
 * a signal handler a test must force: the owner has found its table tagged
 * with an older run and is about to clear it (tests/test_probe_reset.c
 * builds this file with it defined, and raises a signal there). Empty in
 * the library. */
#ifndef TT__PROBE_TEST_HOOK
#define TT__PROBE_TEST_HOOK() ((void)0)
#endif

/* own_block's slow part, with signals held. */
static acc_block *own_block_held(uint64_t gen)
{
    acc_block *b = t_acc.block;
    /* A handler that ran before the signals were held may have done it. */
    if (b && __atomic_load_n(&b->gen, __ATOMIC_RELAXED) == gen)
        return b;
    if (!b) {
        for (b = atomic_load_explicit(&g_blocks, memory_order_acquire); b; b = b->next) {
            uint64_t st = ACC_FREE;
            if (__atomic_load_n(&b->state, __ATOMIC_RELAXED) == ACC_FREE &&
                __atomic_compare_exchange_n(&b->state, &st, ACC_OWNED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                break;
        }
        if (!b) {
            void *m = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                return NULL;
            b = m;
            b->state = ACC_OWNED;
            acc_block *head = atomic_load_explicit(&g_blocks, memory_order_relaxed);
            do
                b->next = head;
            while (!atomic_compare_exchange_weak_explicit(&g_blocks, &head, b, memory_order_release,
                                                          memory_order_relaxed));
        }
        t_acc.block = b;
        /* Any non-NULL value makes the exit destructor run. */
        pthread_setspecific(g_acc_exit, b);
    }
    TT__PROBE_TEST_HOOK();
    block_reset(b, gen);
    return b;
}

/* The calling thread's block for run gen, claiming one at its first probe
 * (CAS and mmap only: async-signal-safe). NULL if none can be had. The
 * first probe of a run on a thread clears the block, ~50 KB, with the
 * thread's signals held (two system calls, once per thread and run): a
 * handler that probed in the middle of the clearing would find the block
 * still tagged with the old run, clear it itself and count its call, and
 * the rest of the interrupted clearing would then wipe what it counted
 * (test_probe under qemu-user lost 44,949 of 2,942,240 handler calls of
 * one id so, qemu delivering signals between the clearing's stores). Held,
 * the handler runs after the reset and finds the block ready. Only a fault
 * signal is not held; a fault cannot come from the clearing itself. */
static acc_block *own_block(uint64_t gen)
{
    acc_block *b = t_acc.block;
    if (__builtin_expect(b && __atomic_load_n(&b->gen, __ATOMIC_RELAXED) == gen, 1))
        return b;
    /* Past the exit destructor (a later destructor that probes): no block
     * will be had, so no signals held for it on every probe. */
    if (!b && t_acc.exited)
        return NULL;
    sigset_t old;
    int held = tt__signals_hold(&old);
    b = own_block_held(gen);
    tt__signals_release(&old, held);
    return b;
}

/* Adds one call's wall time (now - t0) and exit to the calling thread's
 * sums of id; returns them for the caller to add its CPU and then the call
 * itself, or NULL when the call cannot be counted (no block, or counted as
 * overflow). */
static tt__probe_sums *account_call(uint64_t gen, uint32_t id, uint64_t t0, uint64_t now, int thrown)
{
    acc_block *b = own_block(gen);
    if (!b)
        return NULL;
    acc_entry *e = entry_of(b, id);
    if (!e) {
        tt__add(&b->overflow, 1);
        return NULL;
    }
    /* A time from an earlier run's clock, or a counter that stepped back
     * across CPUs, counts as 0 rather than as ~2^64. */
    uint64_t d = (int64_t)(now - t0) > 0 ? now - t0 : 0;
    tt__probe_sums *s = &e->s;
    tt__add(&s->total, d);
    uint64_t m;
    while (d > (m = __atomic_load_n(&s->max, __ATOMIC_RELAXED)) && !tt__cas_local(&s->max, m, d))
        ;
    if (thrown)
        tt__add(&s->thrown, 1);
    return s;
}

/* Adds one call to the calling thread's sums of id. cpu: the call's user
 * and system CPU (NULL: not a _cpu probe); cpu_known: whether it is the
 * call's own. */
static void accumulate(uint64_t gen, uint32_t id, uint64_t t0, uint64_t now, int thrown, const uint64_t *cpu,
                       int cpu_known)
{
    tt__probe_sums *s = account_call(gen, id, t0, now, thrown);
    if (!s)
        return;
    if (cpu && cpu_known) {
        tt__add(&s->cpu_user_ns, cpu[0]);
        tt__add(&s->cpu_system_ns, cpu[1]);
        tt__add(&s->cpu_calls, 1);
    } else if (cpu) {
        tt__add(&s->cpu_apart, 1);
    }
    tt__add(&s->calls, 1);
}

/* ---- the calls ---- */

/* The thread's CPU split at counter value now (the fast clock's check
 * after the caller's counter read), or 0 if unreadable (then *t holds -1s). */
static int read_cpu(uint64_t now, tt_times *t)
{
    *t = (tt_times){-1, -1, -1};
    return tt__self_split_at(now, t) == 0 && t->user_ns >= 0 && t->system_ns >= 0;
}

/* Records a probe's begin or end and returns its time word. cpu: NULL, or
 * a _cpu record, whose payload is the thread's CPU split (*cpu; *ok
 * whether it was read) with p1 OR'd into the system word. One counter read
 * serves as the record's time and the fast clock's: a second one was a
 * quarter of a _cpu call (2 x ~10 ns of ~55 ns, threadtime bench
 * probe_cpu). It is taken after the claim, so that the ring's times stay in
 * slot order; the CPU read then sits between claim and commit, where a
 * signal handler's own records already may. */
static inline __attribute__((always_inline)) uint64_t probe_record(uint64_t w1, uint64_t p0, uint64_t p1,
                                                                   uint64_t *gen, tt_times *cpu, int *ok)
{
    if (__builtin_expect(tt__tls.key == __atomic_load_n(&tt__fast_key, __ATOMIC_RELAXED), 1)) {
        uint64_t index, *rec = tt__claim_slot(tt__tls.ring, &index);
        uint64_t now = tt__counter_read();
        __atomic_store_n(&rec[0], now, __ATOMIC_RELAXED);
        if (cpu) {
            *ok = read_cpu(now, cpu);
            p0 = *ok ? (uint64_t)cpu->user_ns : UINT64_MAX;
            p1 |= *ok ? (uint64_t)cpu->system_ns : 0;
        }
        tt__commit(rec, index, w1, p0, p1, 2);
        *gen = tt__tls.key;
        return now ? now : 1;
    }
    if (cpu) {
        *ok = read_cpu(tt__counter_read(), cpu);
        p0 = *ok ? (uint64_t)cpu->user_ns : UINT64_MAX;
        p1 |= *ok ? (uint64_t)cpu->system_ns : 0;
    }
    return tt__record_slow(w1, p0, p1, gen);
}

void tt__record_cpu(uint64_t w1)
{
    uint64_t gen;
    tt_times t;
    int ok;
    (void)probe_record(w1, 0, 0, &gen, &t, &ok);
}

uint64_t tt_probe_begin(uint32_t id)
{
    uint64_t gen;
    return probe_record(TT__W1(TT__KIND_BEGIN, id), 0, 0, &gen, NULL, NULL);
}

void tt_probe_end(uint32_t id, uint64_t t0, int thrown)
{
    if (!t0)
        return;
    uint64_t gen, now = probe_record(TT__W1(thrown ? TT__KIND_END_THROWN : TT__KIND_END, id), 0, 0, &gen, NULL, NULL);
    if (now)
        accumulate(gen, id, t0, now, thrown, NULL, 0);
}

uint64_t tt_probe_begin_cpu(uint32_t id)
{
    if (!tt__log_recording())
        return 0;
    tt_times t;
    int ok;
    uint64_t gen;
    uint64_t t0 = probe_record(TT__W1(TT__KIND_BEGIN_CPU, id), 0, 0, &gen, &t, &ok);
    acc_block *b = t0 && ok ? own_block(gen) : NULL;
    if (b) {
        /* Claimed with one instruction: a handler's begin takes the next
         * slot, and its end pops back to ours. */
        uint64_t k = __atomic_load_n(&b->depth, __ATOMIC_RELAXED);
        if (k < TT__ACC_OPEN) {
            tt__add(&b->depth, 1);
            b->open[k] = (acc_open){t0, (uint64_t)t.user_ns, (uint64_t)t.system_ns};
        }
    }
    return t0;
}

void tt_probe_end_cpu(uint32_t id, uint64_t t0, int thrown)
{
    if (!t0 || !tt__log_recording())
        return;
    tt_times t;
    int ok;
    uint64_t gen;
    uint64_t now = probe_record(TT__W1(TT__KIND_END_CPU, id), 0, thrown ? TT__END_CPU_THROWN : 0, &gen, &t, &ok);
    if (!now)
        return;
    /* The begin is ours only if it is on this thread's stack: a mount or
     * unmount empties the stack, and another carrier's begin was never on
     * it. Entries above it were left by calls that never ended here. */
    acc_block *b = own_block(gen);
    uint64_t cpu[2] = {0, 0};
    int known = 0;
    if (b) {
        uint64_t k = __atomic_load_n(&b->depth, __ATOMIC_RELAXED);
        while (k > 0 && b->open[k - 1].t0 != t0)
            k--;
        if (k > 0 && ok) {
            acc_open *o = &b->open[k - 1];
            known = (uint64_t)t.user_ns >= o->user && (uint64_t)t.system_ns >= o->system;
            cpu[0] = (uint64_t)t.user_ns - o->user;
            cpu[1] = (uint64_t)t.system_ns - o->system;
            __atomic_store_n(&b->depth, k - 1, __ATOMIC_RELAXED);
        }
    }
    accumulate(gen, id, t0, now, thrown, cpu, known);
}

void tt_probe_end_measured(uint32_t id, uint64_t t0, int64_t ns, tt_probe_measure measure, int thrown)
{
    if (!t0)
        return;
    int known = ns >= 0 && (measure == TT_PROBE_MEASURE_CPU || measure == TT_PROBE_MEASURE_MOUNTED);
    unsigned kind = known && measure == TT_PROBE_MEASURE_MOUNTED ? TT__KIND_END_MOUNTED : TT__KIND_END_CPU_TOTAL;
    uint64_t gen, now = probe_record(TT__W1(kind, id), known ? (uint64_t)ns : UINT64_MAX,
                                     thrown ? TT__END_CPU_THROWN : 0, &gen, NULL, NULL);
    if (!now)
        return;
    /* No stack of open begins to match: the figure is the caller's own
     * account, whichever OS threads ran the call. */
    tt__probe_sums *s = account_call(gen, id, t0, now, thrown);
    if (!s)
        return;
    if (!known) {
        tt__add(&s->cpu_apart, 1);
    } else if (kind == TT__KIND_END_MOUNTED) {
        tt__add(&s->mounted_ns, (uint64_t)ns);
        tt__add(&s->mounted_calls, 1);
    } else {
        tt__add(&s->cpu_total_ns, (uint64_t)ns);
        tt__add(&s->cpu_total_calls, 1);
    }
    tt__add(&s->calls, 1);
}

static void marker(unsigned kind, uint64_t vthread_id)
{
    uint64_t gen;
    if (!probe_record(TT__W1(kind, 0), vthread_id, 0, &gen, NULL, NULL))
        return;
    /* Open _cpu begins now span another thread's run: none is attributable. */
    acc_block *b = t_acc.block;
    if (b && __atomic_load_n(&b->depth, __ATOMIC_RELAXED))
        __atomic_store_n(&b->depth, 0, __ATOMIC_RELAXED);
}

void tt_event_mount(uint64_t vthread_id) { marker(TT__KIND_MOUNT, vthread_id); }
void tt_event_unmount(uint64_t vthread_id) { marker(TT__KIND_UNMOUNT, vthread_id); }

/* ---- thread exit, fork, the dump's merge ---- */

/* Reads a live entry word by word (its owner may be adding to it). */
static tt__summary_entry entry_load(const acc_entry *e)
{
    tt__summary_entry c = {.id = (uint32_t)(__atomic_load_n(&e->key, __ATOMIC_RELAXED) - 1)};
    const uint64_t *src = (const uint64_t *)&e->s;
    uint64_t *dst = (uint64_t *)&c.sums;
    for (size_t i = 0; i < sizeof c.sums / sizeof *dst; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    return c;
}

/* Folds a block into the retired table; under g_acc_lock. */
static void retire_block(acc_block *b, uint64_t gen)
{
    if (g_retired.gen != gen) {
        if (g_retired.e)
            memset(g_retired.e, 0, TT__RETIRED_SLOTS * sizeof *g_retired.e);
        g_retired.gen = gen;
        g_retired.overflow = 0;
        g_retired.ids = 0;
    }
    if (!g_retired.e && !(g_retired.e = calloc(TT__RETIRED_SLOTS, sizeof *g_retired.e))) {
        /* Out of memory at thread exit: what this thread added is lost, and
         * said so as overflow. */
        for (size_t i = 0; i < TT__ACC_SLOTS; i++)
            g_retired.overflow += b->e[i].s.calls;
        return;
    }
    g_retired.overflow += b->overflow;
    for (size_t i = 0; i < TT__ACC_SLOTS; i++) {
        const acc_entry *src = &b->e[i];
        if (!src->key)
            continue;
        uint32_t id = (uint32_t)(src->key - 1);
        size_t j = slot_of(id, TT__RETIRED_SLOTS - 1);
        while (g_retired.e[j].key && g_retired.e[j].key != src->key)
            j = (j + 1) & (TT__RETIRED_SLOTS - 1);
        if (!g_retired.e[j].key) {
            if (g_retired.ids >= TT__RETIRED_IDS) {
                g_retired.overflow += src->s.calls;
                continue;
            }
            g_retired.e[j].key = src->key;
            g_retired.ids++;
        }
        tt__sums_merge(&g_retired.e[j].s, &src->s);
    }
}

/* Thread exit: the sums go to the retired table and the block is free. */
static void on_thread_exit(void *arg)
{
    acc_block *b = arg;
    t_acc.exited = 1;
    t_acc.block = NULL;
    uint64_t gen = tt__log_key();
    pthread_mutex_lock(&g_acc_lock);
    if (gen && b->gen == gen)
        retire_block(b, gen);
    memset(b->e, 0, sizeof b->e);
    b->ids = b->overflow = b->depth = b->gen = 0;
    /* Release: the next owner, which claims with acquire, sees the zeros. */
    __atomic_store_n(&b->state, ACC_FREE, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_acc_lock);
}

void tt__acc_process_init(void) { pthread_key_create(&g_acc_exit, on_thread_exit); }

/* The child has one thread: every other block belonged to a thread that
 * does not exist here. */
void tt__acc_fork_child(void)
{
    pthread_mutex_init(&g_acc_lock, NULL);
    for (acc_block *b = atomic_load_explicit(&g_blocks, memory_order_relaxed); b; b = b->next) {
        if (b == t_acc.block)
            continue;
        b->gen = 0;
        b->state = ACC_FREE;
    }
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const tt__summary_entry *)a)->id, y = ((const tt__summary_entry *)b)->id;
    return x < y ? -1 : x > y;
}

/* A growing array of summary entries. */
typedef struct entries {
    tt__summary_entry *e;
    size_t n, cap;
    int err;
} entries;

static void entries_add(entries *v, tt__summary_entry c)
{
    if (v->err || !c.sums.calls)
        return;
    tt__summary_entry *bigger = tt__grow(v->e, &v->cap, v->n + 1, sizeof *bigger, 256);
    if (!bigger) {
        v->err = -ENOMEM;
        return;
    }
    v->e = bigger;
    v->e[v->n++] = c;
}

int tt__acc_summary(uint64_t key, tt__summary_entry **out, uint32_t *count, uint64_t *overflow_calls)
{
    *out = NULL;
    *count = 0;
    *overflow_calls = 0;
    entries v = {0};
    uint64_t overflow = 0;
    pthread_mutex_lock(&g_acc_lock);
    if (g_retired.gen == key) {
        overflow += g_retired.overflow;
        for (size_t i = 0; g_retired.e && i < TT__RETIRED_SLOTS; i++)
            if (g_retired.e[i].key)
                entries_add(&v, (tt__summary_entry){.id = (uint32_t)(g_retired.e[i].key - 1), .sums = g_retired.e[i].s});
    }
    for (acc_block *b = atomic_load_explicit(&g_blocks, memory_order_acquire); b; b = b->next) {
        /* Acquire: pairs with the owner's release of gen after clearing. */
        if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) != ACC_OWNED ||
            __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != key)
            continue;
        overflow += __atomic_load_n(&b->overflow, __ATOMIC_RELAXED);
        for (size_t i = 0; i < TT__ACC_SLOTS; i++)
            if (__atomic_load_n(&b->e[i].key, __ATOMIC_RELAXED))
                entries_add(&v, entry_load(&b->e[i]));
    }
    pthread_mutex_unlock(&g_acc_lock);
    if (v.err) {
        free(v.e);
        return v.err;
    }
    /* One entry per id: sort, then fold equal ids. */
    if (v.n)
        qsort(v.e, v.n, sizeof *v.e, by_id);
    size_t m = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (m && v.e[m - 1].id == v.e[i].id)
            tt__sums_merge(&v.e[m - 1].sums, &v.e[i].sums);
        else
            v.e[m++] = v.e[i];
    }
    if (!m) {
        free(v.e);
        v.e = NULL;
    }
    *out = v.e;
    *count = (uint32_t)m;
    *overflow_calls = overflow;
    return 0;
}
