/* The event log: recording, capacity and overwrite counts, threads, dumps
 * taken while threads write, the clock fallback. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "sched_test_util.h"
#include "event_test_util.h"
#include "trace_model.h"
#include "read_clock.h"

#define WRITERS 4

static pid_t my_tid(void) { return gettid(); }

TT_TEST(start_stop_and_errors)
{
    tt_log_options bad = small_log(TT_LOG_RING_MAX + 1, 4);
    CHECK_OP(tt_log_start(&bad), ==, -EINVAL);
    tt_log_options tiny = {.size = 1};
    CHECK_OP(tt_log_start(&tiny), ==, -EINVAL);
    tt_log_options o = small_log(100, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_start(&o), ==, -EALREADY);
    tt_log_info info = {.size = sizeof info};
    CHECK_OP(tt_log_info_get(&info), ==, 0);
    CHECK_OP(info.running, ==, 1);
    CHECK_OP(info.ring_records, ==, 128); /* rounded up to a power of two */
    CHECK_OP(tt_log_stop(), ==, 0);
    CHECK_OP(tt_log_stop(), ==, -ESRCH);
    CHECK_OP(tt_log_dump(NULL), ==, -EFAULT);
    CHECK_OP(tt_log_thread_name(NULL), ==, -EFAULT);
    CHECK_OP(tt_log_thread_name("x"), ==, -ESRCH);

    setenv("THREADTIME_CLOCK", "sundial", 1);
    CHECK_OP(tt_log_start(NULL), ==, -EINVAL);
    setenv("THREADTIME_CLOCK", "auto", 1);
    setenv("THREADTIME_RING", "12x", 1);
    CHECK_OP(tt_log_start(NULL), ==, -EINVAL);
    setenv("THREADTIME_RING", "64", 1);
    CHECK_OP(tt_log_start(NULL), ==, 0);
    CHECK_OP(tt_log_info_get(&info), ==, 0);
    CHECK_OP(info.ring_records, ==, 64);
    CHECK_OP(tt_log_stop(), ==, 0);
    unsetenv("THREADTIME_RING");
    unsetenv("THREADTIME_CLOCK");
}

TT_TEST(every_kind_round_trips)
{
    tt_log_options o = small_log(256, 4);
    o.clock = TT_LOG_CLOCK_AUTO;
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_thread_name("roundtrip-main"), ==, 0);
    tt_event(10);
    tt_event_text(11, "hello");
    tt_event_text(12, "exactly-16-bytes");
    tt_event_text(13, "this text is longer than sixteen bytes");
    tt_event_text(14, NULL);
    tt_event_value(15, UINT64_C(0xfeedfacecafebeef));
    tt_event_literal(16, "a literal longer than sixteen bytes, kept by pointer");
    tt_event_begin(17);
    tt_event_end(17);
    tt_event_begin_cpu(18);
    tt_event_end_cpu(18);
    {
        TT_EVENT_SCOPE(19);
        tt_event(20);
    }
    CHECK_OP(tt_log_stop(), ==, 0);
    tt_event(99); /* after stop: not recorded */

    loaded_trace lt;
    CHECK_OP(dump_and_load("kinds", &lt), ==, 0);
    CHECK(!lt.t.damaged);
    const tt__trace_thread *th = find_thread(&lt.t, (uint32_t)my_tid());
    CHECK(th != NULL);
    if (th) {
        CHECK(strcmp(th->name, "roundtrip-main") == 0);
        CHECK_OP(th->head - th->first, ==, 14);
        CHECK_OP(count_committed(&lt.t, th), ==, 14);
        tt__trace_event ev[14];
        int64_t prev = INT64_MIN;
        for (int k = 0; k < 14; k++) {
            CHECK_OP(tt__trace_event_at(&lt.t, th, (uint64_t)k, &ev[k]), ==, 1);
            CHECK(ev[k].ns >= prev);
            prev = ev[k].ns;
        }
        CHECK_OP(ev[0].kind, ==, TT__KIND_INSTANT);
        CHECK_OP(ev[0].id, ==, 10);
        CHECK(ev[1].text_len == 5 && memcmp(ev[1].text, "hello", 5) == 0);
        CHECK(ev[2].text_len == 16 && memcmp(ev[2].text, "exactly-16-bytes", 16) == 0);
        CHECK(ev[3].text_len == TT_EVENT_TEXT_MAX && memcmp(ev[3].text, "this text is lon", 16) == 0);
        CHECK(ev[4].kind == TT__KIND_TEXT && ev[4].text_len == 0);
        CHECK(ev[5].kind == TT__KIND_VALUE && ev[5].p0 == UINT64_C(0xfeedfacecafebeef));
        CHECK(ev[6].kind == TT__KIND_LITERAL && ev[6].text != NULL);
        if (ev[6].text)
            CHECK(ev[6].text_len == 52 && memcmp(ev[6].text, "a literal longer", 16) == 0);
        CHECK(ev[7].kind == TT__KIND_BEGIN && ev[8].kind == TT__KIND_END && ev[8].id == 17);
        CHECK(ev[9].kind == TT__KIND_BEGIN_CPU && ev[10].kind == TT__KIND_END_CPU);
        /* CPU time never runs backwards and user + system is consistent. */
        CHECK(ev[10].p0 + ev[10].p1 >= ev[9].p0 + ev[9].p1);
        CHECK(ev[11].kind == TT__KIND_BEGIN && ev[11].id == 19);
        CHECK(ev[12].kind == TT__KIND_INSTANT && ev[12].id == 20);
        CHECK(ev[13].kind == TT__KIND_END && ev[13].id == 19);
    }
    free_trace(&lt);
}

