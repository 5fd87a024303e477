/* threadtime dump: a trace file (a dump, or a crash-safe file after the
 * process died) as text, CSV, JSON or Chrome trace JSON.
 *
 * Times are CLOCK_MONOTONIC_RAW ns rebased to the trace's start anchor.
 * Numbers are formatted by hand: printf would dominate the Chrome output of
 * a 10-million-event trace, and fixed decimals must never turn into
 * scientific notation. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "event_internal.h"
#include "threadtime/threadtime.h"

int tt_cli_dump(int argc, char **argv);
int tt_cli_run_dump(int argc, char **argv);

enum format { FMT_TEXT, FMT_CSV, FMT_JSON, FMT_CHROME };

/* ---- output with hand-made number formatting ---- */

typedef struct sink {
    FILE *f;
    char buf[1 << 16];
    size_t used;
} sink;

static void flush(sink *s)
{
    fwrite(s->buf, 1, s->used, s->f);
    s->used = 0;
}

static void put(sink *s, const char *p, size_t n)
{
    if (s->used + n > sizeof s->buf) {
        flush(s);
        if (n > sizeof s->buf) {
            fwrite(p, 1, n, s->f);
            return;
        }
    }
    memcpy(s->buf + s->used, p, n);
    s->used += n;
}

static void puts_(sink *s, const char *p) { put(s, p, strlen(p)); }

static void put_u64(sink *s, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(s, tmp + i, sizeof tmp - (size_t)i);
}

static void put_i64(sink *s, int64_t v)
{
    if (v < 0) {
        put(s, "-", 1);
        put_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(s, (uint64_t)v);
    }
}

/* ns as microseconds with exactly three decimals: 1234567 -> 1234.567. */
static void put_us(sink *s, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        put(s, "-", 1);
    put_u64(s, a / 1000);
    char frac[4] = {'.', (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10)};
    put(s, frac, 4);
}

/* A JSON string: quotes, backslashes and control bytes escaped. utf8: the
 * bytes are valid UTF-8 (a name: the reader checked it) and stay as they
 * are; else bytes above 0x7e are written as \u00XX, so that any text
 * yields valid JSON. */
static void put_json_bytes(sink *s, const char *p, size_t n, int utf8)
{
    static const char hex[] = "0123456789abcdef";
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(s, e, 2);
        } else if (c < 0x20 || c == 0x7f || (c > 0x7f && !utf8)) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(s, e, 6);
        } else {
            put(s, (const char *)&c, 1);
        }
    }
    put(s, "\"", 1);
}

static void put_json_str(sink *s, const char *p, size_t n) { put_json_bytes(s, p, n, 0); }
static void put_json_utf8(sink *s, const char *p, size_t n) { put_json_bytes(s, p, n, 1); }

/* A CSV field: quoted when it holds a comma, quote or line break. */
static void put_csv_str(sink *s, const char *p, size_t n)
{
    if (!memchr(p, ',', n) && !memchr(p, '"', n) && !memchr(p, '\n', n) && !memchr(p, '\r', n)) {
        put(s, p, n);
        return;
    }
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"')
            put(s, "\"", 1);
        put(s, p + i, 1);
    }
    put(s, "\"", 1);
}

/* Text for the text format: printable ASCII kept, other bytes as \xNN. */
static void put_plain_str(sink *s, const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            put(s, e, 4);
        } else {
            put(s, (const char *)&c, 1);
        }
    }
}

/* ---- shared helpers ---- */

static const char *source_name(unsigned source)
{
    switch (source) {
    case TT__TRACE_SOURCE_TSC: return "tsc";
    case TT__TRACE_SOURCE_CNTVCT: return "cntvct";
    default: return "monotonic_raw";
    }
}

static const char *state_name(unsigned state) { return state == TT__RING_EXITED ? "exited" : "live"; }

static int is_cpu(unsigned kind) { return kind == TT__KIND_BEGIN_CPU || kind == TT__KIND_END_CPU; }
static int is_begin(unsigned kind) { return kind == TT__KIND_BEGIN || kind == TT__KIND_BEGIN_CPU; }
static int is_end(unsigned kind) { return kind == TT__KIND_END || kind == TT__KIND_END_CPU; }

static int is_marker(unsigned kind) { return kind == TT__KIND_MOUNT || kind == TT__KIND_UNMOUNT; }

/* Tracks of virtual threads in Chrome output get tids above the kernel's
 * largest (PID_MAX_LIMIT, 2^22), so they never collide with a real one. */
#define VTHREAD_TID_BASE 4194304u

