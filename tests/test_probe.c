/* Probes, names and virtual-thread markers: what a dump carries
 * and what the reader makes of it. The summary must count every call
 * exactly however far the rings wrapped, keep exited threads' sums, say
 * what did not fit, and reset with a new run; names must reach dumps and
 * crash-safe files. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#include "event_test_util.h"
#include "trace_model.h"

/* The summary entry of id, or NULL. */
static const tt__summary_entry *sum_of(const tt__trace *t, uint32_t id)
{
    for (uint32_t i = 0; i < t->nsummary; i++)
        if (t->summary[i].id == id)
            return &t->summary[i];
    return NULL;
}

/* 1 if the len bytes at name (NULL: none) are want. */
static int same(const char *name, size_t len, const char *want)
{
    return name && len == strlen(want) && memcmp(name, want, len) == 0;
}

static int name_is(const tt__trace *t, uint32_t id, const char *want)
{
    size_t len = 0;
    const char *name = tt__trace_name_of(t, id, &len);
    return same(name, len, want);
}

/* A name of len bytes ('n's) in buf (len + 1 bytes). */
static char *name_of_length(char *buf, size_t len)
{
    memset(buf, 'n', len);
    buf[len] = 0;
    return buf;
}

TT_TEST(name_checks_arguments)
{
    char longest[TT_EVENT_NAME_MAX + 2];
    CHECK_OP(tt_event_name(1, NULL), ==, -EFAULT);
    CHECK_OP(tt_event_name(1, ""), ==, -EINVAL);
    CHECK_OP(tt_event_name(1, name_of_length(longest, TT_EVENT_NAME_MAX + 1)), ==, -EINVAL);
    CHECK_OP(tt_event_name(1, name_of_length(longest, TT_EVENT_NAME_MAX)), ==, 0);
    CHECK_OP(tt_event_name(1, "bad \xc3("), ==, -EINVAL);      /* cut sequence */
    CHECK_OP(tt_event_name(1, "bad \xc0\xaf"), ==, -EINVAL);   /* overlong '/' */
    CHECK_OP(tt_event_name(1, "bad \xed\xa0\x80"), ==, -EINVAL); /* a surrogate */
    CHECK_OP(tt_event_name(1, "bad \xf4\x90\x80\x80"), ==, -EINVAL); /* past U+10FFFF */
    CHECK_OP(tt_event_name(1, "caf\xc3\xa9 \xf0\x9f\x98\x80"), ==, 0);
}

static int thread_named(const tt__trace *t, uint32_t tid, const char *want)
{
    const tt__trace_thread *th = find_thread(t, tid);
    size_t len = 0;
    const char *name = th ? tt__trace_thread_name(th, &len) : NULL;
    return same(name, len, want);
}

static int vthread_named(const tt__trace *t, uint64_t v, const char *want)
{
    size_t len = 0;
    const char *name = tt__trace_vthread_name(t, v, &len);
    return same(name, len, want);
}

