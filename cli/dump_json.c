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
        put_cstr(s, "null");
}

static void json_vthread_names(sink *s, const tt__trace *t);

void json_header(row_ctx *c)
{
    sink *s = c->s;
    const tt__trace *t = c->t;
    put_cstr(s, "{\"format\":\"");
    put_u64(s, t->h.version_major);
    put_cstr(s, ".");
    put_u64(s, t->h.version_minor);
    put_cstr(s, "\",\"pid\":");
    put_u64(s, t->h.pid);
    put_cstr(s, ",\"source\":\"");
    put_cstr(s, tt__trace_source_name(t->h.source));
    put_cstr(s, "\",\"counter_hz\":");
    /* A damaged file's frequency can be anything when the anchors carry
     * the time: only a value a u64 holds is converted. */
    double hz = t->h.counter_hz;
    put_u64(s, hz >= 0 && hz < 1.8e19 ? (uint64_t)(hz + 0.5) : 0);
    put_cstr(s, ",\"start_realtime_ns\":");
    put_i64(s, t->h.anchors[0].real_ns);
    put_cstr(s, ",\"damaged\":");
    json_damaged(s, t);
    put_cstr(s, ",\"names\":{");
    for (uint32_t i = 0; i < t->nnames; i++) {
        const tt__trace_name *n = &t->names[i];
        if (i)
            put_cstr(s, ",");
        put_cstr(s, "\"");
        put_u64(s, n->id);
        put_cstr(s, "\":");
        put_json_utf8(s, n->text, n->len);
    }
    put_cstr(s, "}");
    json_vthread_names(s, t);
    put_cstr(s, ",\"threads\":[\n");
}

/* "vthreads": virtual thread id -> name (1.2), when the trace names any. */
static void json_vthread_names(sink *s, const tt__trace *t)
{
    if (!t->nvnames && !t->h.thread_names_dropped)
        return;
    put_cstr(s, ",\"vthreads\":{");
    uint32_t n;
    const tt__trace_name *v = tt__trace_vthread_names(t, &n);
    for (uint32_t i = 0; i < n; i++) {
        put_cstr(s, i ? ",\"" : "\"");
        put_u64(s, v[i].id);
        put_cstr(s, "\":");
        put_json_utf8(s, v[i].text, v[i].len);
    }
    put_cstr(s, "}");
    if (t->h.thread_names_dropped) {
        put_cstr(s, ",\"thread_names_dropped\":");
        put_u64(s, t->h.thread_names_dropped);
    }
}

void json_thread(row_ctx *c, const tt__trace_thread *th, uint64_t missing)
{
    sink *s = c->s;
    comma(c);
    put_cstr(s, "{\"tid\":");
    put_u64(s, th->tid);
    put_cstr(s, ",\"name\":");
    size_t name_len;
    const char *name = tt__trace_thread_name(th, &name_len);
    if (th->full_name)
        put_json_utf8(s, name, name_len); /* checked UTF-8, kept as such */
    else
        put_json_str(s, name, name_len);  /* the kernel's bytes */
    put_cstr(s, ",\"state\":\"");
    put_cstr(s, th->state == TT__RING_EXITED ? "exited" : "live");
    put_cstr(s, "\",\"overwritten\":");
    put_u64(s, th->overwritten);
    put_cstr(s, ",\"incomplete\":");
    put_u64(s, missing);
    if (th->damaged) {
        put_cstr(s, ",\"damaged\":");
        put_u64(s, th->damaged);
    }
    put_cstr(s, ",\"events\":[\n");
    c->first = 1;
}

void json_event(row_ctx *c, const tt__trace_event *ev, int64_t delta, uint64_t vthread)
{
    sink *s = c->s;
    comma(c);
    put_cstr(s, "{\"index\":");
    put_u64(s, ev->index);
    put_cstr(s, ",\"t_ns\":");
    put_i64(s, tt__trace_rebase(c->t, ev));
    put_cstr(s, ",\"delta_ns\":");
    put_i64(s, delta);
    put_cstr(s, ",\"kind\":\"");
    put_cstr(s, tt__trace_kind_name(ev->kind));
    put_cstr(s, "\",\"id\":");
    put_u64(s, ev->id);
    size_t len;
    const char *name = tt__trace_name_of(c->t, ev->id, &len);
    if (name && !tt__kind_is_marker(ev->kind)) {
        put_cstr(s, ",\"name\":");
        put_json_utf8(s, name, len);
    }
    if (vthread) {
        put_cstr(s, ",\"vthread\":");
        put_u64(s, vthread);
    }
    if (ev->kind == TT__KIND_VALUE) {
        put_cstr(s, ",\"value\":");
        put_u64(s, ev->p0);
    } else if (ev->kind == TT__KIND_RUN_WAIT) {
        put_cstr(s, ",\"run_wait_ns\":");
        put_u64(s, ev->p0);
        put_cstr(s, ",\"timeslices\":");
        put_u64(s, ev->p1);
    }
    if (ev->text) {
        put_cstr(s, ",\"text\":");
        put_json_str(s, ev->text, ev->text_len);
    }
    int64_t measured;
    if (tt__event_measured(ev, &measured)) {
        put_cstr(s, ev->kind == TT__KIND_END_MOUNTED ? ",\"mounted_ns\":" : ",\"cpu_total_ns\":");
        put_i64(s, measured);
    }
    if (tt__event_has_cpu(ev)) {
        put_cstr(s, ",\"cpu_user_ns\":");
        put_u64(s, ev->p0);
        put_cstr(s, ",\"cpu_system_ns\":");
        put_u64(s, ev->p1);
    }
    if (ev->thrown)
        put_cstr(s, ",\"thrown\":true");
    put_cstr(s, "}");
}

void json_thread_end(row_ctx *c)
{
    put_cstr(c->s, "]}");
    c->first = 0;
}

void json_footer(row_ctx *c) { put_cstr(c->s, "\n]}\n"); }