/* The text copy at every length and every position near a page end (the
 * next page unmapped): the first 16 bytes up to the NUL, zero-padded, and
 * never a read into the next page. */
TT_TEST(text_copy_every_length_and_page_offset)
{
    long page = sysconf(_SC_PAGESIZE);
    char *two = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED);
    if (two == MAP_FAILED)
        return;
    CHECK_OP(mprotect(two + page, (size_t)page, PROT_NONE), ==, 0);
    int bad = 0;
    for (int len = 0; len <= 20; len++) {
        for (int end_gap = 0; end_gap < 40; end_gap++) {
            /* The string and its NUL end end_gap bytes before the guard page;
             * bytes after the NUL up to the guard are not zero. */
            char *s = two + page - end_gap - len - 1;
            if (s < two)
                continue;
            memset(two + page - 64, 'x', 64);
            for (int i = 0; i < len; i++)
                s[i] = (char)('a' + i);
            s[len] = 0;
            char want[16] = {0};
            memcpy(want, s, len < 16 ? (size_t)len : 16);
            tt__text16 got = tt__text_words(s);
            bad += memcmp(got.w, want, 16) != 0;
        }
    }
    tt__text16 none = tt__text_words(NULL);
    bad += none.w[0] != 0 || none.w[1] != 0;
    CHECK_OP(bad, ==, 0);
    munmap(two, (size_t)page * 2);
}

TT_TEST(cpu_on_intervals_option)
{
    tt_log_options o = small_log(64, 4);
    o.cpu_on_intervals = 1;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_begin(1);
    tt_event_end(1);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    CHECK_OP(dump_and_load("cpuopt", &lt), ==, 0);
    const tt__trace_thread *th = find_thread(&lt.t, (uint32_t)my_tid());
    tt__trace_event b, e;
    CHECK(th && tt__trace_event_at(&lt.t, th, 0, &b) && tt__trace_event_at(&lt.t, th, 1, &e));
    if (th) {
        CHECK_OP(b.kind, ==, TT__KIND_BEGIN_CPU);
        CHECK_OP(e.kind, ==, TT__KIND_END_CPU);
    }
    free_trace(&lt);
}

typedef struct writer_arg {
    uint32_t events;
    pid_t tid;
    atomic_int *go;
    atomic_int *stop;
    uint64_t written;
} writer_arg;