TT_TEST(thread_names_check_arguments)
{
    char longest[TT_EVENT_NAME_MAX + 2];
    name_of_length(longest, TT_EVENT_NAME_MAX + 1);
    /* Refused before anything else, running or not. */
    CHECK_OP(tt_log_thread_name(""), ==, -EINVAL);
    CHECK_OP(tt_log_thread_name(longest), ==, -EINVAL);
    CHECK_OP(tt_log_thread_name("bad \xc3("), ==, -EINVAL);
    CHECK_OP(tt_log_vthread_name(5, NULL), ==, -EFAULT);
    CHECK_OP(tt_log_vthread_name(5, ""), ==, -EINVAL);
    CHECK_OP(tt_log_vthread_name(5, longest), ==, -EINVAL); /* 256 bytes */
    CHECK_OP(tt_log_vthread_name(5, "bad \xed\xa0\x80"), ==, -EINVAL);
    CHECK_OP(tt_log_vthread_name(0, "zero"), ==, -EINVAL);
    CHECK_OP(tt_log_vthread_name(UINT64_C(1) << 48, "too large"), ==, -EINVAL);
    name_of_length(longest, TT_EVENT_NAME_MAX);
    CHECK_OP(tt_log_vthread_name((UINT64_C(1) << 48) - 1, longest), ==, 0); /* 255 bytes, the largest id */
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_thread_name(""), ==, -EINVAL);
    CHECK_OP(tt_log_thread_name("bad \xf4\x90\x80\x80"), ==, -EINVAL);
    CHECK_OP(tt_log_thread_name(longest), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("tnamecheck", &lt) == 0) {
        CHECK(!lt.t.damaged);
        CHECK(thread_named(&lt.t, (uint32_t)gettid(), longest));
        CHECK(vthread_named(&lt.t, (UINT64_C(1) << 48) - 1, longest));
    }
    free_trace(&lt);
}

static uint32_t g_worker_tid;

static void *named_worker(void *p)
{
    g_worker_tid = (uint32_t)gettid();
    tt_log_thread_name(p);
    tt_event(1);
    return NULL;
}

/* Names longer than the kernel's 15 bytes, for OS threads and
 * virtual threads, reach a dump whole; each track gets its own. */
TT_TEST(thread_names_reach_the_dump_whole)
{
    static const char worker[] = "main-worker-with-a-long-name";
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_thread_name("first name of main"), ==, 0);
    CHECK_OP(tt_log_thread_name("m\xc3\xa4in, renamed, longer than fifteen bytes"), ==, 0);
    CHECK_OP(tt_log_vthread_name(24, "worker-v"), ==, 0);
    pthread_t th;
    uint32_t worker_tid = 0;
    if (pthread_create(&th, NULL, named_worker, (void *)worker) == 0) {
        pthread_join(th, NULL);
        worker_tid = g_worker_tid;
    }
    tt_event_mount(24);
    tt_event(2);
    tt_event_unmount(24);
    tt_event_mount(25); /* nobody named it */
    tt_event(3);
    tt_event_unmount(25);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("tnames", &lt) == 0) {
        CHECK_OP(lt.t.h.version_minor, ==, 2);
        CHECK(!lt.t.damaged);
        CHECK(thread_named(&lt.t, (uint32_t)gettid(), "m\xc3\xa4in, renamed, longer than fifteen bytes"));
        /* Old readers still find the first 15 bytes in the section. */
        const tt__trace_thread *me = find_thread(&lt.t, (uint32_t)gettid());
        CHECK(me && strcmp(me->name, "m\xc3\xa4in, renamed,") == 0);
        CHECK(worker_tid && thread_named(&lt.t, worker_tid, worker));
        CHECK(vthread_named(&lt.t, 24, "worker-v"));
        size_t len;
        CHECK(tt__trace_vthread_name(&lt.t, 25, &len) == NULL);
        /* The model names every track. */
        for (uint32_t i = 0; i < lt.t.nthreads; i++) {
            tt__track tr = {i, 0, 0};
            const char *name = tt__track_name(&lt.t, &tr, &len);
            size_t want = lt.t.threads[i].tid == worker_tid ? strlen(worker) : me ? me->full_len : 0;
            CHECK(name && len == want);
        }
        tt__track v24 = {0, 24, 0}, v25 = {0, 25, 1};
        const char *name = tt__track_name(&lt.t, &v24, &len);
        CHECK(same(name, len, "worker-v"));
        CHECK(tt__track_name(&lt.t, &v25, &len) == NULL);
    }
    free_trace(&lt);
    /* A new run's ring takes the kernel's name again: the tid's whole name,
     * which that name does not start, is not shown for it. */
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event(4);
    CHECK_OP(tt_log_stop(), ==, 0);
    if (dump_and_load("tnames2", &lt) == 0) {
        const tt__trace_thread *me = find_thread(&lt.t, (uint32_t)gettid());
        CHECK(me && me->full_name == NULL);
        CHECK(vthread_named(&lt.t, 24, "worker-v")); /* virtual threads' names survive a restart */
    }
    free_trace(&lt);
}

