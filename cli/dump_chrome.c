/* Chrome trace JSON (Perfetto, chrome://tracing): every track of the trace
 * model (src/trace_model.h) as a Chrome thread. A pair is a complete ("X")
 * event, a begin still open at its track's end a "B" event, anything else
 * an instant; a carrier's stretches of running a virtual thread show as
 * slices on the carrier's track. ts and dur in us. */
#include <string.h>

#include "dump.h"

/* Tracks of virtual threads get tids above the kernel's largest
 * (PID_MAX_LIMIT, 2^22), so they never collide with a real one. */
#define VTHREAD_TID_BASE 4194304u

typedef struct chrome {
    sink *s;
    const tt__trace *t;
    uint64_t tid;         /* the current track's */
    uint64_t mounted;     /* own tracks: the virtual thread running since mounted_at, or 0 */
    int64_t mounted_at;
} chrome;

static void chrome_common(chrome *c, const char *ph, uint64_t tid, int64_t ns)
{
    put_cstr(c->s, ",\n{\"ph\":\"");
    put_cstr(c->s, ph);
    put_cstr(c->s, "\",\"pid\":");
    put_u64(c->s, c->t->h.pid);
    put_cstr(c->s, ",\"tid\":");
    put_u64(c->s, tid);
    put_cstr(c->s, ",\"ts\":");
    put_us(c->s, ns);
}

/* The slice's name: the event's text, else the id's name, else "<what> <id>". */
static void chrome_name(chrome *c, const tt__trace_event *ev, const char *what)
{
    size_t len;
    const char *name = tt__trace_name_of(c->t, ev->id, &len);
    put_cstr(c->s, ",\"name\":");
    if (ev->text) {
        put_json_str(c->s, ev->text, ev->text_len);
    } else if (name) {
        put_json_utf8(c->s, name, len);
    } else {
        char n[48];
        int l = snprintf(n, sizeof n, "%s %u", what, ev->id);
        put_json_str(c->s, n, (size_t)l);
    }
}

/* The args every event carries: its id, and its name when a text took the
 * slice's name. */
static void chrome_args(chrome *c, const tt__trace_event *ev)
{
    size_t len;
    const char *name = tt__trace_name_of(c->t, ev->id, &len);
    put_cstr(c->s, ",\"args\":{\"id\":");
    put_u64(c->s, ev->id);
    if (name && ev->text) {
        put_cstr(c->s, ",\"event\":");
        put_json_utf8(c->s, name, len);
    }
}

/* utf8: name is checked UTF-8 (a name from the thread-name table), else
 * the kernel's bytes. */
