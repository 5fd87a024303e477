/* The text format: a header, then per thread a table of its events with
 * ns deltas. Names and texts are escaped (out.c). */
#include <string.h>
#include <time.h>

#include "dump.h"

static const char *state_name(unsigned state) { return state == TT__RING_EXITED ? "exited" : "live"; }

static void text_vthread_names(sink *s, const tt__trace *t);

void text_header(sink *s, const tt__trace *t, uint64_t events)
{
    char line[512];
    const tt__trace_header *h = &t->h;
    time_t sec = (time_t)(h->anchors[0].real_ns / 1000000000);
    struct tm tm;
    char when[64] = "?";
    if (gmtime_r(&sec, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(line, sizeof line, "threadtime trace %u.%u  pid %u  source %s", h->version_major, h->version_minor,
             h->pid, tt__trace_source_name(h->source));
    put_cstr(s, line);
    if (h->source != TT__TRACE_SOURCE_MONOTONIC_RAW) {
        snprintf(line, sizeof line, "  %.6f MHz calibrated  %s", h->counter_hz / 1e6,
                 (h->flags & TT__TRACE_END_ANCHOR) ? "interpolated between start and end anchors"
                                                   : "extrapolated from the start anchor (no end anchor)");
        put_cstr(s, line);
    }
    snprintf(line, sizeof line,
             "\nstarted %s.%09lldZ  threads %u  events %llu  threads without a ring %u  rings recycled %u\n",
             when, (long long)(h->anchors[0].real_ns % 1000000000), t->nthreads, (unsigned long long)events,
             h->threads_dropped, h->rings_recycled);
    put_cstr(s, line);
    if (t->nnames || h->names_dropped) {
        snprintf(line, sizeof line, "names %u", t->nnames);
        put_cstr(s, line);
        if (h->names_dropped) {
            snprintf(line, sizeof line, "  (%u more did not fit in the crash file)", h->names_dropped);
            put_cstr(s, line);
        }
        put_cstr(s, "\n");
    }
    text_vthread_names(s, t);
}

/* The named virtual threads (1.2), one line each: the events below show
 * only their ids. */
static void text_vthread_names(sink *s, const tt__trace *t)
{
    uint32_t n;
    const tt__trace_name *v = tt__trace_vthread_names(t, &n);
    for (uint32_t i = 0; i < n; i++) {
        put_cstr(s, i ? "\nvthread " : "vthread ");
        put_u64(s, v[i].id);
        put_cstr(s, " \"");
        put_plain_str(s, v[i].text, v[i].len);
        put_cstr(s, "\"");
    }
    if (n)
        put_cstr(s, "\n");
    if (t->h.thread_names_dropped) {
        char line[128];
        snprintf(line, sizeof line, "thread names: %u more did not fit in the crash file\n", t->h.thread_names_dropped);
        put_cstr(s, line);
    }
}

void text_thread(sink *s, const tt__trace_thread *th, uint64_t events, uint64_t missing)
{
    char line[256];
    put_cstr(s, "\nthread ");
    put_u64(s, th->tid);
    put_cstr(s, " \"");
    size_t name_len;
    const char *name = tt__trace_thread_name(th, &name_len);
    put_plain_str(s, name, name_len);
    snprintf(line, sizeof line, "\" (%s): %llu events, %llu overwritten, %llu incomplete", state_name(th->state),
             (unsigned long long)events, (unsigned long long)th->overwritten, (unsigned long long)missing);
    put_cstr(s, line);
    if (th->damaged) {
        snprintf(line, sizeof line, " (%llu of them dropped between intact ones)", (unsigned long long)th->damaged);
        put_cstr(s, line);
    }
    put_cstr(s, "\n       index            t_ns     delta_ns  kind              id  data\n");
}

/* An end_cpu_total's or end_mounted's figure, named by what it counts. */
static void text_measured(sink *s, const tt__trace_event *ev)
{
    int64_t ns;
    if (!tt__event_measured(ev, &ns)) {
        put_cstr(s, "  (no figure: the account was unreadable)");
        return;
    }
    put_cstr(s, ev->kind == TT__KIND_END_MOUNTED ? "  mounted_ns=" : "  cpu_total_ns=");
    put_i64(s, ns);
}

void text_event(sink *s, const tt__trace *t, const tt__trace_event *ev, int64_t delta, uint64_t vthread)
{
    char line[96];
    /* kind and id share 20 columns: a kind name longer than 9 (end_cpu_total)
     * takes them from the id's, so the columns after stay aligned. */
    const char *kind = tt__trace_kind_name(ev->kind);
    int kind_w = (int)strlen(kind) > 9 ? (int)strlen(kind) : 9;
    snprintf(line, sizeof line, "  %10llu %15lld %12lld  %-*s %*u", (unsigned long long)ev->index,
             (long long)tt__trace_rebase(t, ev), (long long)delta, kind_w, kind, 19 - kind_w, ev->id);
    put_cstr(s, line);
    size_t name_len;
    const char *name = tt__trace_name_of(t, ev->id, &name_len);
    if (name && !tt__kind_is_marker(ev->kind)) {
        put_cstr(s, "  [");
        put_escaped(s, name, name_len);
        put_cstr(s, "]");
    }
    if (vthread) {
        put_cstr(s, "  vthread=");
        put_u64(s, vthread);
    }
    if (ev->kind == TT__KIND_VALUE) {
        put_cstr(s, "  value=");
        put_u64(s, ev->p0);
    } else if (ev->kind == TT__KIND_RUN_WAIT) {
        put_cstr(s, "  run_wait_ns=");
        put_u64(s, ev->p0);
        put_cstr(s, " timeslices=");
        put_u64(s, ev->p1);
    } else if (tt__event_has_cpu(ev)) {
        put_cstr(s, "  cpu_user_ns=");
        put_u64(s, ev->p0);
        put_cstr(s, " cpu_system_ns=");
        put_u64(s, ev->p1);
    } else if (tt__kind_is_measured(ev->kind)) {
        text_measured(s, ev);
    } else if (ev->text) {
        put_cstr(s, "  \"");
        put_plain_str(s, ev->text, ev->text_len);
        put_cstr(s, "\"");
    } else if (ev->kind == TT__KIND_LITERAL) {
        put_cstr(s, "  (literal text not in this file)");
    }
    if (ev->thrown)
        put_cstr(s, "  thrown");
    put_cstr(s, "\n");
}