/* A 1.1 reader's view: the same dump labelled 1.1 reads whole, without
 * the thread-name table (1.1's reserved words mean nothing). */
TT_TEST(a_1_1_file_reads_without_thread_names)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_thread_name("named in 1.2 only, long"), ==, 0);
    CHECK_OP(tt_event_name(5, "five"), ==, 0);
    tt_event(5);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("as11", &lt) == 0) {
        CHECK(lt.t.h.thread_names_size > 0);
        tt__trace_header h;
        memcpy(&h, lt.bytes, sizeof h);
        h.version_minor = 1;
        memcpy(lt.bytes, &h, sizeof h);
        tt__trace t;
        CHECK_OP(tt__trace_open(&t, lt.bytes, lt.len), ==, 0);
        CHECK(!t.damaged);
        CHECK_OP(t.ntnames, ==, 0);
        CHECK(name_is(&t, 5, "five"));
        const tt__trace_thread *me = find_thread(&t, (uint32_t)gettid());
        CHECK(me && me->full_name == NULL && strcmp(me->name, "named in 1.2 on") == 0);
        CHECK(me && count_committed(&t, me) == 1);
        tt__trace_close(&t);
    }
    free_trace(&lt);
}

TT_TEST(names_reach_the_dump_each_id_once)
{
    /* Set before the start, renamed, and set while running. */
    CHECK_OP(tt_event_name(10, "first"), ==, 0);
    CHECK_OP(tt_event_name(11, "java.net.HttpURLConnection::getOutputStream"), ==, 0);
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_event_name(10, "renamed"), ==, 0);
    CHECK_OP(tt_event_name(12, "\xce\xbb"), ==, 0);
    tt_event(10);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("names", &lt) == 0) {
        CHECK_OP(lt.t.h.version_minor, ==, 2);
        CHECK(!lt.t.damaged);
        CHECK(name_is(&lt.t, 10, "renamed"));
        CHECK(name_is(&lt.t, 11, "java.net.HttpURLConnection::getOutputStream"));
        CHECK(name_is(&lt.t, 12, "\xce\xbb"));
        size_t len;
        CHECK(tt__trace_name_of(&lt.t, 13, &len) == NULL);
        for (uint32_t i = 1; i < lt.t.nnames; i++)
            CHECK(lt.t.names[i].id > lt.t.names[i - 1].id);
    }
    free_trace(&lt);
    /* Names survive a restart. */
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    if (dump_and_load("names2", &lt) == 0)
        CHECK(name_is(&lt.t, 10, "renamed"));
    free_trace(&lt);
}

TT_TEST(probes_do_nothing_while_stopped)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    CHECK_OP(tt_probe_begin(1), ==, 0);
    CHECK_OP(tt_probe_begin_cpu(1), ==, 0);
    tt_probe_end(1, 0, 0);
    tt_probe_end_cpu(1, 0, 1);
    tt_event_mount(5);
    loaded_trace lt;
    if (dump_and_load("stopped", &lt) == 0) {
        CHECK_OP(lt.t.nsummary, ==, 0);
        const tt__trace_thread *th = find_thread(&lt.t, (uint32_t)gettid());
        CHECK(th == NULL || count_committed(&lt.t, th) == 0);
    }
    free_trace(&lt);
}

/* Calls of probe 20 (every 3rd thrown) and 21, on a thread of its own. */
typedef struct probe_arg {
    uint32_t calls;
    atomic_int *go;
} probe_arg;

