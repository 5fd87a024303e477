/* The event log: runs, the ring table, thread registration, fork and exit.
 *
 * A run (one tt_log_start) owns one table: a trace-file header followed by
 * max_threads rings, in anonymous memory or, in crash-safe mode, in a
 * MAP_SHARED file that is a readable trace at every instant. A thread takes a
 * ring at its first event with a compare-and-swap on the ring's state word:
 * no lock anywhere a signal handler can reach. Writing the trace file lives
 * in event_dump.c, which sees the recorder only through event_log.h.
 */
#include "internal.h"
#include "arch.h"
#include "event_internal.h"
#include "event_log.h"
#include "settings.h"
#include "prim/thread.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- what the inline path reads (exported, see event.h) ---- */

__thread tt__tls_state tt__tls __attribute__((tls_model("initial-exec")));
uint64_t tt__fast_key = UINT64_MAX;
int tt__cpu_intervals;
/* Non-zero while CPU bounds also record the run-queue wait. */
static int g_cpu_wait;

/* This thread's registration state, for the out-of-line path only. Also
 * initial-exec (16 bytes) for the reason given in event.h. */
typedef struct tt__self {
    int busy;            /* inside ring registration (a nested handler must not also register) */
    int exited;          /* the thread-exit destructor has run */
    uint64_t denied_key; /* run for which no ring was left */
} tt__self;
static __thread tt__self t_self __attribute__((tls_model("initial-exec")));

/* The state of one run of the event log. */
typedef struct tt__run {
    uint64_t key;           /* odd; what tt__tls.key holds for this run's rings */
    _Atomic int recording;  /* cleared by tt_log_stop */
    tt_log_options opts;    /* resolved; paths point at crash_path, exit_path */
    char *crash_path;       /* NULL: rings in anonymous memory */
    char *exit_path;
    int fd;                 /* the crash-safe file, or -1 */
    unsigned char *table;   /* trace header, then max_threads rings */
    tt__trace_header *hdr;  /* == table */
    size_t table_bytes, ring_bytes;
    uint32_t ring_records, max_threads;
    unsigned source;        /* TT__TRACE_SOURCE_* */
    double hz;              /* 0 for MONOTONIC_RAW */
    uint64_t order;         /* atomic counter: claim and exit sequence */
    tt__name_area names[2]; /* crash-safe runs: the file's name areas (TT__NAME_TABLE_*) */
    int for_child;          /* started by fork_child, not by tt_log_start */
    uint32_t fork_files_given; /* children granted a crash file; under g_ctl */
    struct tt__run *retired_next; /* list of retired runs, kept (see run_retire) */
} tt__run;

/* The current run. Acquire on load, release on store: a thread that sees a
 * run pointer also sees the table and options written before publishing. */
static _Atomic(tt__run *) g_run;
/* Serializes start, stop, dump and fork; never taken on the recording path. */
static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_next_key = 1; /* run keys are odd; under g_ctl */
static tt__run *g_retired;      /* runs replaced by a restart; under g_ctl */
static tt__log_writer g_exit_writer; /* writes exit_dump_path; under g_ctl */
/* tt_event_literal copies instead (crash-safe runs). */
static _Atomic int g_literal_copies;

static pthread_key_t g_exit_key;
static pthread_once_t g_process_once = PTHREAD_ONCE_INIT;

static tt__run *run_current(void) { return atomic_load_explicit(&g_run, memory_order_acquire); }

static tt__ring *run_ring(const tt__run *run, uint32_t i)
{
    return tt__ring_at(run->table, run->ring_bytes, i);
}

/* ---- ring registration (async-signal-safe: syscalls and CAS only) ---- */