/* a - b without signed overflow: a damaged file can hold any times. */
static int64_t diff_ns(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

static int64_t rebase(const tt__trace *t, const tt__trace_event *ev) { return diff_ns(ev->ns, t->h.anchors[0].mono_ns); }

/* ---- text ---- */

static void text_header(sink *s, const tt__trace *t, uint64_t events)
{
    char line[512];
    const tt__trace_header *h = &t->h;
    time_t sec = (time_t)(h->anchors[0].real_ns / 1000000000);
    struct tm tm;
    char when[64] = "?";
    if (gmtime_r(&sec, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(line, sizeof line,
             "threadtime trace %u.%u  pid %u  source %s", h->version_major, h->version_minor, h->pid,
             source_name(h->source));
    puts_(s, line);
    if (h->source != TT__TRACE_SOURCE_MONOTONIC_RAW) {
        snprintf(line, sizeof line, "  %.6f MHz calibrated  %s", h->counter_hz / 1e6,
                 (h->flags & TT__TRACE_END_ANCHOR) ? "interpolated between start and end anchors"
                                                   : "extrapolated from the start anchor (no end anchor)");
        puts_(s, line);
    }
    snprintf(line, sizeof line,
             "\nstarted %s.%09lldZ  threads %u  events %llu  threads without a ring %u  rings recycled %u\n",
             when, (long long)(h->anchors[0].real_ns % 1000000000), t->nthreads, (unsigned long long)events,
             h->threads_dropped, h->rings_recycled);
    puts_(s, line);
    if (t->nnames || h->names_dropped) {
        snprintf(line, sizeof line, "names %u", t->nnames);
        puts_(s, line);
        if (h->names_dropped) {
            snprintf(line, sizeof line, "  (%u more did not fit in the crash file)", h->names_dropped);
            puts_(s, line);
        }
        puts_(s, "\n");
    }
}

static void text_event(sink *s, const tt__trace *t, const tt__trace_event *ev, int64_t delta, uint64_t vthread)
{
    char line[96];
    snprintf(line, sizeof line, "  %10llu %15lld %12lld  %-9s %10u", (unsigned long long)ev->index,
             (long long)rebase(t, ev), (long long)delta, tt__trace_kind_name(ev->kind), ev->id);
    puts_(s, line);
    size_t name_len;
    const char *name = tt__trace_name_of(t, ev->id, &name_len);
    if (name && !is_marker(ev->kind)) {
        puts_(s, "  [");
        put(s, name, name_len);
        puts_(s, "]");
    }
    if (vthread) {
        puts_(s, "  vthread=");
        put_u64(s, vthread);
    }
    if (ev->kind == TT__KIND_VALUE) {
        puts_(s, "  value=");
        put_u64(s, ev->p0);
    } else if (is_cpu(ev->kind) && (int64_t)ev->p0 >= 0) {
        puts_(s, "  cpu_user_ns=");
        put_u64(s, ev->p0);
        puts_(s, " cpu_system_ns=");
        put_u64(s, ev->p1);
    } else if (ev->text) {
        puts_(s, "  \"");
        put_plain_str(s, ev->text, ev->text_len);
        puts_(s, "\"");
    } else if (ev->kind == TT__KIND_LITERAL) {
        puts_(s, "  (literal text not in this file)");
    }
    if (ev->thrown)
        puts_(s, "  thrown");
    puts_(s, "\n");
}

/* ---- begin/end pairing on one track (a thread, or a virtual thread) ---- */

typedef struct open_interval {
    tt__trace_event ev;
    int64_t ns;       /* rebased */
    uint32_t thread;  /* OS thread (index) the begin ran on */
    uint64_t markers; /* that thread's mount/unmount markers before the begin */
} open_interval;

typedef struct pairer {
    open_interval *stack;
    size_t depth, cap;
} pairer;

static void pair_begin(pairer *p, const tt__trace_event *ev, int64_t ns, uint32_t thread, uint64_t markers)
{
    if (p->depth == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        open_interval *st = realloc(p->stack, cap * sizeof *st);
        if (!st)
            return; /* out of memory: this interval shows up as an unmatched end */
        p->stack = st;
        p->cap = cap;
    }
    p->stack[p->depth++] = (open_interval){*ev, ns, thread, markers};
}

/* The latest open begin with end's id, taken off the stack into *b; 0 if
 * there is none. */
static int pair_end(pairer *p, const tt__trace_event *end, open_interval *b)
{
    size_t k = p->depth;
    while (k > 0 && p->stack[k - 1].ev.id != end->id)
        k--;
    if (k == 0)
        return 0;
    *b = p->stack[k - 1];
    memmove(&p->stack[k - 1], &p->stack[k], (p->depth - k) * sizeof *p->stack);
    p->depth--;
    return 1;
}

/* The CPU a begin_cpu/end_cpu pair spent, if it is the interval's own: both
 * stamps read, on one OS thread, with no mount or unmount between them. */
static int pair_cpu(const open_interval *b, const tt__trace_event *end, uint32_t thread, uint64_t markers,
                    int64_t *user, int64_t *sys)
{
    if (!is_cpu(b->ev.kind) || !is_cpu(end->kind) || (int64_t)b->ev.p0 < 0 || (int64_t)end->p0 < 0 ||
        b->thread != thread || b->markers != markers)
        return 0;
    *user = (int64_t)(end->p0 - b->ev.p0);
    *sys = (int64_t)(end->p1 - b->ev.p1);
    return 1;
}

/* ---- virtual threads: the stretches between mount(v) and unmount(v) ---- */

/* An event some carrier recorded for virtual thread v. */
typedef struct vref {
    uint64_t v;
    int64_t ns;
    uint32_t thread;
    uint64_t k;       /* the event's position in its thread */
    uint64_t markers; /* the carrier's markers before it */
} vref;

typedef struct vindex {
    vref *refs;
    size_t n, cap;
    uint64_t *ids;    /* distinct virtual threads, ascending */
    size_t nids;
} vindex;

/* Walks one OS thread's events, telling each which virtual thread owns it
 * (0: the thread itself; a marker is its carrier's) and how many markers
 * came before it. */
typedef struct owner_walk {
    uint64_t current, markers;
} owner_walk;

static uint64_t owner_step(owner_walk *w, const tt__trace_event *ev, uint64_t *markers)
{
    if (ev->kind == TT__KIND_MOUNT) {
        w->current = ev->p0;
        w->markers++;
    } else if (ev->kind == TT__KIND_UNMOUNT) {
        w->current = 0;
        w->markers++;
    }
    *markers = w->markers;
    return is_marker(ev->kind) ? 0 : w->current;
}

static int vref_order(const void *a, const void *b)
{
    const vref *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Calls fn for every committed event of every thread, with the virtual
 * thread that owns it (0: the thread itself) and the markers before it. */
typedef void (*owned_fn)(void *ctx, uint32_t thread, uint64_t k, const tt__trace_event *ev, uint64_t owner,
                         uint64_t markers);

static void for_each_owned(const tt__trace *t, owned_fn fn, void *ctx)
{
    tt__trace_event ev;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        const tt__trace_thread *th = &t->threads[i];
        owner_walk w = {0, 0};
        for (uint64_t k = 0; k < th->head - th->first; k++) {
            uint64_t markers;
            if (!tt__trace_event_at(t, th, k, &ev))
                continue;
            uint64_t v = owner_step(&w, &ev, &markers);
            fn(ctx, i, k, &ev, v, markers);
        }
    }
}

typedef struct vindex_ctx {
    vindex *vi;
    const tt__trace *t;
    int err;
} vindex_ctx;

static void vindex_add(void *ctx, uint32_t thread, uint64_t k, const tt__trace_event *ev, uint64_t v,
                       uint64_t markers)
{
    vindex_ctx *c = ctx;
    vindex *vi = c->vi;
    if (!v || c->err)
        return;
    if (vi->n == vi->cap) {
        size_t cap = vi->cap ? vi->cap * 2 : 256;
        vref *r = realloc(vi->refs, cap * sizeof *r);
        if (!r) {
            c->err = -ENOMEM;
            return;
        }
        vi->refs = r;
        vi->cap = cap;
    }
    vi->refs[vi->n++] = (vref){v, rebase(c->t, ev), thread, k, markers};
}

/* Every event that belongs to a virtual thread, in (v, time) order.
 * Returns 0 or -ENOMEM. */
static int vindex_build(vindex *vi, const tt__trace *t)
{
    memset(vi, 0, sizeof *vi);
    vindex_ctx c = {vi, t, 0};
    for_each_owned(t, vindex_add, &c);
    if (c.err)
        return c.err;
    if (vi->n)
        qsort(vi->refs, vi->n, sizeof *vi->refs, vref_order);
    for (size_t j = 0; j < vi->n; j++)
        vi->nids += j == 0 || vi->refs[j].v != vi->refs[j - 1].v;
    vi->ids = malloc((vi->nids ? vi->nids : 1) * sizeof *vi->ids);
    if (!vi->ids)
        return -ENOMEM;
    for (size_t j = 0, n = 0; j < vi->n; j++)
        if (j == 0 || vi->refs[j].v != vi->refs[j - 1].v)
            vi->ids[n++] = vi->refs[j].v;
    return 0;
}

static void vindex_free(vindex *vi)
{
    free(vi->refs);
    free(vi->ids);
}

/* The Chrome tid of virtual thread v. */
static uint64_t vthread_tid(const vindex *vi, uint64_t v)
{
    size_t lo = 0, hi = vi->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vi->ids[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return VTHREAD_TID_BASE + lo;
}

/* ---- one pass over every thread's events, shared by all formats ---- */

typedef struct emitter {
    enum format fmt;
    sink *s;
    const tt__trace *t;
    int first; /* JSON: no comma before the next element */
    pairer pairs;
    vindex vi;
} emitter;

static void comma(emitter *e)
{
    if (!e->first)
        put(e->s, ",\n", 2);
    e->first = 0;
}

static void chrome_common(emitter *e, const char *ph, uint64_t tid, int64_t ns)
{
    puts_(e->s, "{\"ph\":\"");
    puts_(e->s, ph);
    puts_(e->s, "\",\"pid\":");
    put_u64(e->s, e->t->h.pid);
    puts_(e->s, ",\"tid\":");
    put_u64(e->s, tid);
    puts_(e->s, ",\"ts\":");
    put_us(e->s, ns);
}

/* The slice's name: the event's text, else the id's name, else "<what> <id>". */
static void chrome_name(emitter *e, const tt__trace_event *ev, const char *what)
{
    size_t len;
    const char *name = tt__trace_name_of(e->t, ev->id, &len);
    puts_(e->s, ",\"name\":");
    if (ev->text) {
        put_json_str(e->s, ev->text, ev->text_len);
    } else if (name) {
        put_json_utf8(e->s, name, len);
    } else {
        char n[48];
        int l = snprintf(n, sizeof n, "%s %u", what, ev->id);
        put_json_str(e->s, n, (size_t)l);
    }
}

/* The args every event carries: its id, and its name when a text took the
 * slice's name. */
static void chrome_args(emitter *e, const tt__trace_event *ev)
{
    size_t len;
    const char *name = tt__trace_name_of(e->t, ev->id, &len);
    puts_(e->s, ",\"args\":{\"id\":");
    put_u64(e->s, ev->id);
    if (name && ev->text) {
        puts_(e->s, ",\"event\":");
        put_json_utf8(e->s, name, len);
    }
}

/* One event of a track: begins wait for their end, an end closes the
 * latest open begin of its id into a complete ("X") event. */
static void chrome_event(emitter *e, uint64_t tid, const tt__trace_event *ev, uint32_t thread, uint64_t markers)
{
    int64_t ns = rebase(e->t, ev);
    if (is_begin(ev->kind)) {
        pair_begin(&e->pairs, ev, ns, thread, markers);
        return;
    }
    comma(e);
    open_interval b;
    if (is_end(ev->kind) && pair_end(&e->pairs, ev, &b)) {
        chrome_common(e, "X", tid, b.ns);
        puts_(e->s, ",\"dur\":");
        put_us(e->s, diff_ns(ns, b.ns));
        chrome_name(e, &b.ev, "interval");
        chrome_args(e, &b.ev);
        int64_t user, sys;
        if (pair_cpu(&b, ev, thread, markers, &user, &sys)) {
            puts_(e->s, ",\"cpu_user_ns\":");
            put_i64(e->s, user);
            puts_(e->s, ",\"cpu_system_ns\":");
            put_i64(e->s, sys);
            puts_(e->s, ",\"cpu_total_ns\":");
            put_i64(e->s, user + sys);
        }
        if (b.thread != thread)
            puts_(e->s, ",\"carriers\":2");
        if (ev->thrown)
            puts_(e->s, ",\"thrown\":true");
        puts_(e->s, "}}");
        return;
    }
    chrome_common(e, "i", tid, ns);
    chrome_name(e, ev, is_end(ev->kind) ? "end without begin" : "event");
    puts_(e->s, ",\"s\":\"t\"");
    chrome_args(e, ev);
    if (ev->kind == TT__KIND_VALUE) {
        puts_(e->s, ",\"value\":");
        put_u64(e->s, ev->p0);
    }
    puts_(e->s, "}}");
}

/* Intervals still open at the end of a track: Perfetto draws "B" events
 * to the end of the trace. */
static void chrome_open_intervals(emitter *e, uint64_t tid)
{
    for (size_t k = 0; k < e->pairs.depth; k++) {
        comma(e);
        chrome_common(e, "B", tid, e->pairs.stack[k].ns);
        chrome_name(e, &e->pairs.stack[k].ev, "interval");
        chrome_args(e, &e->pairs.stack[k].ev);
        puts_(e->s, "}}");
    }
    e->pairs.depth = 0;
}

static void chrome_thread_name(emitter *e, uint64_t tid, const char *name, size_t len)
{
    comma(e);
    puts_(e->s, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    put_u64(e->s, e->t->h.pid);
    puts_(e->s, ",\"tid\":");
    put_u64(e->s, tid);
    puts_(e->s, ",\"args\":{\"name\":");
    put_json_str(e->s, name, len);
    puts_(e->s, "}}");
}

/* A carrier's stretch of running virtual thread v, on the carrier's track. */
static void chrome_mounted(emitter *e, const tt__trace_thread *th, const char *ph, uint64_t v, int64_t from,
                           int64_t to)
{
    char name[48];
    int len = snprintf(name, sizeof name, "vthread %llu", (unsigned long long)v);
    comma(e);
    chrome_common(e, ph, th->tid, from);
    if (ph[0] == 'X') {
        puts_(e->s, ",\"dur\":");
        put_us(e->s, diff_ns(to, from));
    } else if (ph[0] == 'i') {
        puts_(e->s, ",\"s\":\"t\"");
    }
    puts_(e->s, ",\"name\":");
    put_json_str(e->s, name, (size_t)len);
    puts_(e->s, ",\"args\":{\"vthread\":");
    put_u64(e->s, v);
    puts_(e->s, "}}");
}

/* A thread's own events; those of the virtual threads it carried go to
 * their tracks (chrome_vthreads), their stretches show as slices here. */
static void chrome_thread(emitter *e, uint32_t i)
{
    const tt__trace_thread *th = &e->t->threads[i];
    chrome_thread_name(e, th->tid, th->name, strlen(th->name));
    owner_walk w = {0, 0};
    uint64_t mounted = 0;
    int64_t mounted_at = 0;
    tt__trace_event ev;
    for (uint64_t k = 0; k < th->head - th->first; k++) {
        uint64_t markers;
        if (!tt__trace_event_at(e->t, th, k, &ev))
            continue;
        if (owner_step(&w, &ev, &markers))
            continue;
        if (!is_marker(ev.kind)) {
            chrome_event(e, th->tid, &ev, i, markers);
            continue;
        }
        int64_t ns = rebase(e->t, &ev);
        if (mounted)
            chrome_mounted(e, th, "X", mounted, mounted_at, ns);
        else if (ev.kind == TT__KIND_UNMOUNT)
            chrome_mounted(e, th, "i", ev.p0, ns, ns); /* its mount was overwritten */
        mounted = ev.kind == TT__KIND_MOUNT ? ev.p0 : 0;
        mounted_at = ns;
    }
    if (mounted)
        chrome_mounted(e, th, "B", mounted, mounted_at, mounted_at);
    chrome_open_intervals(e, th->tid);
}

/* Each virtual thread's track: its events from every carrier in time
 * order, so a begin on one carrier pairs with its end on another. */
static void chrome_vthreads(emitter *e)
{
    const vindex *vi = &e->vi;
    tt__trace_event ev;
    for (size_t j = 0; j < vi->n; j++) {
        const vref *r = &vi->refs[j];
        uint64_t tid = vthread_tid(vi, r->v);
        if (j == 0 || r->v != vi->refs[j - 1].v) {
            char name[48];
            int len = snprintf(name, sizeof name, "vthread %llu", (unsigned long long)r->v);
            chrome_thread_name(e, tid, name, (size_t)len);
        }
        const tt__trace_thread *th = &e->t->threads[r->thread];
        if (tt__trace_event_at(e->t, th, r->k, &ev))
            chrome_event(e, tid, &ev, r->thread, r->markers);
        if (j + 1 == vi->n || vi->refs[j + 1].v != r->v)
            chrome_open_intervals(e, tid);
    }
}

static void csv_event(emitter *e, const tt__trace_thread *th, const tt__trace_event *ev, int64_t delta,
                      uint64_t vthread)
{
    sink *s = e->s;
    put_u64(s, th->tid);
    put(s, ",", 1);
    put_csv_str(s, th->name, strlen(th->name));
    put(s, ",", 1);
    if (vthread)
        put_u64(s, vthread);
    put(s, ",", 1);
    put_u64(s, ev->index);
    put(s, ",", 1);
    put_i64(s, rebase(e->t, ev));
    put(s, ",", 1);
    put_i64(s, delta);
    put(s, ",", 1);
    puts_(s, tt__trace_kind_name(ev->kind));
    put(s, ",", 1);
    put_u64(s, ev->id);
    put(s, ",", 1);
    size_t len;
    const char *name = tt__trace_name_of(e->t, ev->id, &len);
    if (name && !is_marker(ev->kind))
        put_csv_str(s, name, len);
    put(s, ",", 1);
    if (ev->kind == TT__KIND_VALUE)
        put_u64(s, ev->p0);
    put(s, ",", 1);
    if (ev->text)
        put_csv_str(s, ev->text, ev->text_len);
    put(s, ",", 1);
    if (is_cpu(ev->kind) && (int64_t)ev->p0 >= 0)
        put_u64(s, ev->p0);
    put(s, ",", 1);
    if (is_cpu(ev->kind) && (int64_t)ev->p0 >= 0)
        put_u64(s, ev->p1);
    put(s, ",", 1);
    if (ev->thrown)
        put(s, "1", 1);
    put(s, "\n", 1);
}

static void json_event(emitter *e, const tt__trace_event *ev, int64_t delta, uint64_t vthread)
{
    sink *s = e->s;
    comma(e);
    puts_(s, "{\"index\":");
    put_u64(s, ev->index);
    puts_(s, ",\"t_ns\":");
    put_i64(s, rebase(e->t, ev));
    puts_(s, ",\"delta_ns\":");
    put_i64(s, delta);
    puts_(s, ",\"kind\":\"");
    puts_(s, tt__trace_kind_name(ev->kind));
    puts_(s, "\",\"id\":");
    put_u64(s, ev->id);
    size_t len;
    const char *name = tt__trace_name_of(e->t, ev->id, &len);
    if (name && !is_marker(ev->kind)) {
        puts_(s, ",\"name\":");
        put_json_utf8(s, name, len);
    }
    if (vthread) {
        puts_(s, ",\"vthread\":");
        put_u64(s, vthread);
    }
    if (ev->kind == TT__KIND_VALUE) {
        puts_(s, ",\"value\":");
        put_u64(s, ev->p0);
    }
    if (ev->text) {
        puts_(s, ",\"text\":");
        put_json_str(s, ev->text, ev->text_len);
    }
    if (is_cpu(ev->kind) && (int64_t)ev->p0 >= 0) {
        puts_(s, ",\"cpu_user_ns\":");
        put_u64(s, ev->p0);
        puts_(s, ",\"cpu_system_ns\":");
        put_u64(s, ev->p1);
    }
    if (ev->thrown)
        puts_(s, ",\"thrown\":true");
    puts_(s, "}");
}

static void thread_start(emitter *e, const tt__trace_thread *th, uint64_t events, uint64_t missing)
{
    sink *s = e->s;
    char line[256];
    switch (e->fmt) {
    case FMT_TEXT:
        puts_(s, "\nthread ");
        put_u64(s, th->tid);
        puts_(s, " \"");
        put_plain_str(s, th->name, strlen(th->name));
        snprintf(line, sizeof line, "\" (%s): %llu events, %llu overwritten, %llu incomplete\n",
                 state_name(th->state), (unsigned long long)events, (unsigned long long)th->overwritten,
                 (unsigned long long)missing);
        puts_(s, line);
        puts_(s, "       index            t_ns     delta_ns  kind              id  data\n");
        break;
    case FMT_JSON:
        comma(e);
        puts_(s, "{\"tid\":");
        put_u64(s, th->tid);
        puts_(s, ",\"name\":");
        put_json_str(s, th->name, strlen(th->name));
        puts_(s, ",\"state\":\"");
        puts_(s, state_name(th->state));
        puts_(s, "\",\"overwritten\":");
        put_u64(s, th->overwritten);
        puts_(s, ",\"incomplete\":");
        put_u64(s, missing);
        puts_(s, ",\"events\":[\n");
        e->first = 1;
        break;
    case FMT_CHROME:
    case FMT_CSV:
        break;
    }
}

/* Counts the committed events of th (the text header needs totals first). */
static uint64_t count_events(const tt__trace *t, const tt__trace_thread *th)
{
    tt__trace_event ev;
    uint64_t n = 0;
    for (uint64_t k = 0; k < th->head - th->first; k++)
        n += (uint64_t)tt__trace_event_at(t, th, k, &ev);
    return n;
}

/* Text, CSV, JSON: a thread's events in its own order, each saying which
 * virtual thread it belongs to. */
static void emit_thread(emitter *e, const tt__trace_thread *th)
{
    uint64_t total = th->head - th->first;
    uint64_t events = e->fmt == FMT_CSV ? 0 : count_events(e->t, th);
    thread_start(e, th, events, total - events);
    int64_t prev = 0;
    int have_prev = 0;
    owner_walk w = {0, 0};
    tt__trace_event ev;
    for (uint64_t k = 0; k < total; k++) {
        if (!tt__trace_event_at(e->t, th, k, &ev))
            continue;
        uint64_t markers, v = owner_step(&w, &ev, &markers);
        if (is_marker(ev.kind))
            v = ev.p0;
        int64_t delta = have_prev ? diff_ns(ev.ns, prev) : 0;
        prev = ev.ns;
        have_prev = 1;
        switch (e->fmt) {
        case FMT_TEXT: text_event(e->s, e->t, &ev, delta, v); break;
        case FMT_CSV: csv_event(e, th, &ev, delta, v); break;
        case FMT_JSON: json_event(e, &ev, delta, v); break;
        case FMT_CHROME: break;
        }
    }
    if (e->fmt == FMT_JSON) {
        puts_(e->s, "]}");
        e->first = 0;
    }
}

static void json_names(emitter *e)
{
    sink *s = e->s;
    puts_(s, ",\"names\":{");
    for (uint32_t i = 0; i < e->t->nnames; i++) {
        const tt__trace_name *n = &e->t->names[i];
        if (i)
            puts_(s, ",");
        puts_(s, "\"");
        put_u64(s, n->id);
        puts_(s, "\":");
        put_json_utf8(s, n->text, n->len);
    }
    puts_(s, "}");
}

static int emit(emitter *e)
{
    const tt__trace *t = e->t;
    sink *s = e->s;
    uint64_t events = 0;
    switch (e->fmt) {
    case FMT_TEXT:
        for (uint32_t i = 0; i < t->nthreads; i++)
            events += count_events(t, &t->threads[i]);
        text_header(s, t, events);
        break;
    case FMT_CSV:
        puts_(s, "tid,thread,vthread,index,t_ns,delta_ns,kind,id,name,value,text,cpu_user_ns,cpu_system_ns,thrown\n");
        break;
    case FMT_JSON:
        puts_(s, "{\"format\":\"");
        put_u64(s, t->h.version_major);
        puts_(s, ".");
        put_u64(s, t->h.version_minor);
        puts_(s, "\",\"pid\":");
        put_u64(s, t->h.pid);
        puts_(s, ",\"source\":\"");
        puts_(s, source_name(t->h.source));
        puts_(s, "\",\"counter_hz\":");
        put_u64(s, (uint64_t)(t->h.counter_hz + 0.5));
        puts_(s, ",\"start_realtime_ns\":");
        put_i64(s, t->h.anchors[0].real_ns);
        puts_(s, ",\"damaged\":");
        if (t->damaged)
            put_json_str(s, t->error, strlen(t->error));
        else
            puts_(s, "null");
        json_names(e);
        puts_(s, ",\"threads\":[\n");
        break;
    case FMT_CHROME:
        if (vindex_build(&e->vi, t) != 0)
            return -ENOMEM;
        puts_(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        puts_(s, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
        put_u64(s, t->h.pid);
        puts_(s, ",\"tid\":0,\"args\":{\"name\":\"threadtime pid ");
        put_u64(s, t->h.pid);
        puts_(s, "\"}}");
        e->first = 0;
        for (uint32_t i = 0; i < t->nthreads; i++)
            chrome_thread(e, i);
        chrome_vthreads(e);
        puts_(s, "\n]}\n");
        return 0;
    }
    for (uint32_t i = 0; i < t->nthreads; i++)
        emit_thread(e, &t->threads[i]);
    if (e->fmt == FMT_JSON)
        puts_(s, "\n]}\n");
    return 0;
}

/* ---- --summary: per name (or id), calls and times, sorted by total ---- */

/* Where a row's calls, total, max, thrown and CPU come from. */
enum { FROM_RINGS = 0, FROM_ACCUMULATORS = 1, FROM_BOTH = 2 };

/* One name's figures (one id's, or those of ids sharing a name, such as
 * a Java method's overloads). calls, total, max, thrown and CPU come from
 * the accumulators when the trace has them for the id (every call), else
 * from the begin/end pairs in the rings; the percentiles always come from
 * the pairs (durs). */
typedef struct srow {
    uint32_t id;      /* the lowest of its ids */
    uint32_t *more;   /* the other ids of a merged row */
    size_t nmore;
    const char *name; /* NULL: unnamed */
    size_t name_len;
    int accumulated;  /* FROM_* */
    uint64_t calls, thrown, cpu_calls, cpu_apart;
    int64_t total, max, cpu_user, cpu_system;
    int64_t *durs;
    size_t ndurs, cap;
    /* from the pairs, used when the id was not accumulated */
    uint64_t pair_thrown, pair_cpu_calls;
    int64_t pair_total, pair_max, pair_cpu_user, pair_cpu_system;
} srow;

typedef struct summary {
    const tt__trace *t;
    srow *rows;
    size_t n, cap;
    size_t *slots; /* open addressing: row index + 1, 0 empty */
    size_t nslots;
    int err;
} summary;

static srow *row_of(summary *sm, uint32_t id)
{
    if (sm->err)
        return NULL;
    if (2 * (sm->n + 1) > sm->nslots) {
        size_t n = sm->nslots ? sm->nslots * 2 : 256;
        size_t *slots = calloc(n, sizeof *slots);
        srow *rows = realloc(sm->rows, (n / 2) * sizeof *rows);
        if (!slots || !rows) {
            free(slots);
            if (rows)
                sm->rows = rows;
            sm->err = -ENOMEM;
            return NULL;
        }
        sm->rows = rows;
        sm->cap = n / 2;
        for (size_t i = 0; i < sm->n; i++) {
            size_t j = (sm->rows[i].id * 2654435761u) & (n - 1);
            while (slots[j])
                j = (j + 1) & (n - 1);
            slots[j] = i + 1;
        }
        free(sm->slots);
        sm->slots = slots;
        sm->nslots = n;
    }
    size_t j = (id * 2654435761u) & (sm->nslots - 1);
    while (sm->slots[j] && sm->rows[sm->slots[j] - 1].id != id)
        j = (j + 1) & (sm->nslots - 1);
    if (!sm->slots[j]) {
        sm->rows[sm->n] = (srow){.id = id};
        sm->slots[j] = ++sm->n;
    }
    return &sm->rows[sm->slots[j] - 1];
}

static void add_pair(summary *sm, const open_interval *b, const tt__trace_event *end, uint32_t thread,
                     uint64_t markers)
{
    srow *r = row_of(sm, end->id);
    if (!r)
        return;
    if (r->ndurs == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        int64_t *d = realloc(r->durs, cap * sizeof *d);
        if (!d) {
            sm->err = -ENOMEM;
            return;
        }
        r->durs = d;
        r->cap = cap;
    }
    int64_t dur = diff_ns(rebase(sm->t, end), b->ns);
    r->durs[r->ndurs++] = dur;
    r->pair_total += dur;
    r->pair_max = dur > r->pair_max ? dur : r->pair_max;
    r->pair_thrown += (uint64_t)end->thrown;
    int64_t user, sys;
    if (pair_cpu(b, end, thread, markers, &user, &sys)) {
        r->pair_cpu_calls++;
        r->pair_cpu_user += user;
        r->pair_cpu_system += sys;
    }
}

static void pair_event(summary *sm, pairer *p, const tt__trace_event *ev, uint32_t thread, uint64_t markers)
{
    open_interval b;
    if (is_begin(ev->kind))
        pair_begin(p, ev, rebase(sm->t, ev), thread, markers);
    else if (is_end(ev->kind) && pair_end(p, ev, &b))
        add_pair(sm, &b, ev, thread, markers);
}

typedef struct pairs_ctx {
    summary *sm;
    pairer p;
    uint32_t thread; /* whose stack p holds */
} pairs_ctx;

static void pair_own(void *ctx, uint32_t thread, uint64_t k, const tt__trace_event *ev, uint64_t v,
                     uint64_t markers)
{
    (void)k;
    pairs_ctx *c = ctx;
    if (thread != c->thread) {
        c->p.depth = 0;
        c->thread = thread;
    }
    if (!v && !is_marker(ev->kind))
        pair_event(c->sm, &c->p, ev, thread, markers);
}

/* The pairs of every thread's own events and of every virtual thread. */
static void collect_pairs(summary *sm, const vindex *vi)
{
    const tt__trace *t = sm->t;
    pairs_ctx c = {sm, {0}, 0};
    for_each_owned(t, pair_own, &c);
    c.p.depth = 0;
    tt__trace_event ev;
    for (size_t j = 0; j < vi->n; j++) {
        const vref *r = &vi->refs[j];
        if (j && r->v != vi->refs[j - 1].v)
            c.p.depth = 0;
        if (tt__trace_event_at(t, &t->threads[r->thread], r->k, &ev))
            pair_event(sm, &c.p, &ev, r->thread, r->markers);
    }
    free(c.p.stack);
}

/* Fills each row's figures from the accumulators or from its pairs. */
static void finish_rows(summary *sm)
{
    const tt__trace *t = sm->t;
    for (uint32_t i = 0; i < t->nsummary; i++) {
        const tt__summary_entry *en = &t->summary[i];
        srow *r = row_of(sm, en->id);
        if (!r)
            return;
        r->accumulated = FROM_ACCUMULATORS;
        r->calls = en->sums.calls;
        r->total = tt__trace_dur_ns(t, en->sums.total);
        r->max = tt__trace_dur_ns(t, en->sums.max);
        r->thrown = en->sums.thrown;
        r->cpu_calls = en->sums.cpu_calls;
        r->cpu_user = (int64_t)en->sums.cpu_user_ns;
        r->cpu_system = (int64_t)en->sums.cpu_system_ns;
        r->cpu_apart = en->sums.cpu_apart;
    }
    for (size_t i = 0; i < sm->n; i++) {
        srow *r = &sm->rows[i];
        r->name = tt__trace_name_of(t, r->id, &r->name_len);
        if (!r->accumulated) {
            r->calls = r->ndurs;
            r->total = r->pair_total;
            r->max = r->pair_max;
            r->thrown = r->pair_thrown;
            r->cpu_calls = r->pair_cpu_calls;
            r->cpu_user = r->pair_cpu_user;
            r->cpu_system = r->pair_cpu_system;
        }
    }
}

static int by_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Named rows by name, then id; unnamed rows after them, by id. */
static int by_name(const void *a, const void *b)
{
    const srow *x = a, *y = b;
    if (!x->name != !y->name)
        return x->name ? -1 : 1;
    if (x->name) {
        int c = memcmp(x->name, y->name, x->name_len < y->name_len ? x->name_len : y->name_len);
        if (c || x->name_len != y->name_len)
            return c ? c : x->name_len < y->name_len ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id;
}

static int same_name(const srow *x, const srow *y)
{
    return x->name_len == y->name_len && memcmp(x->name, y->name, x->name_len) == 0;
}

/* Folds row src into dst (same name). Returns 0 or -ENOMEM. */
static int row_merge(srow *dst, srow *src)
{
    int64_t *durs = realloc(dst->durs, (dst->ndurs + src->ndurs + 1) * sizeof *durs);
    uint32_t *more = realloc(dst->more, (dst->nmore + 1 + src->nmore) * sizeof *more);
    if (durs)
        dst->durs = durs;
    if (more)
        dst->more = more;
    if (!durs || !more)
        return -ENOMEM;
    if (src->ndurs)
        memcpy(dst->durs + dst->ndurs, src->durs, src->ndurs * sizeof *durs);
    dst->ndurs += src->ndurs;
    dst->cap = dst->ndurs + 1;
    dst->more[dst->nmore++] = src->id;
    if (src->nmore)
        memcpy(dst->more + dst->nmore, src->more, src->nmore * sizeof *more);
    dst->nmore += src->nmore;
    dst->calls += src->calls;
    dst->total += src->total;
    dst->max = src->max > dst->max ? src->max : dst->max;
    dst->thrown += src->thrown;
    dst->cpu_calls += src->cpu_calls;
    dst->cpu_user += src->cpu_user;
    dst->cpu_system += src->cpu_system;
    dst->cpu_apart += src->cpu_apart;
    if (dst->accumulated != src->accumulated)
        dst->accumulated = FROM_BOTH;
    return 0;
}

/* One row per name: ids that share a name are summed. */
static int merge_names(summary *sm)
{
    if (sm->n)
        qsort(sm->rows, sm->n, sizeof *sm->rows, by_name);
    size_t m = 0;
    for (size_t i = 0; i < sm->n; i++) {
        srow *r = &sm->rows[i];
        if (m && r->name && sm->rows[m - 1].name && same_name(&sm->rows[m - 1], r)) {
            int rc = row_merge(&sm->rows[m - 1], r);
            free(r->durs);
            free(r->more);
            if (rc) {
                /* Rows before m are kept, rows m..i merged or freed. */
                for (size_t j = i + 1; j < sm->n; j++) {
                    free(sm->rows[j].durs);
                    free(sm->rows[j].more);
                }
                sm->n = m;
                return rc;
            }
        } else {
            sm->rows[m++] = *r;
        }
    }
    sm->n = m;
    return 0;
}

static int by_total(const void *a, const void *b)
{
    const srow *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The nearest-rank percentile q (0..1) of a row's sorted pair durations,
 * or 0 with *have clear when it has none. Pairs are converted time by time
 * and the accumulators' max as one sum, so the two can differ by a
 * nanosecond of rounding: a percentile never shows above the max. */
static int64_t percentile(const srow *r, double q, int *have)
{
    *have = r->ndurs > 0;
    if (!*have)
        return 0;
    size_t rank = (size_t)(q * (double)r->ndurs + 0.999999);
    int64_t v = r->durs[rank ? rank - 1 : 0];
    return v > r->max ? r->max : v;
}

static void put_us_or_dash(sink *s, int have, int64_t ns)
{
    if (have)
        put_us(s, ns);
    else
        puts_(s, "-");
}

/* A right-aligned cell of width w, formatted by fill into a scratch sink
 * (cells are short: it never flushes). */
static void cell(sink *s, int w, void (*fill)(sink *, int, int64_t), int have, int64_t v)
{
    static sink tmp;
    tmp.used = 0;
    fill(&tmp, have, v);
    /* At least one space: a figure wider than its column (a total of over
     * 10^6 us) must not run into the one before it. */
    int pad = w - (int)tmp.used;
    for (int i = 0; i < (pad > 0 ? pad : 1); i++)
        put(s, " ", 1);
    put(s, tmp.buf, tmp.used);
}

static void fill_u(sink *s, int have, int64_t v)
{
    if (have)
        put_u64(s, (uint64_t)v);
    else
        puts_(s, "-");
}

static void summary_text(sink *s, const summary *sm)
{
    const tt__trace *t = sm->t;
    char line[256];
    if (t->has_summary)
        puts_(s, "calls, total, mean, max, thrown and CPU: every call (the probes' accumulators);\n"
                 "p50 and p99: the begin/end pairs still in the rings (column 'pairs')\n");
    else if (t->h.summary_size)
        puts_(s, "the trace's probe summary is damaged (see the message on stderr):\n"
                 "every figure comes from the begin/end pairs still in the rings\n");
    else
        puts_(s, "this trace has no probe summary (a 1.0 file, a crash-safe file, or intervals placed by hand):\n"
                 "every figure comes from the begin/end pairs still in the rings\n");
    if (t->summary_overflow) {
        snprintf(line, sizeof line,
                 "%llu calls are in no row: their id did not fit in its thread's accumulator (%u ids)\n",
                 (unsigned long long)t->summary_overflow, TT_PROBE_IDS_PER_THREAD);
        puts_(s, line);
    }
    puts_(s, "\n     calls   total_us     mean_us      p50_us      p99_us      max_us     pairs  thrown"
             "  cpu_user_us  cpu_sys_us  cpu_calls  name\n");
    for (size_t i = 0; i < sm->n; i++) {
        const srow *r = &sm->rows[i];
        int h50, h99;
        int64_t p50 = percentile(r, 0.50, &h50), p99 = percentile(r, 0.99, &h99);
        cell(s, 10, fill_u, 1, (int64_t)r->calls);
        cell(s, 11, put_us_or_dash, 1, r->total);
        cell(s, 12, put_us_or_dash, r->calls > 0, r->calls ? r->total / (int64_t)r->calls : 0);
        cell(s, 12, put_us_or_dash, h50, p50);
        cell(s, 12, put_us_or_dash, h99, p99);
        cell(s, 12, put_us_or_dash, 1, r->max);
        cell(s, 10, fill_u, 1, (int64_t)r->ndurs);
        cell(s, 8, fill_u, 1, (int64_t)r->thrown);
        cell(s, 13, put_us_or_dash, r->cpu_calls > 0, r->cpu_user);
        cell(s, 12, put_us_or_dash, r->cpu_calls > 0, r->cpu_system);
        cell(s, 11, fill_u, 1, (int64_t)r->cpu_calls);
        puts_(s, "  ");
        if (r->name) {
            put(s, r->name, r->name_len);
        } else {
            puts_(s, "id ");
            put_u64(s, r->id);
        }
        if (r->accumulated == FROM_RINGS && t->has_summary)
            puts_(s, "  (from the rings)");
        else if (r->accumulated == FROM_BOTH)
            puts_(s, "  (partly from the rings)");
        if (r->nmore) {
            snprintf(line, sizeof line, "  (%zu ids)", r->nmore + 1);
            puts_(s, line);
        }
        if (r->cpu_apart) {
            snprintf(line, sizeof line, "  (%llu calls' CPU not attributable)", (unsigned long long)r->cpu_apart);
            puts_(s, line);
        }
        puts_(s, "\n");
    }
}

static void json_kv(sink *s, const char *key, int have, int64_t v)
{
    puts_(s, ",\"");
    puts_(s, key);
    puts_(s, "\":");
    if (have)
        put_i64(s, v);
    else
        puts_(s, "null");
}

static void summary_json(sink *s, const summary *sm)
{
    const tt__trace *t = sm->t;
    puts_(s, "{\"source\":\"");
    puts_(s, t->has_summary ? "accumulators" : "rings");
    puts_(s, "\",\"overflow_calls\":");
    put_u64(s, t->summary_overflow);
    puts_(s, ",\"damaged\":");
    if (t->damaged)
        put_json_str(s, t->error, strlen(t->error));
    else
        puts_(s, "null");
    puts_(s, ",\"rows\":[");
    for (size_t i = 0; i < sm->n; i++) {
        const srow *r = &sm->rows[i];
        int h50, h99;
        int64_t p50 = percentile(r, 0.50, &h50), p99 = percentile(r, 0.99, &h99);
        puts_(s, i ? ",\n{\"ids\":[" : "\n{\"ids\":[");
        put_u64(s, r->id);
        for (size_t k = 0; k < r->nmore; k++) {
            puts_(s, ",");
            put_u64(s, r->more[k]);
        }
        puts_(s, "],\"name\":");
        if (r->name)
            put_json_utf8(s, r->name, r->name_len);
        else
            puts_(s, "null");
        static const char *const from[] = {"rings", "accumulators", "both"};
        puts_(s, ",\"from\":\"");
        puts_(s, from[r->accumulated]);
        puts_(s, "\"");
        json_kv(s, "calls", 1, (int64_t)r->calls);
        json_kv(s, "total_ns", 1, r->total);
        json_kv(s, "mean_ns", r->calls > 0, r->calls ? r->total / (int64_t)r->calls : 0);
        json_kv(s, "p50_ns", h50, p50);
        json_kv(s, "p99_ns", h99, p99);
        json_kv(s, "max_ns", 1, r->max);
        json_kv(s, "percentile_calls", 1, (int64_t)r->ndurs);
        json_kv(s, "thrown", 1, (int64_t)r->thrown);
        json_kv(s, "cpu_calls", 1, (int64_t)r->cpu_calls);
        json_kv(s, "cpu_user_ns", r->cpu_calls > 0, r->cpu_user);
        json_kv(s, "cpu_system_ns", r->cpu_calls > 0, r->cpu_system);
        json_kv(s, "cpu_apart", 1, (int64_t)r->cpu_apart);
        puts_(s, "}");
    }
    puts_(s, "\n]}\n");
}

/* Returns 0 or -ENOMEM. */
static int emit_summary(sink *s, const tt__trace *t, int json)
{
    summary sm = {.t = t};
    vindex vi;
    int rc = vindex_build(&vi, t);
    if (rc == 0) {
        collect_pairs(&sm, &vi);
        finish_rows(&sm);
        rc = sm.err ? sm.err : merge_names(&sm);
    }
    if (rc == 0) {
        for (size_t i = 0; i < sm.n; i++)
            if (sm.rows[i].ndurs)
                qsort(sm.rows[i].durs, sm.rows[i].ndurs, sizeof *sm.rows[i].durs, by_int64);
        if (sm.n)
            qsort(sm.rows, sm.n, sizeof *sm.rows, by_total);
        if (json)
            summary_json(s, &sm);
        else
            summary_text(s, &sm);
    }
    for (size_t i = 0; i < sm.n; i++) {
        free(sm.rows[i].durs);
        free(sm.rows[i].more);
    }
    free(sm.rows);
    free(sm.slots);
    vindex_free(&vi);
    return rc;
}

/* ---- the command ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: threadtime dump [--format text|csv|json|chrome] [--summary] [-o OUT] FILE\n"
               "Prints a trace file written by tt_log_dump() or left by a crash-safe log.\n"
               "  --format  text (default; per-thread deltas in ns), csv, json, or chrome\n"
               "            (Chrome trace JSON for Perfetto / chrome://tracing; ts in us)\n"
               "  --summary per event name (or id): calls, total, mean, p50, p99 and max wall\n"
               "            time, and CPU where recorded, sorted by total (text or json)\n"
               "  -o OUT    write there instead of standard output\n"
               "Exit status: 0, 1 if the file is damaged (what is intact is still printed),\n"
               "2 for a usage error or an unreadable file.\n");
}

static int parse_format(const char *v, enum format *f)
{
    static const char *names[] = {"text", "csv", "json", "chrome"};
    for (int i = 0; i < 4; i++)
        if (strcmp(v, names[i]) == 0) {
            *f = (enum format)i;
            return 0;
        }
    return -1;
}

int tt_cli_dump(int argc, char **argv)
{
    int run_rc = tt_cli_run_dump(argc, argv); /* a `threadtime run` recording (cli/run.c) */
    if (run_rc >= 0)
        return run_rc;
    enum format fmt = FMT_TEXT;
    const char *path = NULL, *out_path = NULL;
    int want_summary = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--summary") == 0) {
            want_summary = 1;
        } else if ((strcmp(a, "--format") == 0 || strcmp(a, "-f") == 0) && i + 1 < argc) {
            if (parse_format(argv[++i], &fmt) != 0) {
                fprintf(stderr, "threadtime dump: unknown format '%s'\n", argv[i]);
                return 2;
            }
        } else if (strncmp(a, "--format=", 9) == 0) {
            if (parse_format(a + 9, &fmt) != 0) {
                fprintf(stderr, "threadtime dump: unknown format '%s'\n", a + 9);
                return 2;
            }
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (a[0] == '-' || path) {
            usage(stderr);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    if (want_summary && fmt != FMT_TEXT && fmt != FMT_JSON) {
        fprintf(stderr, "threadtime dump: --summary prints text or json\n");
        return 2;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "threadtime dump: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 2;
    }
    size_t len = (size_t)st.st_size;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED) {
        fprintf(stderr, "threadtime dump: %s: %s\n", path, strerror(errno));
        return 2;
    }
    tt__trace t;
    int rc = tt__trace_open(&t, map, len);
    if (rc != 0) {
        fprintf(stderr, "threadtime dump: %s: %s\n", path, rc == -EINVAL ? t.error : tt_strerror(rc));
        tt__trace_close(&t);
        if (len)
            munmap(map, len);
        return 2;
    }
    FILE *f = out_path ? fopen(out_path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "threadtime dump: %s: %s\n", out_path, strerror(errno));
        tt__trace_close(&t);
        munmap(map, len); /* len > 0: an empty file has no header and was refused */
        return 2;
    }
    sink *s = malloc(sizeof *s);
    int status = 0;
    if (!s) {
        fprintf(stderr, "threadtime dump: %s\n", strerror(ENOMEM));
        status = 2;
    } else {
        s->f = f;
        s->used = 0;
        emitter e = {.fmt = fmt, .s = s, .t = &t, .first = 1};
        if (want_summary ? emit_summary(s, &t, fmt == FMT_JSON) != 0 : emit(&e) != 0) {
            fprintf(stderr, "threadtime dump: %s\n", strerror(ENOMEM));
            status = 2;
        }
        flush(s);
        free(e.pairs.stack);
        vindex_free(&e.vi);
        free(s);
    }
    if (fflush(f) != 0 || ferror(f)) {
        fprintf(stderr, "threadtime dump: writing %s: %s\n", out_path ? out_path : "output", strerror(errno));
        status = 2;
    }
    if (out_path)
        fclose(f);
    if (t.damaged && status == 0) {
        fprintf(stderr, "threadtime dump: %s is damaged; the intact part was printed: %s\n", path, t.error);
        status = 1;
    }
    tt__trace_close(&t);
    munmap(map, len);
    return status;
}