static void *prober(void *p)
{
    probe_arg *a = p;
    if (a->go)
        spin_until(a->go);
    for (uint32_t i = 0; i < a->calls; i++) {
        uint64_t t0 = tt_probe_begin(20);
        uint64_t t1 = tt_probe_begin(21);
        tt_probe_end(21, t1, 0);
        tt_probe_end(20, t0, i % 3 == 0);
    }
    return NULL;
}

TT_TEST(summary_counts_every_call_past_the_ring)
{
    /* 16-record rings keep 4 calls per thread; the summary counts all. */
    tt_log_options o = small_log(16, 8);
    CHECK_OP(tt_log_start(&o), ==, 0);
    enum { THREADS = 4, CALLS = 5000 };
    pthread_t th[THREADS];
    probe_arg a = {CALLS, NULL};
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, prober, &a);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL); /* exited: their sums are kept */
    prober(&a);                    /* and one live thread */
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("summary", &lt) == 0) {
        CHECK(lt.t.has_summary);
        CHECK_OP(lt.t.summary_overflow, ==, 0);
        const tt__summary_entry *s20 = sum_of(&lt.t, 20), *s21 = sum_of(&lt.t, 21);
        CHECK(s20 && s21);
        if (s20 && s21) {
            CHECK_OP(s20->sums.calls, ==, (THREADS + 1) * CALLS);
            CHECK_OP(s21->sums.calls, ==, (THREADS + 1) * CALLS);
            CHECK_OP(s20->sums.thrown, ==, (THREADS + 1) * ((CALLS + 2) / 3));
            CHECK_OP(s21->sums.thrown, ==, 0);
            /* The outer call contains the inner one. */
            CHECK(s20->sums.total >= s21->sums.total);
            CHECK(s20->sums.max <= s20->sums.total && s20->sums.max > 0);
            CHECK_OP(s20->sums.cpu_calls + s20->sums.cpu_apart, ==, 0);
        }
        /* The ring's pairs: each end's duration is at most the max, and the
         * thrown bit is on the ends the loop threw from. */
        const tt__trace_thread *me = find_thread(&lt.t, (uint32_t)gettid());
        CHECK(me != NULL);
        tt__trace_event ev;
        uint64_t ends = 0, thrown = 0;
        for (uint64_t k = 0; me && k < me->head - me->first; k++)
            if (tt__trace_event_at(&lt.t, me, k, &ev) && ev.kind == TT__KIND_END && ev.id == 20)
                ends++, thrown += (uint64_t)ev.thrown;
        CHECK(ends > 0 && ends <= 4);
        CHECK(me == NULL || me->overwritten > 0);
        (void)thrown; /* which of the kept calls threw depends on where the ring wrapped */
    }
    free_trace(&lt);
    /* A new run starts from zero. */
    CHECK_OP(tt_log_start(&o), ==, 0);
    probe_arg one = {1, NULL};
    prober(&one);
    CHECK_OP(tt_log_stop(), ==, 0);
    if (dump_and_load("summary2", &lt) == 0) {
        const tt__summary_entry *s20 = sum_of(&lt.t, 20);
        CHECK(s20 && s20->sums.calls == 1 && s20->sums.thrown == 1);
    }
    free_trace(&lt);
}

TT_TEST(thrown_bit_on_ends)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_probe_end(30, tt_probe_begin(30), 1);
    tt_probe_end(30, tt_probe_begin(30), 0);
    tt_probe_end_cpu(31, tt_probe_begin_cpu(31), 1);
    tt_probe_end_cpu(31, tt_probe_begin_cpu(31), 0);
    tt_event_begin(32);
    tt_event_end(32); /* a hand-placed end never claims to have thrown */
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("thrown", &lt) == 0) {
        const tt__trace_thread *me = find_thread(&lt.t, (uint32_t)gettid());
        CHECK(me != NULL);
        tt__trace_event ev;
        char seen[16] = "";
        size_t n = 0;
        for (uint64_t k = 0; me && k < me->head - me->first && n < sizeof seen - 1; k++)
            if (tt__trace_event_at(&lt.t, me, k, &ev) && (ev.kind == TT__KIND_END || ev.kind == TT__KIND_END_CPU)) {
                seen[n++] = ev.thrown ? 'T' : '-';
                /* The thrown bit never leaks into the system CPU time. */
                if (ev.kind == TT__KIND_END_CPU)
                    CHECK(ev.p1 < (UINT64_C(1) << 62));
            }
        CHECK(strcmp(seen, "T-T--") == 0);
    }
    free_trace(&lt);
}