static tt__ring *claim_free(tt__run *run)
{
    for (uint32_t i = 0; i < run->max_threads; i++) {
        tt__ring *r = run_ring(run, i);
        uint32_t st = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
        if (TT__RING_STATE(st) == TT__RING_FREE &&
            __atomic_compare_exchange_n(&r->state, &st, TT__RING_WITH_STATE(st, TT__RING_CLAIMED), 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return r;
    }
    return NULL;
}

/* Takes the ring of the thread that exited first. Acquire on success: the
 * old owner's last head (stored before its release of EXITED) is needed. */
static tt__ring *claim_exited(tt__run *run)
{
    for (uint32_t attempt = 0; attempt < run->max_threads; attempt++) {
        tt__ring *best = NULL;
        uint32_t best_st = 0;
        uint64_t best_order = UINT64_MAX;
        for (uint32_t i = 0; i < run->max_threads; i++) {
            tt__ring *r = run_ring(run, i);
            uint32_t st = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
            uint64_t order = __atomic_load_n(&r->order, __ATOMIC_RELAXED);
            if (TT__RING_STATE(st) == TT__RING_EXITED && order < best_order) {
                best = r;
                best_st = st;
                best_order = order;
            }
        }
        if (!best)
            return NULL;
        if (__atomic_compare_exchange_n(&best->state, &best_st,
                                        TT__RING_WITH_STATE(best_st, TT__RING_CLAIMED), 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            __atomic_fetch_add(&run->hdr->rings_recycled, 1, __ATOMIC_RELAXED);
            return best;
        }
    }
    return NULL;
}

static void set_name(tt__ring *r, const char *name)
{
    uint64_t w[2] = {0, 0};
    memcpy(w, name, strnlen(name, sizeof w - 1)); /* 15 bytes and a NUL, as the kernel keeps */
    __atomic_store_n(&r->name[0], w[0], __ATOMIC_RELAXED);
    __atomic_store_n(&r->name[1], w[1], __ATOMIC_RELAXED);
}

static tt__ring *claim_ring(tt__run *run)
{
    tt__ring *r = claim_free(run);
    if (!r)
        r = claim_exited(run);
    if (!r) {
        __atomic_fetch_add(&run->hdr->threads_dropped, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    /* Indexes continue from the previous owner's head, so a record it left
     * in a slot can never carry an index tag the new owner will use. */
    __atomic_store_n(&r->base, __atomic_load_n(&r->head, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&r->order, __atomic_fetch_add(&run->order, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&r->tid, (uint32_t)tt__gettid(), __ATOMIC_RELAXED);
    char comm[TT_EVENT_TEXT_MAX + 1] = {0};
    if (prctl(PR_GET_NAME, comm) != 0)
        comm[0] = 0;
    set_name(r, comm);
    uint32_t st = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
    /* Release: a dump that sees LIVE sees this owner's base, tid and name;
     * the generation changes, so a dump that started earlier drops it. */
    __atomic_store_n(&r->state, TT__RING_NEXT_GEN(st, TT__RING_LIVE), __ATOMIC_RELEASE);
    return r;
}

/* The signals a registration holds back: all but those a fault raises, which
 * cannot wait (held, the kernel would kill the process instead of running
 * the program's handler). Made at each hold (no system call), so it holds
 * from a process's first instruction: the run preload holds signals in
 * processes that never start a log. */
int tt__signals_hold(sigset_t *old)
{
    sigset_t held;
    sigfillset(&held);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&held, faults[i]);
    return pthread_sigmask(SIG_BLOCK, &held, old) == 0;
}

void tt__signals_release(const sigset_t *old, int held)
{
    if (held)
        pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int ring_usable(const tt__run *run) { return tt__tls.key == run->key && tt__tls.ring; }

/* Takes a ring for the calling thread; NULL if none is left. busy keeps a
 * handler that interrupts this (a fault's: the others are held) from taking
 * a second one. */
static tt__ring *register_ring(tt__run *run)
{
    t_self.busy = 1;
    /* Signal fences: a handler on this thread sees busy set before we start
     * and the ring stored before the key that makes it usable. */
    atomic_signal_fence(memory_order_seq_cst);
    tt__ring *r = claim_ring(run);
    if (r) {
        tt__tls.ring = (uint64_t *)r;
        atomic_signal_fence(memory_order_seq_cst);
        tt__tls.key = run->key;
        /* Any non-NULL value makes the exit destructor run. */
        pthread_setspecific(g_exit_key, r);
    } else {
        t_self.denied_key = run->key;
    }
    atomic_signal_fence(memory_order_seq_cst);
    t_self.busy = 0;
    return r;
}

/* The calling thread's ring in run, taking one if needed; NULL if none.
 * Asynchronous signals are held while the ring is taken: a handler that
 * records then runs once the ring is usable, and records into it. Without
 * that, a handler landing inside the registration (at its prctl's return,
 * say) lost its event. */
static tt__ring *own_ring(tt__run *run)
{
    if (ring_usable(run))
        return (tt__ring *)tt__tls.ring;
    if (t_self.exited || t_self.busy || t_self.denied_key == run->key)
        return NULL;
    sigset_t old;
    int held = tt__signals_hold(&old);
    tt__ring *r = NULL;
    /* A handler that ran before the mask took hold may have registered, or
     * been denied a ring. */
    if (ring_usable(run))
        r = (tt__ring *)tt__tls.ring;
    else if (t_self.denied_key != run->key)
        r = register_ring(run);
    tt__signals_release(&old, held);
    return r;
}

static int recording(const tt__run *run)
{
    return run && atomic_load_explicit(&run->recording, memory_order_relaxed);
}

uint64_t tt__record_slow(uint64_t w1, uint64_t p0, uint64_t p1, uint64_t *run_key)
{
    tt__run *run = run_current();
    if (!recording(run))
        return 0;
    *run_key = run->key;
    tt__ring *r = own_ring(run);
    uint64_t index, *rec = r ? tt__claim_slot((uint64_t *)r, &index) : NULL;
    uint64_t now = run->source == TT__TRACE_SOURCE_MONOTONIC_RAW ? (uint64_t)tt__read_clock(CLOCK_MONOTONIC_RAW)
                                                                  : tt__counter_read();
    if (rec) {
        __atomic_store_n(&rec[0], now, __ATOMIC_RELAXED);
        tt__commit(rec, index, w1, p0, p1, 2);
    }
    return now ? now : 1;
}

void tt__event_slow(uint64_t w1, uint64_t p0, uint64_t p1)
{
    uint64_t key;
    (void)tt__record_slow(w1, p0, p1, &key);
}

uint64_t tt__log_key(void)
{
    tt__run *run = run_current();
    return run ? run->key : 0;
}

int tt__log_recording(void) { return recording(run_current()); }

/* Thread exit: the ring stays for the next dump, marked with its exit order
 * so that recycling takes the oldest first. */
static void on_thread_exit(void *arg)
{
    (void)arg;
    tt__run *run = run_current();
    t_self.exited = 1;
    if (run && tt__tls.key == run->key && tt__tls.ring) {
        tt__ring *r = (tt__ring *)tt__tls.ring;
        __atomic_store_n(&r->order, __atomic_fetch_add(&run->order, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        uint32_t st = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
        /* Release: whoever sees EXITED (a dump, a recycler) sees our last head. */
        __atomic_store_n(&r->state, TT__RING_WITH_STATE(st, TT__RING_EXITED), __ATOMIC_RELEASE);
    }
    tt__tls.key = 0;
    tt__tls.ring = NULL;
}

/* ---- options ---- */

/* Why the last start refused a value (tt_log_error). Only static texts:
 * a caller on another thread may still hold the pointer when a later start
 * replaces it. */
static _Atomic(const char *) g_error = "";

static const char k_size[] = "tt_log_options.size: set it to sizeof(tt_log_options)";
static const char k_path[] = "THREADTIME_FILE (crash_file) and THREADTIME_DUMP_AT_EXIT (exit_dump_path): "
                             "a path, not empty";
static const char k_target[] = "THREADTIME_FILE (crash_file): a new or regular file, or your own symlink "
                               "(or the directory owner's) to one; a directory, device, FIFO or socket is "
                               "never replaced, and another user's symlink never followed";

/* Records detail for tt_log_error and returns rc. */
static int explain(int rc, const char *detail)
{
    atomic_store_explicit(&g_error, detail, memory_order_relaxed);
    return rc;
}

static int refuse(const char *detail) { return explain(-EINVAL, detail); }

const char *tt_log_error(void) { return atomic_load_explicit(&g_error, memory_order_relaxed); }

/* Variable id into *field, where the field was left 0; a refused value
 * refuses the start with the row's text. */
static int from_env(tt__setting_id id, uint32_t *field)
{
    uint64_t v;
    if (tt__setting_uint(id, &v) < 0)
        return refuse(tt__settings[id].text);
    *field = (uint32_t)v; /* every row read here has a max <= UINT32_MAX */
    return 0;
}

static int resolve_options(const tt_log_options *opts, tt_log_options *o)
{
    memset(o, 0, sizeof *o);
    atomic_store_explicit(&g_error, "", memory_order_relaxed);
    if (opts) {
        if (opts->size < sizeof(size_t))
            return refuse(k_size);
        memcpy(o, opts, opts->size < sizeof *o ? opts->size : sizeof *o);
    }
    if (o->ring_records > TT_LOG_RING_MAX)
        return refuse(tt__settings[TT__SET_RING].text);
    if (o->max_threads > TT_LOG_THREADS_MAX)
        return refuse(tt__settings[TT__SET_THREADS].text);
    if ((unsigned)o->clock > TT_LOG_CLOCK_MONOTONIC)
        return refuse(tt__settings[TT__SET_CLOCK].text);
    if (o->file_mode && tt__file_mode_check(o->file_mode))
        return refuse(tt__settings[TT__SET_FILE_MODE].text);
    if ((o->crash_file && !*o->crash_file) || (o->exit_dump_path && !*o->exit_dump_path))
        return refuse(k_path);
    int rc = 0;
    if (!o->ring_records)
        rc = from_env(TT__SET_RING, &o->ring_records);
    if (!rc && !o->max_threads)
        rc = from_env(TT__SET_THREADS, &o->max_threads);
    if (!rc && !o->file_mode)
        rc = from_env(TT__SET_FILE_MODE, &o->file_mode);
    if (!rc && !o->fork_files)
        rc = from_env(TT__SET_FORK_FILES, &o->fork_files);
    unsigned pick;
    if (!rc && !o->cpu_on_intervals) {
        if (tt__setting_enum(TT__SET_CPU, &pick) < 0)
            rc = refuse(tt__settings[TT__SET_CPU].text);
        else
            o->cpu_on_intervals = (int)pick;
    }
    if (!rc && !o->wait_on_cpu_intervals) {
        if (tt__setting_enum(TT__SET_CPU_WAIT, &pick) < 0)
            rc = refuse(tt__settings[TT__SET_CPU_WAIT].text);
        else
            o->wait_on_cpu_intervals = (int)pick;
    }
    if (!rc && o->clock == TT_LOG_CLOCK_AUTO) {
        if (tt__setting_enum(TT__SET_CLOCK, &pick) < 0)
            rc = refuse(tt__settings[TT__SET_CLOCK].text);
        else
            o->clock = (tt_log_clock)pick; /* the values are in the enum's order (settings.c) */
    }
    if (rc)
        return rc;
    if (!o->crash_file)
        o->crash_file = tt__setting_path(TT__SET_FILE);
    if (!o->exit_dump_path)
        o->exit_dump_path = tt__setting_path(TT__SET_DUMP_AT_EXIT);
    if (!o->ring_records)
        o->ring_records = TT_LOG_RING_DEFAULT;
    uint32_t r = TT_LOG_RING_MIN;
    while (r < o->ring_records)
        r <<= 1;
    o->ring_records = r;
    if (!o->max_threads)
        o->max_threads = TT_LOG_THREADS_DEFAULT;
    if (!o->file_mode)
        o->file_mode = 0600;
    return 0;
}

/* ---- runs ---- */

static char *path_copy(const char *path, int add_pid)
{
    if (!path)
        return NULL;
    size_t n = strlen(path) + 24;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, add_pid ? "%s.%d" : "%s", path, (int)getpid());
    return p;
}

static void run_release(tt__run *run);

/* Builds a run from resolved options (not yet published). Returns 0 or
 * -errno with nothing left behind. */
static int run_create(const tt_log_options *o, int for_child, tt__run **out)
{
    double hz = 0;
    int trusted = tt__counter_calibrated(&hz);
    unsigned source = TT__TRACE_SOURCE_MONOTONIC_RAW;
    if (o->clock == TT_LOG_CLOCK_COUNTER || (o->clock == TT_LOG_CLOCK_AUTO && trusted)) {
        if (hz <= 0)
            return -ENOTSUP;
        source = tt__counter_source();
    }
    tt__run *run = calloc(1, sizeof *run);
    if (!run)
        return -ENOMEM;
    int rc = -ENOMEM;
    char *tmp = NULL; /* the crash file's name until it is complete */
    run->crash_path = path_copy(o->crash_file, for_child);
    run->exit_path = path_copy(o->exit_dump_path, for_child);
    if ((o->crash_file && !run->crash_path) || (o->exit_dump_path && !run->exit_path))
        goto fail;
    run->opts = *o;
    run->opts.crash_file = run->crash_path;
    run->opts.exit_dump_path = run->exit_path;
    run->fd = -1;
    run->ring_records = o->ring_records;
    run->max_threads = o->max_threads;
    run->ring_bytes = TT__TRACE_SECTION_SIZE + (size_t)o->ring_records * TT__TRACE_RECORD_SIZE;
    run->table_bytes = TT__TRACE_HEADER_SIZE + (size_t)o->max_threads * run->ring_bytes;
    if (run->crash_path)
        run->table_bytes += 2 * (size_t)TT__NAME_AREA_SIZE; /* names reach a crash file as they are set */
    run->source = source;
    run->hz = source == TT__TRACE_SOURCE_MONOTONIC_RAW ? 0 : hz;
    run->for_child = for_child;
    if (run->crash_path) {
        char *real;
        rc = tt__file_target(run->crash_path, &real);
        if (rc)
            rc = rc == TT__FILE_STREAM || rc == -EINVAL ? refuse(k_target)
                 : rc == TT__FILE_PLANTED            ? explain(-EACCES, k_target)
                 : rc == -EISDIR                     ? explain(rc, k_target)
                                                     : rc;
        if (rc)
            goto fail;
        free(run->crash_path);
        run->crash_path = real;
        run->opts.crash_file = real;
        /* Made under a new name and renamed over crash_path once complete:
         * a start that fails (a full disk) leaves what was there. */
        run->fd = tt__file_create(run->crash_path, o->file_mode, &tmp);
        if (run->fd < 0) {
            rc = run->fd;
            run->fd = -1;
            goto fail;
        }
        /* Reserve every block now: a sparse file on a full disk would turn
         * a later event into SIGBUS instead of this -ENOSPC. */
        int e = posix_fallocate(run->fd, 0, (off_t)run->table_bytes);
        if (e) {
            rc = -e;
            goto fail;
        }
        run->table = mmap(NULL, run->table_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, run->fd, 0);
    } else {
        /* Untouched rings cost address space only. */
        run->table = mmap(NULL, run->table_bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (run->table == MAP_FAILED) {
        rc = -errno;
        run->table = NULL;
        goto fail;
    }
    tt__trace_header *h = run->hdr = (tt__trace_header *)run->table;
    memcpy(h->magic, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN);
    h->version_major = TT__TRACE_VERSION_MAJOR;
    h->version_minor = o->wait_on_cpu_intervals ? TT__TRACE_VERSION_MINOR_RUN_WAIT : TT__TRACE_VERSION_MINOR;
    h->header_size = TT__TRACE_HEADER_SIZE;
    h->section_size = TT__TRACE_SECTION_SIZE;
    h->record_size = TT__TRACE_RECORD_SIZE;
    h->flags = TT__TRACE_RING_LAYOUT;
    h->source = source;
    h->sections = run->max_threads;
    h->pid = (uint32_t)getpid();
    h->counter_hz = run->hz;
    h->ring_records = run->ring_records;
    rc = tt__anchor_take(&h->anchors[0], source != TT__TRACE_SOURCE_MONOTONIC_RAW);
    if (rc)
        goto fail;
    for (uint32_t i = 0; i < run->max_threads; i++) {
        tt__ring *r = run_ring(run, i);
        r->slot_mask = (uint64_t)(run->ring_records - 1) * TT__TRACE_RECORD_SIZE;
        r->magic = TT__SECTION_MAGIC;
        r->stored = run->ring_records;
    }
    if (run->crash_path) {
        h->names_offset = run->table_bytes - 2 * (size_t)TT__NAME_AREA_SIZE;
        h->names_size = TT__NAME_AREA_SIZE;
        h->thread_names_offset = h->names_offset + TT__NAME_AREA_SIZE;
        h->thread_names_size = TT__NAME_AREA_SIZE;
        run->names[TT__NAME_TABLE_EVENTS] =
            (tt__name_area){run->table + h->names_offset, TT__NAME_AREA_SIZE, 0, &h->names_dropped};
        run->names[TT__NAME_TABLE_THREADS] =
            (tt__name_area){run->table + h->thread_names_offset, TT__NAME_AREA_SIZE, 0, &h->thread_names_dropped};
        tt__names_fill_area(run->names);
        rc = tt__file_place(tmp, run->crash_path);
        free(tmp);
        tmp = NULL;
        if (rc) {
            if (rc == -EINVAL)
                refuse(k_target);
            goto fail;
        }
    }
    *out = run;
    return 0;
fail:
    if (tmp)
        unlink(tmp);
    free(tmp);
    run_release(run);
    free(run);
    return rc;
}

/* Unmaps and frees what run holds (not run itself). */
static void run_release(tt__run *run)
{
    if (run->table)
        munmap(run->table, run->table_bytes);
    if (run->fd >= 0)
        close(run->fd);
    free(run->crash_path);
    free(run->exit_path);
    run->table = NULL;
    run->fd = -1;
    run->crash_path = run->exit_path = NULL;
}

/* Discards an old run's rings. A thread may still be inside an event that
 * passed its key check before the stop, so the address range stays mapped:
 * anonymous pages are dropped (the range reads as zeros and costs nothing),
 * a crash-safe file stays mapped but is closed. The run struct is kept (a
 * few hundred bytes per restart) for the same reason. */
static void run_retire(tt__run *run)
{
    if (!run->crash_path)
        madvise(run->table, run->table_bytes, MADV_DONTNEED);
    if (run->fd >= 0)
        close(run->fd);
    run->fd = -1;
    run->retired_next = g_retired;
    g_retired = run;
}

static void publish(tt__run *run)
{
    run->key = g_next_key;
    g_next_key += 2;
    atomic_store_explicit(&run->recording, 1, memory_order_relaxed);
    atomic_store_explicit(&g_literal_copies, run->crash_path != NULL, memory_order_relaxed);
    __atomic_store_n(&tt__cpu_intervals, run->opts.cpu_on_intervals != 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_cpu_wait, run->opts.wait_on_cpu_intervals != 0, __ATOMIC_RELAXED);
    /* Release: pairs with run_current(); the run is complete. */
    atomic_store_explicit(&g_run, run, memory_order_release);
    /* Relaxed: a thread can only match this key after registering through
     * the slow path, which loads g_run with acquire. */
    __atomic_store_n(&tt__fast_key, run->source == TT__TRACE_SOURCE_MONOTONIC_RAW ? UINT64_MAX : run->key,
                     __ATOMIC_RELAXED);
}

/* 1 if no thread ever took a ring of run (none recorded or was refused),
 * or every ring it took was dumped and freed. */
static int run_empty(tt__run *run)
{
    if (__atomic_load_n(&run->hdr->threads_dropped, __ATOMIC_RELAXED))
        return 0;
    for (uint32_t i = 0; i < run->max_threads; i++)
        if (TT__RING_STATE(__atomic_load_n(&run_ring(run, i)->state, __ATOMIC_RELAXED)) != TT__RING_FREE)
            return 0;
    return 1;
}

/* Removes run's crash file if the name still leads to the file it made
 * (someone may have renamed another file there since). */
static void remove_crash_file(tt__run *run)
{
    struct stat ours, there;
    if (fstat(run->fd, &ours) == 0 && lstat(run->crash_path, &there) == 0 && ours.st_dev == there.st_dev &&
        ours.st_ino == there.st_ino)
        unlink(run->crash_path);
}

static void at_exit(void)
{
    tt__run *run = run_current();
    if (!run)
        return;
    if (recording(run))
        tt_log_stop();
    pthread_mutex_lock(&g_ctl);
    tt__log_writer write = g_exit_writer;
    /* A fork child that recorded nothing leaves no file: a pre-forking
     * server's idle workers would otherwise leave one each. */
    int leave_nothing = run->for_child && run_empty(run);
    if (leave_nothing && run->fd >= 0)
        remove_crash_file(run);
    pthread_mutex_unlock(&g_ctl);
    if (run->exit_path && write && !leave_nothing)
        write(run->exit_path);
}

/* Whether the child being forked may make a crash file: set in the parent
 * under g_ctl, read by the child's copy (fork_files in docs/events.md). */
static int g_fork_gets_file;

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_ctl);
    tt__run *run = run_current();
    /* Counted before the fork: a fork that fails uses up a grant, which
     * errs on the side of less disk. */
    g_fork_gets_file = recording(run) && run->crash_path && run->fork_files_given < run->opts.fork_files;
    if (g_fork_gets_file)
        run->fork_files_given++;
}

static void fork_parent(void) { pthread_mutex_unlock(&g_ctl); }

/* The child gets its own log: the parent's rings (a private copy, or the
 * parent's crash file) are dropped from the child without being written,
 * and if the parent was recording, a new run with the same options starts,
 * its file names suffixed with ".<child pid>". In memory, unless it is one
 * of the parent's fork_files children: a crash file per child, each as
 * large as the parent's, filled up the disk of a forking server. Its exit
 * dump and crash file are removed at exit if it recorded nothing.
 * Calibration is inherited. */
static void fork_child(void)
{
    pthread_mutex_init(&g_ctl, NULL);
    tt__run *old = run_current();
    __atomic_store_n(&tt__fast_key, UINT64_MAX, __ATOMIC_RELAXED);
    atomic_store_explicit(&g_run, NULL, memory_order_release);
    tt__tls.key = 0;
    tt__tls.ring = NULL;
    t_self.denied_key = 0;
    /* The child is single-threaded: nothing else can be using these tables. */
    tt__acc_fork_child();
    while (g_retired) {
        tt__run *r = g_retired;
        g_retired = r->retired_next;
        run_release(r);
        free(r);
    }
    if (!old)
        return;
    tt_log_options o = old->opts;
    if (!g_fork_gets_file)
        o.crash_file = NULL;
    tt__run *run = NULL;
    if (recording(old) && run_create(&o, 1, &run) == 0)
        publish(run);
    run_release(old);
    free(old);
}

static void process_init(void)
{
    pthread_key_create(&g_exit_key, on_thread_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(at_exit);
    tt__acc_process_init();
}

/* ---- public control calls ---- */

int tt__log_start(const tt_log_options *opts, tt__log_writer at_exit_writer)
{
    tt_log_options o;
    int rc = resolve_options(opts, &o);
    if (rc)
        return rc;
    pthread_once(&g_process_once, process_init);
    pthread_mutex_lock(&g_ctl);
    tt__run *old = run_current();
    tt__run *run = NULL;
    if (recording(old))
        rc = -EALREADY;
    else
        rc = run_create(&o, 0, &run);
    if (rc == 0) {
        g_exit_writer = at_exit_writer;
        publish(run);
        if (old)
            run_retire(old);
    }
    pthread_mutex_unlock(&g_ctl);
    return rc;
}

int tt_log_stop(void)
{
    pthread_mutex_lock(&g_ctl);
    tt__run *run = run_current();
    int rc = -ESRCH;
    if (recording(run)) {
        __atomic_store_n(&tt__fast_key, UINT64_MAX, __ATOMIC_RELAXED);
        atomic_store_explicit(&run->recording, 0, memory_order_relaxed);
        /* The end anchor makes a crash-safe file complete: readers then
         * interpolate between two anchors instead of extrapolating. */
        if (tt__anchor_take(&run->hdr->anchors[1], run->source != TT__TRACE_SOURCE_MONOTONIC_RAW) == 0)
            run->hdr->flags |= TT__TRACE_END_ANCHOR;
        rc = 0;
    }
    pthread_mutex_unlock(&g_ctl);
    return rc;
}

int tt_log_thread_name(const char *name)
{
    size_t len;
    int rc = tt__name_check(name, &len);
    if (rc)
        return rc;
    tt__run *run = run_current();
    if (!recording(run))
        return -ESRCH;
    tt__ring *r = own_ring(run);
    if (!r)
        return -ENOSPC;
    /* The whole name by tid first: the ring's 15 bytes are what tells a
     * reader that the tid's name is this thread's (trace_read.c). */
    rc = tt__name_set(TT__NAMES_OS_THREAD, (uint32_t)tt__gettid(), name, len);
    if (rc == 0)
        set_name(r, name);
    return rc;
}

int tt_log_info_get(tt_log_info *out)
{
    if (!out)
        return -EFAULT;
    if (out->size < sizeof *out)
        return -EINVAL;
    tt__run *run = run_current();
    if (!run)
        return -ESRCH;
    out->running = recording(run);
    out->source = run->source == TT__TRACE_SOURCE_MONOTONIC_RAW ? TT_LOG_CLOCK_MONOTONIC : TT_LOG_CLOCK_COUNTER;
    out->counter_hz = run->hz;
    out->ring_records = run->ring_records;
    out->max_threads = run->max_threads;
    out->crash_safe = run->crash_path != NULL;
    return 0;
}

int tt__log_hold(tt__log_view *v)
{
    pthread_mutex_lock(&g_ctl);
    tt__run *run = run_current();
    if (!run) {
        pthread_mutex_unlock(&g_ctl);
        return -ESRCH;
    }
    v->hdr = run->hdr;
    v->table = run->table;
    v->ring_bytes = run->ring_bytes;
    v->ring_records = run->ring_records;
    v->max_threads = run->max_threads;
    v->source = run->source;
    v->recording = recording(run);
    v->key = run->key;
    v->file_mode = run->opts.file_mode;
    return 0;
}

void tt__log_release(void) { pthread_mutex_unlock(&g_ctl); }

void tt__log_lock(tt__name_area **areas)
{
    pthread_mutex_lock(&g_ctl);
    tt__run *run = run_current();
    *areas = run && run->crash_path ? run->names : NULL;
}

/* ---- the recording calls as real symbols ---- */

void tt_event(uint32_t id) { tt__event_inline(id); }
void tt_event_text(uint32_t id, const char *text) { tt__event_text_inline(id, text); }
void tt_event_value(uint32_t id, uint64_t value) { tt__event_value_inline(id, value); }
void tt_event_begin(uint32_t id) { tt__event_begin_inline(id); }
void tt_event_end(uint32_t id) { tt__event_end_inline(id); }

void tt_event_literal(uint32_t id, const char *text)
{
    if (!text || atomic_load_explicit(&g_literal_copies, memory_order_relaxed))
        tt__event_text_inline(id, text);
    else
        tt__record(TT__W1(TT__KIND_LITERAL, id), (uint64_t)(uintptr_t)text, 0, 1);
}

/* User and system CPU time in the payload, the core's consistent split at
 * ns resolution over the fast clock's total, made only while recording:
 * the probes' _cpu record (tt__record_cpu), whose one counter read is both
 * the record's time and the fast clock's (~15 ns over a plain record while
 * the thread stays on its CPU; three clock reads, ~0.9 us, after a switch).
 * getrusage() would cost one call but lags a running thread by up to a
 * tick, which would charge a busy stretch's last few milliseconds to
 * whatever interval follows it. */
static void cpu_event(unsigned kind, uint32_t id)
{
    if (!recording(run_current()))
        return;
    /* The wait is read inside the interval: after its begin's CPU read,
     * before its end's, so the pair's wait covers less than its bounds. A
     * read that fails (no schedstat) records nothing, and the reader then
     * shows the interval without a wait. */
    if (!__atomic_load_n(&g_cpu_wait, __ATOMIC_RELAXED)) {
        tt__record_cpu(TT__W1(kind, id));
        return;
    }
    tt_sched s;
    int saved = errno; /* a failed read must not change it under a signal handler's caller */
    if (kind == TT__KIND_END_CPU && tt__self_schedstat(&s) == 0)
        tt__record(TT__W1(TT__KIND_RUN_WAIT, id), (uint64_t)s.run_wait_ns, (uint64_t)s.timeslices, 2);
    tt__record_cpu(TT__W1(kind, id));
    if (kind == TT__KIND_BEGIN_CPU && tt__self_schedstat(&s) == 0)
        tt__record(TT__W1(TT__KIND_RUN_WAIT, id), (uint64_t)s.run_wait_ns, (uint64_t)s.timeslices, 2);
    errno = saved;
}

void tt_event_begin_cpu(uint32_t id) { cpu_event(TT__KIND_BEGIN_CPU, id); }
void tt_event_end_cpu(uint32_t id) { cpu_event(TT__KIND_END_CPU, id); }