static void chrome_thread_name(chrome *c, uint64_t tid, const char *name, size_t len, int utf8)
{
    put_cstr(c->s, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    put_u64(c->s, c->t->h.pid);
    put_cstr(c->s, ",\"tid\":");
    put_u64(c->s, tid);
    put_cstr(c->s, ",\"args\":{\"name\":");
    if (utf8)
        put_json_utf8(c->s, name, len);
    else
        put_json_str(c->s, name, len);
    put_cstr(c->s, "}}");
}

/* A virtual thread's name: the trace's, else "vthread <id>". */
static void put_vthread_name(chrome *c, uint64_t v)
{
    size_t len;
    const char *name = tt__trace_vthread_name(c->t, v, &len);
    if (name) {
        put_json_utf8(c->s, name, len);
        return;
    }
    char id[48];
    int n = snprintf(id, sizeof id, "vthread %llu", (unsigned long long)v);
    put_json_str(c->s, id, (size_t)n);
}

/* A carrier's stretch of running virtual thread v, on the carrier's track. */
static void chrome_mounted(chrome *c, const char *ph, uint64_t v, int64_t from, int64_t to)
{
    chrome_common(c, ph, c->tid, from);
    if (ph[0] == 'X') {
        put_cstr(c->s, ",\"dur\":");
        put_us(c->s, tt__diff_ns(to, from));
    } else if (ph[0] == 'i') {
        put_cstr(c->s, ",\"s\":\"t\"");
    }
    put_cstr(c->s, ",\"name\":");
    put_vthread_name(c, v);
    put_cstr(c->s, ",\"args\":{\"vthread\":");
    put_u64(c->s, v);
    put_cstr(c->s, "}}");
}

static void on_track(void *ctx, const tt__track *tr)
{
    chrome *c = ctx;
    size_t len;
    const char *name = tt__track_name(c->t, tr, &len);
    if (tr->vthread) {
        char id[48];
        int n = snprintf(id, sizeof id, "vthread %llu", (unsigned long long)tr->vthread);
        c->tid = VTHREAD_TID_BASE + tr->ordinal;
        chrome_thread_name(c, c->tid, name ? name : id, name ? len : (size_t)n, name != NULL);
    } else {
        c->tid = c->t->threads[tr->thread].tid;
        chrome_thread_name(c, c->tid, name, len, c->t->threads[tr->thread].full_name != NULL);
    }
}

static void on_marker(chrome *c, const tt__step *st)
{
    if (c->mounted)
        chrome_mounted(c, "X", c->mounted, c->mounted_at, st->ns);
    else if (st->ev.kind == TT__KIND_UNMOUNT)
        chrome_mounted(c, "i", st->ev.p0, st->ns, st->ns); /* its mount was overwritten */
    c->mounted = st->ev.kind == TT__KIND_MOUNT ? st->ev.p0 : 0;
    c->mounted_at = st->ns;
}

static void on_event(void *ctx, const tt__track *tr, const tt__step *st, const tt__step *b)
{
    chrome *c = ctx;
    (void)tr;
    const tt__trace_event *ev = &st->ev;
    if (tt__kind_is_marker(ev->kind)) {
        on_marker(c, st);
        return;
    }
    if (tt__kind_is_begin(ev->kind))
        return; /* drawn when its end comes, or as open at the track's end */
    if (ev->kind == TT__KIND_RUN_WAIT) {
        /* A counter track per thread, its run-queue wait so far (us), beside
         * its slices. */
        chrome_common(c, "C", c->tid, st->ns);
        char n[48];
        int l = snprintf(n, sizeof n, "run-queue wait, tid %llu", (unsigned long long)c->tid);
        put_cstr(c->s, ",\"name\":");
        put_json_str(c->s, n, (size_t)l);
        put_cstr(c->s, ",\"args\":{\"us\":");
        put_us(c->s, (int64_t)(ev->p0 & INT64_MAX));
        put_cstr(c->s, "}}");
        return;
    }
    if (b) {
        chrome_common(c, "X", c->tid, b->ns);
        put_cstr(c->s, ",\"dur\":");
        put_us(c->s, tt__diff_ns(st->ns, b->ns));
        chrome_name(c, &b->ev, "interval");
        chrome_args(c, &b->ev);
        int64_t user, sys, measured;
        if (tt__event_measured(ev, &measured)) {
            /* The caller's own account: a total, no split. */
            put_cstr(c->s, ev->kind == TT__KIND_END_MOUNTED ? ",\"mounted_ns\":" : ",\"cpu_total_ns\":");
            put_i64(c->s, measured);
        } else if (tt__pair_cpu(b, st, &user, &sys)) {
            put_cstr(c->s, ",\"cpu_user_ns\":");
            put_i64(c->s, user);
            put_cstr(c->s, ",\"cpu_system_ns\":");
            put_i64(c->s, sys);
            put_cstr(c->s, ",\"cpu_total_ns\":");
            put_i64(c->s, (int64_t)((uint64_t)user + (uint64_t)sys));
        }
        int64_t wait;
        if (tt__pair_wait(c->t, b, st, &wait)) {
            put_cstr(c->s, ",\"run_wait_ns\":");
            put_i64(c->s, wait);
        }
        if (b->thread != st->thread)
            put_cstr(c->s, ",\"carriers\":2");
        if (ev->thrown)
            put_cstr(c->s, ",\"thrown\":true");
        put_cstr(c->s, "}}");
        return;
    }
    chrome_common(c, "i", c->tid, st->ns);
    chrome_name(c, ev, tt__kind_is_end(ev->kind) ? "end without begin" : "event");
    put_cstr(c->s, ",\"s\":\"t\"");
    chrome_args(c, ev);
    if (ev->kind == TT__KIND_VALUE) {
        put_cstr(c->s, ",\"value\":");
        put_u64(c->s, ev->p0);
    }
    put_cstr(c->s, "}}");
}

/* A carrier's stretch still running at the end of its track. */
static void on_track_end(void *ctx, const tt__track *tr)
{
    chrome *c = ctx;
    (void)tr;
    if (c->mounted)
        chrome_mounted(c, "B", c->mounted, c->mounted_at, c->mounted_at);
    c->mounted = 0;
}

/* A begin still open at the end of its track: Perfetto draws a "B" event
 * to the end of the trace. */
static void on_open(void *ctx, const tt__track *tr, const tt__step *b)
{
    chrome *c = ctx;
    (void)tr;
    chrome_common(c, "B", c->tid, b->ns);
    chrome_name(c, &b->ev, "interval");
    chrome_args(c, &b->ev);
    put_cstr(c->s, "}}");
}

int chrome_emit(sink *s, const tt__trace *t)
{
    chrome c = {s, t, 0, 0, 0};
    put_cstr(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    put_cstr(s, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    put_u64(s, t->h.pid);
    put_cstr(s, ",\"tid\":0,\"args\":{\"name\":\"threadtime pid ");
    put_u64(s, t->h.pid);
    put_cstr(s, "\"}}");
    const tt__walk_ops ops = {on_track, on_event, on_track_end, on_open};
    int rc = tt__trace_walk(t, &ops, &c);
    put_cstr(s, "\n]}\n");
    return rc;
}