static void burn_cpu(void)
{
    volatile uint64_t x = 0;
    for (int i = 0; i < 2000000; i++)
        x += (uint64_t)i * i;
}

TT_TEST(cpu_probes_attribute_only_their_own_cpu)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = tt_probe_begin_cpu(40);
        burn_cpu();
        tt_probe_end_cpu(40, t0, 0);
    }
    /* Nested: both attributable. */
    uint64_t outer = tt_probe_begin_cpu(41);
    uint64_t inner = tt_probe_begin_cpu(42);
    tt_probe_end_cpu(42, inner, 0);
    tt_probe_end_cpu(41, outer, 0);
    /* A marker between begin and end: the CPU is not that call's. */
    uint64_t t0 = tt_probe_begin_cpu(43);
    tt_event_mount(7);
    tt_event_unmount(7);
    tt_probe_end_cpu(43, t0, 0);
    /* An end whose begin ran elsewhere (another carrier): apart too. */
    tt_probe_end_cpu(44, tt_probe_begin(44), 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("cpu", &lt) == 0) {
        const tt__summary_entry *s;
        CHECK((s = sum_of(&lt.t, 40)) && s->sums.calls == 3 && s->sums.cpu_calls == 3 && s->sums.cpu_apart == 0);
        /* Three loops of ~2 M multiply-adds: well above a microsecond of user time. */
        CHECK(s && s->sums.cpu_user_ns + s->sums.cpu_system_ns > 1000);
        CHECK((s = sum_of(&lt.t, 41)) && s->sums.cpu_calls == 1);
        CHECK((s = sum_of(&lt.t, 42)) && s->sums.cpu_calls == 1);
        CHECK((s = sum_of(&lt.t, 43)) && s->sums.calls == 1 && s->sums.cpu_calls == 0 && s->sums.cpu_apart == 1);
        CHECK((s = sum_of(&lt.t, 44)) && s->sums.calls == 1 && s->sums.cpu_apart == 1);
    }
    free_trace(&lt);
}

/* A virtual thread's call: begun on one carrier, ended on another with the
 * figure its own account gave (tt_probe_end_measured). */
typedef struct measured_end_arg {
    uint64_t t0;
} measured_end_arg;

static void *end_on_other_carrier(void *p)
{
    measured_end_arg *a = p;
    tt_event_mount(9);
    tt_probe_end_measured(60, a->t0, 1234, TT_PROBE_MEASURE_CPU, 1);
    tt_event_unmount(9);
    return NULL;
}

/* Pairs of the walk with their end's kind and figure. */
typedef struct measured_pairs {
    unsigned n, kinds[8];
    int64_t ns[8];
    uint64_t vthread[8];
    int crossed[8];
} measured_pairs;

static void mp_track(void *ctx, const tt__track *tr) { (void)ctx, (void)tr; }
static void mp_open(void *ctx, const tt__track *tr, const tt__step *b) { (void)ctx, (void)tr, (void)b; }
static void mp_event(void *ctx, const tt__track *tr, const tt__step *end, const tt__step *b)
{
    measured_pairs *m = ctx;
    if (!b || m->n == 8 || end->ev.id < 60 || end->ev.id > 64)
        return;
    m->kinds[m->n] = end->ev.kind;
    m->ns[m->n] = -1;
    tt__event_measured(&end->ev, &m->ns[m->n]);
    m->vthread[m->n] = tr->vthread;
    m->crossed[m->n++] = b->thread != end->thread;
}

