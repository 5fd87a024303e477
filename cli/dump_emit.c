/* The text, CSV and JSON formats walk each thread's events in the order it
 * recorded them; Chrome and --summary walk tracks (dump_chrome.c,
 * dump_summary.c). */
#include "dump.h"

/* The committed events of th (the text header needs totals first). */
static uint64_t count_events(const tt__trace *t, const tt__trace_thread *th)
{
    tt__trace_event ev;
    uint64_t n = 0;
    for (uint64_t k = 0; k < th->head - th->first; k++)
        n += (uint64_t)tt__trace_event_at(t, th, k, &ev);
    return n;
}

static void emit_thread(row_ctx *c, enum out_format fmt, const tt__trace_thread *th)
{
    uint64_t total = th->head - th->first;
    uint64_t events = fmt == FMT_CSV ? 0 : count_events(c->t, th);
    static sink row; /* CSV: the fields every row of th starts with */
    if (fmt == FMT_TEXT)
        text_thread(c->s, th, events, total - events);
    else if (fmt == FMT_JSON)
        json_thread(c, th, total - events);
    else
        csv_thread(&row, th);
    int64_t prev = 0;
    int have_prev = 0;
    tt__owner_walk w = {0, 0};
    tt__trace_event ev;
    for (uint64_t k = 0; k < total; k++) {
        if (!tt__trace_event_at(c->t, th, k, &ev))
            continue;
        uint64_t markers, v = tt__shown_vthread(tt__owner_step(&w, &ev, &markers), &ev);
        int64_t delta = have_prev ? tt__diff_ns(ev.ns, prev) : 0;
        prev = ev.ns;
        have_prev = 1;
        if (fmt == FMT_TEXT)
            text_event(c->s, c->t, &ev, delta, v);
        else if (fmt == FMT_CSV)
            csv_event(c->s, c->t, &row, &ev, delta, v);
        else
            json_event(c, &ev, delta, v);
    }
    if (fmt == FMT_JSON)
        json_thread_end(c);
}

int dump_write(sink *s, const tt__trace *t, enum out_format fmt, int summary)
{
    if (summary)
        return summary_emit(s, t, fmt == FMT_JSON);
    if (fmt == FMT_CHROME)
        return chrome_emit(s, t);
    row_ctx c = {s, t, 1};
    if (fmt == FMT_TEXT) {
        uint64_t events = 0;
        for (uint32_t i = 0; i < t->nthreads; i++)
            events += count_events(t, &t->threads[i]);
        text_header(s, t, events);
    } else if (fmt == FMT_CSV) {
        csv_header(s);
    } else {
        json_header(&c);
    }
    for (uint32_t i = 0; i < t->nthreads; i++)
        emit_thread(&c, fmt, &t->threads[i]);
    if (fmt == FMT_JSON)
        json_footer(&c);
    return 0;
}
