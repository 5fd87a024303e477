/* The JSON format: the header's facts, the name table, and per thread its
 * events. Strings escaped per JSON (out.c). */
#include <string.h>

#include "dump.h"

static void comma(row_ctx *c)
{
    if (!c->first)
        put(c->s, ",\n", 2);
    c->first = 0;
}

void json_damaged(sink *s, const tt__trace *t)
{
    if (t->damaged)
        put_json_str(s, t->error, strlen(t->error));
    else
        puts_(s, "null");
}

static void json_vthread_names(sink *s, const tt__trace *t);

void json_header(row_ctx *c)
{
    sink *s = c->s;
    const tt__trace *t = c->t;
    puts_(s, "{\"format\":\"");
    put_u64(s, t->h.version_major);
    puts_(s, ".");
    put_u64(s, t->h.version_minor);
    puts_(s, "\",\"pid\":");
    put_u64(s, t->h.pid);
    puts_(s, ",\"source\":\"");
    puts_(s, tt__trace_source_name(t->h.source));
    puts_(s, "\",\"counter_hz\":");
    /* A damaged file's frequency can be anything when the anchors carry
     * the time: only a value a u64 holds is converted. */
    double hz = t->h.counter_hz;
    put_u64(s, hz >= 0 && hz < 1.8e19 ? (uint64_t)(hz + 0.5) : 0);
    puts_(s, ",\"start_realtime_ns\":");
    put_i64(s, t->h.anchors[0].real_ns);
    puts_(s, ",\"damaged\":");
    json_damaged(s, t);
    puts_(s, ",\"names\":{");
    for (uint32_t i = 0; i < t->nnames; i++) {
        const tt__trace_name *n = &t->names[i];
        if (i)
            puts_(s, ",");
        puts_(s, "\"");
        put_u64(s, n->id);
        puts_(s, "\":");
        put_json_utf8(s, n->text, n->len);
    }
    puts_(s, "}");
    json_vthread_names(s, t);
    puts_(s, ",\"threads\":[\n");
}

/* "vthreads": virtual thread id -> name (1.2), when the trace names any. */
static void json_vthread_names(sink *s, const tt__trace *t)
{
    if (!t->nvnames && !t->h.thread_names_dropped)
        return;
    puts_(s, ",\"vthreads\":{");
    uint32_t n;
    const tt__trace_name *v = tt__trace_vthread_names(t, &n);
    for (uint32_t i = 0; i < n; i++) {
        puts_(s, i ? ",\"" : "\"");
        put_u64(s, v[i].id);
        puts_(s, "\":");
        put_json_utf8(s, v[i].text, v[i].len);
    }
    puts_(s, "}");
    if (t->h.thread_names_dropped) {
        puts_(s, ",\"thread_names_dropped\":");
        put_u64(s, t->h.thread_names_dropped);
    }
}

void json_thread(row_ctx *c, const tt__trace_thread *th, uint64_t missing)
{
    sink *s = c->s;
    comma(c);
    puts_(s, "{\"tid\":");
    put_u64(s, th->tid);
    puts_(s, ",\"name\":");
    size_t name_len;
    const char *name = tt__trace_thread_name(th, &name_len);
    if (th->full_name)
        put_json_utf8(s, name, name_len); /* checked UTF-8, kept as such */
    else
        put_json_str(s, name, name_len);  /* the kernel's bytes */
    puts_(s, ",\"state\":\"");
    puts_(s, th->state == TT__RING_EXITED ? "exited" : "live");
    puts_(s, "\",\"overwritten\":");
    put_u64(s, th->overwritten);
    puts_(s, ",\"incomplete\":");
    put_u64(s, missing);
    if (th->damaged) {
        puts_(s, ",\"damaged\":");
        put_u64(s, th->damaged);
    }
    puts_(s, ",\"events\":[\n");
    c->first = 1;
}

void json_event(row_ctx *c, const tt__trace_event *ev, int64_t delta, uint64_t vthread)
{
    sink *s = c->s;
    comma(c);
    puts_(s, "{\"index\":");
    put_u64(s, ev->index);
    puts_(s, ",\"t_ns\":");
    put_i64(s, tt__trace_rebase(c->t, ev));
    puts_(s, ",\"delta_ns\":");
    put_i64(s, delta);
    puts_(s, ",\"kind\":\"");
    puts_(s, tt__trace_kind_name(ev->kind));
    puts_(s, "\",\"id\":");
    put_u64(s, ev->id);
    size_t len;
    const char *name = tt__trace_name_of(c->t, ev->id, &len);
    if (name && !tt__kind_is_marker(ev->kind)) {
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
    int64_t measured;
    if (tt__event_measured(ev, &measured)) {
        puts_(s, ev->kind == TT__KIND_END_MOUNTED ? ",\"mounted_ns\":" : ",\"cpu_total_ns\":");
        put_i64(s, measured);
    }
    if (tt__event_has_cpu(ev)) {
        puts_(s, ",\"cpu_user_ns\":");
        put_u64(s, ev->p0);
        puts_(s, ",\"cpu_system_ns\":");
        put_u64(s, ev->p1);
    }
    if (ev->thrown)
        puts_(s, ",\"thrown\":true");
    puts_(s, "}");
}

void json_thread_end(row_ctx *c)
{
    puts_(c->s, "]}");
    c->first = 0;
}

void json_footer(row_ctx *c) { puts_(c->s, "\n]}\n"); }