TT_TEST(measured_ends_count_wherever_the_call_ran)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    measured_end_arg a;
    tt_event_mount(9);
    a.t0 = tt_probe_begin(60);
    tt_event_unmount(9);
    pthread_t th;
    CHECK_OP(pthread_create(&th, NULL, end_on_other_carrier, &a), ==, 0);
    pthread_join(th, NULL);
    /* Markers between begin and end do not matter either. */
    uint64_t t0 = tt_probe_begin(61);
    tt_event_mount(10);
    tt_event_unmount(10);
    tt_probe_end_measured(61, t0, 500, TT_PROBE_MEASURE_CPU, 0);
    tt_probe_end_measured(61, tt_probe_begin(61), 0, TT_PROBE_MEASURE_CPU, 0);
    tt_probe_end_measured(62, tt_probe_begin(62), 700, TT_PROBE_MEASURE_MOUNTED, 0);
    /* No figure: an unreadable account, a measure nobody defined. */
    tt_probe_end_measured(63, tt_probe_begin(63), -1, TT_PROBE_MEASURE_CPU, 0);
    tt_probe_end_measured(63, tt_probe_begin(63), 5, (tt_probe_measure)7, 1);
    /* A begin that recorded nothing ends nothing. */
    tt_probe_end_measured(64, 0, 5, TT_PROBE_MEASURE_CPU, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    /* Stopped: nothing is recorded or counted. */
    tt_probe_end_measured(64, tt_probe_begin(64), 5, TT_PROBE_MEASURE_CPU, 0);
    loaded_trace lt;
    if (dump_and_load("measured", &lt) == 0) {
        const tt__summary_entry *s;
        CHECK((s = sum_of(&lt.t, 60)) && s->sums.calls == 1 && s->sums.thrown == 1 &&
              s->sums.cpu_total_calls == 1 && s->sums.cpu_total_ns == 1234 && s->sums.cpu_apart == 0 &&
              s->sums.cpu_calls == 0 && s->sums.total > 0);
        CHECK((s = sum_of(&lt.t, 61)) && s->sums.calls == 2 && s->sums.cpu_total_calls == 2 &&
              s->sums.cpu_total_ns == 500 && s->sums.cpu_apart == 0 && s->sums.thrown == 0);
        CHECK((s = sum_of(&lt.t, 62)) && s->sums.calls == 1 && s->sums.mounted_calls == 1 &&
              s->sums.mounted_ns == 700 && s->sums.cpu_total_calls == 0);
        CHECK((s = sum_of(&lt.t, 63)) && s->sums.calls == 2 && s->sums.cpu_apart == 2 &&
              s->sums.cpu_total_calls == 0 && s->sums.mounted_calls == 0 && s->sums.thrown == 1);
        CHECK(sum_of(&lt.t, 64) == NULL);
        /* The trace model pairs each measured end with its begin, the first
         * on virtual thread 9's track across two OS threads. */
        measured_pairs m = {0};
        const tt__walk_ops ops = {mp_track, mp_event, NULL, mp_open};
        CHECK_OP(tt__trace_walk(&lt.t, &ops, &m), ==, 0);
        CHECK_OP(m.n, ==, 6);
        int found_vthread = 0;
        for (unsigned i = 0; i < m.n; i++) {
            CHECK(m.kinds[i] == TT__KIND_END_CPU_TOTAL || m.kinds[i] == TT__KIND_END_MOUNTED);
            if (m.vthread[i] == 9) {
                found_vthread = 1;
                CHECK(m.crossed[i] && m.ns[i] == 1234);
            }
        }
        CHECK(found_vthread);
        /* The thrown bit never leaks into the figure or its payload. */
        const tt__trace_thread *me = find_thread(&lt.t, (uint32_t)gettid());
        tt__trace_event ev;
        unsigned thrown = 0, mounted = 0;
        for (uint64_t k = 0; me && k < me->head - me->first; k++) {
            if (!tt__trace_event_at(&lt.t, me, k, &ev) || !tt__kind_is_measured(ev.kind))
                continue;
            thrown += (unsigned)ev.thrown;
            mounted += ev.kind == TT__KIND_END_MOUNTED;
            CHECK_OP(ev.p1, ==, 0);
        }
        CHECK_OP(thrown, ==, 1);
        CHECK_OP(mounted, ==, 1);
    }
    free_trace(&lt);
}

