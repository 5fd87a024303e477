/* threadtime dump's parts: the output sink and its number and string
 * formatting (dump_sink.c), one emitter per format (dump_text.c,
 * dump_csv.c, dump_json.c, dump_chrome.c), the per-thread walk they share
 * and the dispatch (dump_emit.c), the --summary tables (dump_summary.c),
 * and the command itself (dump.c). What the trace means (owners, tracks,
 * pairs) comes from the core's trace model (src/trace_model.h). */
#ifndef TT_CLI_DUMP_H
#define TT_CLI_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trace_model.h"

enum dump_format { FMT_TEXT, FMT_CSV, FMT_JSON, FMT_CHROME };

/* ---- the sink (dump_sink.c) ---- */

/* Buffered output to f, or to nowhere when f is NULL (the fuzz target
 * runs every emitter without writing a file). */
typedef struct sink {
    FILE *f;
    size_t used;
    char buf[1 << 16];
} sink;

void sink_flush(sink *s);
/* put's path when the buffer is full. */
void sink_put_slow(sink *s, const char *p, size_t n);

/* Inline: the emitters call these for every few bytes of output. */
static inline void put(sink *s, const char *p, size_t n)
{
    if (s->used + n > sizeof s->buf) {
        sink_put_slow(s, p, n);
        return;
    }
    memcpy(s->buf + s->used, p, n);
    s->used += n;
}

static inline void puts_(sink *s, const char *p) { put(s, p, strlen(p)); }
void put_u64(sink *s, uint64_t v);
void put_i64(sink *s, int64_t v);
/* ns as microseconds with exactly three decimals: 1234567 -> 1234.567. */
void put_us(sink *s, int64_t ns);
/* A JSON string of bytes that may not be UTF-8 (a text): bytes above 0x7e
 * become \u00XX, so any text yields valid JSON. */
void put_json_str(sink *s, const char *p, size_t n);
/* A JSON string of valid UTF-8 (a name), kept as UTF-8 but for control
 * characters (C0, DEL and C1), which are escaped. */
void put_json_utf8(sink *s, const char *p, size_t n);
/* Untrusted bytes for a terminal or a spreadsheet (names in text and
 * --summary output): control characters (C0, DEL, C1 in UTF-8) and the
 * backslash become \xNN; everything else stays, UTF-8 included. */
void put_escaped(sink *s, const char *p, size_t n);
/* Printable ASCII kept, every other byte and '"' and '\' as \xNN (texts
 * and thread names in the text format). */
void put_plain_str(sink *s, const char *p, size_t n);
/* A CSV field (RFC 4180): escaped as put_escaped, then quoted, with quotes
 * doubled, when it holds a comma or a quote. */
void put_csv_str(sink *s, const char *p, size_t n);

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
int dump_write(sink *s, const tt__trace *t, enum dump_format fmt, int summary);

#endif /* TT_CLI_DUMP_H */
