/* threadtime dump's parts (the sink and the escaping are the command's
 * output layer, out.h): one emitter per format (dump_text.c,
 * dump_csv.c, dump_json.c, dump_chrome.c), the per-thread walk they share
 * and the dispatch (dump_emit.c), the --summary tables (dump_summary.c),
 * and the command itself (dump.c). What the trace means (owners, tracks,
 * pairs) comes from the core's trace model (src/trace_model.h). */
#ifndef TT_CLI_DUMP_H
#define TT_CLI_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "out.h"
#include "trace_model.h"

/* ---- emitters ---- */

/* Events of one thread in the order it recorded them (text, CSV, JSON):
 * vthread is the one the event is shown under (0: none). */
typedef struct row_ctx {
    sink *s;
    const tt__trace *t;
    int first; /* JSON: no comma before the next element */
} row_ctx;

void text_header(sink *s, const tt__trace *t, uint64_t events);
void text_thread(sink *s, const tt__trace_thread *th, uint64_t events, uint64_t missing);
void text_event(sink *s, const tt__trace *t, const tt__trace_event *ev, int64_t delta, uint64_t vthread);

void csv_header(sink *s);
/* The CSV fields every row of th starts with (tid, thread name), made once
 * per thread into *row (a scratch sink). */
void csv_thread(sink *row, const tt__trace_thread *th);
void csv_event(sink *s, const tt__trace *t, const sink *row, const tt__trace_event *ev, int64_t delta,
               uint64_t vthread);

void json_header(row_ctx *c);
void json_thread(row_ctx *c, const tt__trace_thread *th, uint64_t missing);
void json_event(row_ctx *c, const tt__trace_event *ev, int64_t delta, uint64_t vthread);
void json_thread_end(row_ctx *c);
void json_footer(row_ctx *c);
/* The trace's damage note as a JSON value (a string, or null). */
void json_damaged(sink *s, const tt__trace *t);

/* Chrome trace JSON. Returns 0 or -ENOMEM. */
int chrome_emit(sink *s, const tt__trace *t);

/* --summary as text or JSON. Returns 0 or -ENOMEM. */
int summary_emit(sink *s, const tt__trace *t, int json);

/* The whole output of one format, or the summary (dump_emit.c). Returns 0
 * or -ENOMEM. */
int dump_write(sink *s, const tt__trace *t, enum out_format fmt, int summary);

#endif /* TT_CLI_DUMP_H */