TT_TEST(mount_markers_carry_the_virtual_thread)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_mount(UINT64_C(0x123456789));
    tt_event(50);
    tt_event_unmount(UINT64_C(0x123456789));
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("mount", &lt) == 0) {
        const tt__trace_thread *me = find_thread(&lt.t, (uint32_t)gettid());
        tt__trace_event ev;
        unsigned kinds[3] = {0, 0, 0};
        uint64_t v[3] = {0, 0, 0};
        for (uint64_t k = 0, n = 0; me && k < me->head - me->first && n < 3; k++)
            if (tt__trace_event_at(&lt.t, me, k, &ev))
                kinds[n] = ev.kind, v[n++] = ev.p0;
        CHECK_OP(kinds[0], ==, TT__KIND_MOUNT);
        CHECK_OP(kinds[1], ==, TT__KIND_INSTANT);
        CHECK_OP(kinds[2], ==, TT__KIND_UNMOUNT);
        CHECK(v[0] == UINT64_C(0x123456789) && v[2] == UINT64_C(0x123456789));
    }
    free_trace(&lt);
}

TT_TEST(ids_beyond_a_thread_table_are_counted)
{
    tt_log_options o = small_log(16, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    enum { EXTRA = 10, CALLS = 3 };
    for (int c = 0; c < CALLS; c++)
        for (uint32_t id = 1000; id < 1000 + TT_PROBE_IDS_PER_THREAD + EXTRA; id++)
            tt_probe_end(id, tt_probe_begin(id), 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    loaded_trace lt;
    if (dump_and_load("overflow", &lt) == 0) {
        CHECK_OP(lt.t.nsummary, ==, TT_PROBE_IDS_PER_THREAD);
        CHECK_OP(lt.t.summary_overflow, ==, EXTRA * CALLS);
        for (uint32_t i = 0; i < lt.t.nsummary; i++)
            CHECK_OP(lt.t.summary[i].sums.calls, ==, CALLS);
    }
    free_trace(&lt);
}

/* Dumps taken while threads probe: calls never go down from one dump to the
 * next, and the last dump, after the threads finished, is exact. */
TT_TEST(dumps_while_probing)
{
    tt_log_options o = small_log(256, 8);
    CHECK_OP(tt_log_start(&o), ==, 0);
    enum { THREADS = 3, CALLS = 20000 };
    atomic_int go = 0;
    probe_arg a = {CALLS, &go};
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, prober, &a);
    atomic_store(&go, 1);
    uint64_t last = 0;
    int backwards = 0;
    for (int d = 0; d < 5; d++) {
        loaded_trace lt;
        if (dump_and_load("live", &lt) == 0) {
            const tt__summary_entry *s = sum_of(&lt.t, 21);
            uint64_t calls = s ? s->sums.calls : 0;
            backwards += calls < last;
            last = calls;
        }
        free_trace(&lt);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_OP(backwards, ==, 0);
    loaded_trace lt;
    if (dump_and_load("live_end", &lt) == 0) {
        const tt__summary_entry *s = sum_of(&lt.t, 21);
        CHECK(s && s->sums.calls == (uint64_t)THREADS * CALLS);
    }
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* A signal handler that probes the same ids while the thread is inside a
 * probe: no call is lost or counted twice. */
static atomic_long g_handler_calls;
static void on_signal(int sig)
{
    (void)sig;
    tt_probe_end(21, tt_probe_begin(21), 0);
    tt_probe_end(60, tt_probe_begin(60), 1);
    atomic_fetch_add(&g_handler_calls, 1);
}

typedef struct signaller_arg {
    pid_t tid;
    atomic_int *stop;
} signaller_arg;

static void *signaller(void *p)
{
    signaller_arg *a = p;
    while (!atomic_load(a->stop)) {
        syscall(SYS_tgkill, getpid(), a->tid, SIGUSR1);
        sched_yield();
    }
    return NULL;
}

TT_TEST(signal_handlers_probe_safely)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGUSR1, &sa, NULL);
    atomic_store(&g_handler_calls, 0);
    atomic_int stop = 0;
    signaller_arg sa_arg = {gettid(), &stop};
    pthread_t sig_thread;
    pthread_create(&sig_thread, NULL, signaller, &sa_arg);
    enum { CALLS = 200000 };
    /* Wait until the handler has run a few times, however the threads are
     * scheduled, then keep probing through more signals. */
    uint32_t done = 0;
    while (atomic_load(&g_handler_calls) < 50 || done < CALLS) {
        prober(&(probe_arg){1000, NULL});
        done += 1000;
    }
    atomic_store(&stop, 1);
    pthread_join(sig_thread, NULL);
    signal(SIGUSR1, SIG_DFL);
    CHECK_OP(tt_log_stop(), ==, 0);
    long handled = atomic_load(&g_handler_calls);
    loaded_trace lt;
    if (dump_and_load("signal", &lt) == 0) {
        const tt__summary_entry *s21 = sum_of(&lt.t, 21), *s60 = sum_of(&lt.t, 60);
        CHECK(s21 && s60);
        if (s21 && s60) {
            CHECK_OP(s21->sums.calls, ==, (uint64_t)done + (uint64_t)handled);
            CHECK_OP(s60->sums.calls, ==, handled);
            CHECK_OP(s60->sums.thrown, ==, handled);
        }
    }
    free_trace(&lt);
}

TT_TEST(crash_file_carries_names)
{
    char path[256];
    temp_path(path, sizeof path, "crashnames");
    CHECK_OP(tt_event_name(70, "before start"), ==, 0);
    CHECK_OP(tt_log_vthread_name(90, "vthread named before start"), ==, 0);
    tt_log_options o = small_log(16, 2);
    o.crash_file = path;
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_event_name(71, "while running"), ==, 0);
    CHECK_OP(tt_event_name(70, "renamed"), ==, 0);
    CHECK_OP(tt_log_thread_name("crash-main, a name longer than fifteen bytes"), ==, 0);
    CHECK_OP(tt_log_vthread_name(91, "worker-v"), ==, 0);
    CHECK_OP(tt_log_vthread_name(90, "renamed vthread"), ==, 0);
    tt_probe_end(70, tt_probe_begin(70), 0);
    /* Read the file as a crash leaves it: no stop, no end anchor. */
    loaded_trace lt;
    if (load_trace(path, &lt) == 0) {
        CHECK(!lt.t.damaged);
        CHECK(name_is(&lt.t, 70, "renamed"));
        CHECK(name_is(&lt.t, 71, "while running"));
        CHECK(!lt.t.has_summary); /* the sums live in memory, not in the file */
        CHECK(thread_named(&lt.t, (uint32_t)gettid(), "crash-main, a name longer than fifteen bytes"));
        CHECK(vthread_named(&lt.t, 91, "worker-v"));
        CHECK(vthread_named(&lt.t, 90, "renamed vthread")); /* the later entry wins */
        CHECK_OP(lt.t.h.thread_names_dropped, ==, 0);
    }
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
    unlink(path);
}

TT_TEST_MAIN()