/* Writes events id = thread's slot, value = 0, 1, 2, ... */
static void *counted_writer(void *p)
{
    writer_arg *a = p;
    a->tid = my_tid();
    while (!atomic_load(a->go))
        ;
    for (uint32_t i = 0; i < a->events; i++)
        tt_event_value(7, i);
    a->written = a->events;
    return NULL;
}

TT_TEST(no_event_lost_below_capacity)
{
    tt_log_options o = small_log(4096, 16);
    CHECK_OP(tt_log_start(&o), ==, 0);
    pthread_t th[WRITERS];
    writer_arg args[WRITERS];
    atomic_int go = 0;
    for (int i = 0; i < WRITERS; i++) {
        args[i] = (writer_arg){.events = 4096, .go = &go};
        pthread_create(&th[i], NULL, counted_writer, &args[i]);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    loaded_trace lt;
    CHECK_OP(dump_and_load("nolost", &lt), ==, 0);
    for (int i = 0; i < WRITERS; i++) {
        const tt__trace_thread *t = find_thread(&lt.t, (uint32_t)args[i].tid);
        CHECK(t != NULL);
        if (!t)
            continue;
        CHECK_OP(t->state, ==, TT__RING_EXITED);
        CHECK_OP(t->overwritten, ==, 0);
        CHECK_OP(t->head - t->first, ==, 4096);
        uint64_t k;
        tt__trace_event ev;
        for (k = 0; k < 4096; k++)
            if (!tt__trace_event_at(&lt.t, t, k, &ev) || ev.p0 != k)
                break;
        CHECK_OP(k, ==, 4096);
    }
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

TT_TEST(overwrite_counts_exact)
{
    tt_log_options o = small_log(16, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    for (uint64_t i = 0; i < 1000; i++)
        tt_event_value(1, i);
    loaded_trace lt;
    CHECK_OP(dump_and_load("overwrite", &lt), ==, 0);
    const tt__trace_thread *t = find_thread(&lt.t, (uint32_t)my_tid());
    CHECK(t != NULL);
    if (t) {
        CHECK_OP(t->overwritten, ==, 1000 - 16);
        CHECK_OP(t->head - t->first, ==, 16);
        tt__trace_event ev;
        for (uint64_t k = 0; k < 16; k++) {
            CHECK(tt__trace_event_at(&lt.t, t, k, &ev));
            CHECK_OP(ev.p0, ==, 1000 - 16 + k);
        }
    }
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* Writers stamp each text with its own sequence number twice, so a record
 * mixed from two writes (a torn copy) shows as a mismatch. */
static void *text_writer(void *p)
{
    writer_arg *a = p;
    a->tid = my_tid();
    char text[17];
    uint64_t i = 0;
    while (!atomic_load(a->stop)) {
        snprintf(text, sizeof text, "%08x%08x", (unsigned)i, (unsigned)~i);
        tt_event_text((uint32_t)i, text);
        if (++i == 1000)
            atomic_fetch_add(a->go, 1); /* "I am writing": the dumps may begin */
    }
    a->written = i;
    return NULL;
}

static void check_whole(const tt__trace *t, const tt__trace_thread *th, int *bad)
{
    tt__trace_event ev;
    uint64_t prev_seq = 0;
    int have_prev = 0;
    for (uint64_t k = 0; k < th->head - th->first; k++) {
        if (!tt__trace_event_at(t, th, k, &ev))
            continue;
        char text[17] = {0};
        memcpy(text, ev.text, ev.text_len);
        unsigned a = 0, b = 0;
        if (ev.kind != TT__KIND_TEXT || sscanf(text, "%8x%8x", &a, &b) != 2 || b != ~a || a != ev.id ||
            (have_prev && a <= prev_seq))
            (*bad)++;
        prev_seq = a;
        have_prev = 1;
    }
}

TT_TEST(dump_while_writing_yields_whole_records)
{
    tt_log_options o = small_log(1024, 8);
    CHECK_OP(tt_log_start(&o), ==, 0);
    pthread_t th[2];
    writer_arg args[2];
    atomic_int stop = 0, writing = 0;
    for (int i = 0; i < 2; i++) {
        args[i] = (writer_arg){.stop = &stop, .go = &writing};
        pthread_create(&th[i], NULL, text_writer, &args[i]);
    }
    while (atomic_load(&writing) < 2)
        sched_yield();
    int bad = 0, seen = 0;
    for (int round = 0; round < 30; round++) {
        loaded_trace lt;
        if (dump_and_load("concurrent", &lt) != 0)
            break;
        CHECK(!lt.t.damaged);
        for (uint32_t i = 0; i < lt.t.nthreads; i++) {
            if (lt.t.threads[i].tid == (uint32_t)my_tid())
                continue;
            check_whole(&lt.t, &lt.t.threads[i], &bad);
            seen += (int)count_committed(&lt.t, &lt.t.threads[i]);
        }
        free_trace(&lt);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_OP(bad, ==, 0);
    CHECK_OP(seen, >, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
}

static void *one_event(void *p)
{
    (void)p;
    tt_log_thread_name("short-lived");
    tt_event(5);
    return NULL;
}

TT_TEST(exited_threads_are_kept_and_bounded)
{
    tt_log_options o = small_log(16, 3);
    CHECK_OP(tt_log_start(&o), ==, 0);
    for (int i = 0; i < 10; i++) {
        pthread_t th;
        pthread_create(&th, NULL, one_event, NULL);
        pthread_join(th, NULL);
    }
    loaded_trace lt;
    CHECK_OP(dump_and_load("exited", &lt), ==, 0);
    /* Three rings: each new thread took the oldest exited one. */
    CHECK_OP(lt.t.nthreads, ==, 3);
    CHECK_OP(lt.t.h.rings_recycled, ==, 7);
    for (uint32_t i = 0; i < lt.t.nthreads; i++) {
        CHECK_OP(lt.t.threads[i].state, ==, TT__RING_EXITED);
        CHECK(strcmp(lt.t.threads[i].name, "short-lived") == 0);
        CHECK_OP(count_committed(&lt.t, &lt.t.threads[i]), ==, 1);
    }
    free_trace(&lt);
    /* Dumped exited rings are released: the next dump no longer has them. */
    CHECK_OP(dump_and_load("exited2", &lt), ==, 0);
    CHECK_OP(lt.t.nthreads, ==, 0);
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* Many short-lived threads: memory stays at max_threads rings, the newest
 * exited threads' events are the ones kept, the rest counted. */
TT_TEST(many_short_lived_threads_stay_bounded)
{
    enum { BOUND = 4, THREADS = 2000 };
    tt_log_options o = small_log(16, BOUND);
    CHECK_OP(tt_log_start(&o), ==, 0);
    pid_t last_tid = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_t th;
        atomic_int go = 1; /* not a compound literal: clang refuses an atomic one */
        writer_arg arg = {.events = 3, .go = &go};
        pthread_create(&th, NULL, counted_writer, &arg);
        pthread_join(th, NULL);
        last_tid = arg.tid;
    }
    loaded_trace lt;
    CHECK_OP(dump_and_load("many", &lt), ==, 0);
    CHECK_OP(lt.t.nthreads, ==, BOUND);
    CHECK_OP(lt.t.h.rings_recycled, ==, THREADS - BOUND);
    CHECK_OP(lt.t.h.threads_dropped, ==, 0);
    CHECK(find_thread(&lt.t, (uint32_t)last_tid) != NULL);
    for (uint32_t i = 0; i < lt.t.nthreads; i++)
        CHECK_OP(count_committed(&lt.t, &lt.t.threads[i]), ==, 3);
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

static void *hold_ring(void *p)
{
    tt_event(1);
    spin_until(p);
    return NULL;
}

TT_TEST(threads_beyond_the_bound_are_counted)
{
    tt_log_options o = small_log(16, 2);
    CHECK_OP(tt_log_start(&o), ==, 0);
    atomic_int stop = 0;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, hold_ring, &stop);
    /* Wait until both hold their rings, then this thread finds none. */
    for (int tries = 0; tries < 10000; tries++) {
        loaded_trace lt;
        if (dump_and_load("bound", &lt) != 0)
            break;
        uint32_t n = lt.t.nthreads;
        free_trace(&lt);
        if (n == 2)
            break;
        sched_yield();
    }
    tt_event(2);
    CHECK_OP(tt_log_thread_name("third"), ==, -ENOSPC);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    loaded_trace lt;
    CHECK_OP(dump_and_load("bound2", &lt), ==, 0);
    CHECK_OP(lt.t.h.threads_dropped, >=, 1);
    CHECK(find_thread(&lt.t, (uint32_t)my_tid()) == NULL);
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* Events land between the MONOTONIC_RAW reads around them, whichever clock
 * stamps them (the counter through calibration, or the fallback). */
static void check_clock(tt_log_clock clock, tt_log_clock expect_source)
{
    tt_log_options o = small_log(64, 4);
    o.clock = clock;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_log_info info = {.size = sizeof info};
    CHECK_OP(tt_log_info_get(&info), ==, 0);
    CHECK_OP(info.source, ==, expect_source);
    int64_t before = tt__read_clock(CLOCK_MONOTONIC_RAW);
    tt_event(1);
    int64_t after = tt__read_clock(CLOCK_MONOTONIC_RAW);
    CHECK(before >= 0 && after >= before);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    CHECK_OP(dump_and_load("clock", &lt), ==, 0);
    const tt__trace_thread *t = find_thread(&lt.t, (uint32_t)my_tid());
    tt__trace_event ev;
    CHECK(t && tt__trace_event_at(&lt.t, t, 0, &ev));
    if (t) {
        /* 2 us of slack for the interpolation's rounding and the brackets. */
        CHECK_OP(ev.ns, >=, before - 2000);
        CHECK_OP(ev.ns, <=, after + 2000);
        CHECK_OP(lt.t.h.source == TT__TRACE_SOURCE_MONOTONIC_RAW, ==, expect_source == TT_LOG_CLOCK_MONOTONIC);
    }
    free_trace(&lt);
}

TT_TEST(fallback_clock_stamps_monotonic_raw)
{
    check_clock(TT_LOG_CLOCK_MONOTONIC, TT_LOG_CLOCK_MONOTONIC);
}

TT_TEST(counter_clock_agrees_with_monotonic_raw)
{
    double hz;
    int trusted = tt__counter_calibrated(&hz);
    check_clock(TT_LOG_CLOCK_AUTO, trusted ? TT_LOG_CLOCK_COUNTER : TT_LOG_CLOCK_MONOTONIC);
}

/* ---- the run-queue wait at CPU bounds (wait_on_cpu_intervals) ---- */

typedef struct wait_burner {
    pthread_barrier_t *go;
    int cpu;
    atomic_int *finished;
    uint32_t id;
    int order;      /* 1: finished its burn first */
    int pinned;
    pid_t tid;
    int64_t cpu_ns; /* its own clock across the burn */
} wait_burner;

static void *burn_in_interval(void *p)
{
    wait_burner *w = p;
    w->pinned = pin_to_cpu(w->cpu) == 0;
    w->tid = my_tid();
    tt_event_begin_cpu(w->id);
    int64_t c0 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    pthread_barrier_wait(w->go);
    burn_cpu(100 * 1000 * 1000);
    w->cpu_ns = tt__read_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
    w->order = atomic_fetch_add(w->finished, 1) + 1;
    tt_event_end_cpu(w->id);
    return NULL;
}

typedef struct wait_pairs {
    const tt__trace *t;
    unsigned n;
    uint32_t id[4];
    pid_t tid[4];
    int64_t wait_ns[4]; /* -1: the pair has no wait */
    int64_t cpu_ns[4];
} wait_pairs;

static void wp_event(void *ctx, const tt__track *tr, const tt__step *end, const tt__step *b)
{
    wait_pairs *m = ctx;
    (void)tr;
    int64_t user, sys;
    if (!b || m->n == 4 || end->ev.id < 70 || end->ev.id > 71)
        return;
    m->id[m->n] = end->ev.id;
    m->tid[m->n] = (pid_t)m->t->threads[end->thread].tid;
    m->wait_ns[m->n] = -1;
    tt__pair_wait(m->t, b, end, &m->wait_ns[m->n]);
    m->cpu_ns[m->n] = tt__pair_cpu(b, end, &user, &sys) ? user + sys : -1;
    m->n++;
}

/* Two threads pinned to one CPU, each inside a CPU interval, released
 * together and burning 100 ms: while the first to finish ran, the other was
 * runnable and not running, so the dumped trace, read back, gives the
 * second's interval a wait of at least 90 % of the first's CPU (its own
 * clock; the spare covers what the first ran before the release). Without
 * the option the pairs carry no wait. */
TT_TEST(cpu_intervals_carry_the_run_queue_wait)
{
    tt_sched probe;
    if (tt_self_sched(&probe) != 0) {
        printf("skip: cpu_intervals_carry_the_run_queue_wait: no schedstat in this kernel\n");
        return;
    }
    for (int with = 1; with >= 0; with--) {
        tt_log_options o = small_log(1024, 8);
        o.cpu_on_intervals = 0;
        o.wait_on_cpu_intervals = with;
        CHECK_OP(tt_log_start(&o), ==, 0);
        int cpu = first_allowed_cpu();
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        atomic_int finished = 0;
        wait_burner w[2] = {{&go, cpu, &finished, 70, 0, 0, 0, 0}, {&go, cpu, &finished, 71, 0, 0, 0, 0}};
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            CHECK_OP(pthread_create(&t[i], NULL, burn_in_interval, &w[i]), ==, 0);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&go);
        CHECK(w[0].pinned && w[1].pinned);
        CHECK_OP(tt_log_stop(), ==, 0);
        loaded_trace lt;
        if (dump_and_load(with ? "wait" : "nowait", &lt) != 0) {
            CHECK(0);
            continue;
        }
        /* The kind the wait adds is a 1.3 one; without it the trace is 1.2. */
        CHECK_OP(lt.t.h.version_minor, ==, with ? 3 : 2);
        wait_pairs m = {.n = 0, .t = &lt.t};
        const tt__walk_ops ops = {NULL, wp_event, NULL, NULL};
        CHECK_OP(tt__trace_walk(&lt.t, &ops, &m), ==, 0);
        CHECK_OP(m.n, ==, 2);
        wait_burner *first = w[0].order == 1 ? &w[0] : &w[1];
        wait_burner *second = first == &w[0] ? &w[1] : &w[0];
        for (unsigned i = 0; i < m.n; i++) {
            /* The pair's CPU, as before: the begin's fast-clock total may
             * stand up to TT_FAST_BOUND_NS above the real read after it. */
            CHECK_OP(m.cpu_ns[i], >=, 100 * 1000 * 1000 - TT_FAST_BOUND_NS);
            if (!with) {
                CHECK_OP(m.wait_ns[i], ==, -1);
            } else if (m.tid[i] == second->tid) {
                CHECK_OP(m.id[i], ==, second->id);
                fprintf(stderr, "  first burned %lld us; the second's interval waited %lld us (trace)\n",
                        (long long)first->cpu_ns / 1000, (long long)m.wait_ns[i] / 1000);
                CHECK_OP(m.wait_ns[i] * 10, >=, first->cpu_ns * 9);
            } else {
                CHECK_OP(m.wait_ns[i], >=, 0);
            }
        }
        free_trace(&lt);
    }
}

/* A CPU bound with the wait on leaves errno as it found it, even where its
 * schedstat read fails first (the kept descriptor closed under the library,
 * so it opens the file again): the bound may interrupt code between a call
 * and its errno check. */
TT_TEST(cpu_wait_bounds_keep_errno)
{
    tt_log_options o = small_log(64, 4);
    o.wait_on_cpu_intervals = 1;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_begin_cpu(72);
    int fd = kept_descriptor();
    CHECK_OP(fd, >=, 0);
    if (fd >= 0)
        close(fd);
    errno = EDOM;
    tt_event_end_cpu(72);
    CHECK_OP(errno, ==, EDOM);
    CHECK_OP(tt_log_stop(), ==, 0);
}

TT_TEST_MAIN()
