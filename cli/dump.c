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

/* A JSON string: quotes, backslashes and control bytes escaped; bytes
 * above 0x7f are written as \u00XX so any name yields valid JSON. */
static void put_json_str(sink *s, const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(s, e, 2);
        } else if (c < 0x20 || c > 0x7e) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(s, e, 6);
        } else {
            put(s, (const char *)&c, 1);
        }
    }
    put(s, "\"", 1);
}

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
}

static void text_event(sink *s, const tt__trace *t, const tt__trace_event *ev, int64_t delta)
{
    char line[96];
    snprintf(line, sizeof line, "  %10llu %15lld %12lld  %-9s %10u", (unsigned long long)ev->index,
             (long long)rebase(t, ev), (long long)delta, tt__trace_kind_name(ev->kind), ev->id);
    puts_(s, line);
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
    puts_(s, "\n");
}

/* ---- one pass over every thread's events, shared by all formats ---- */

typedef struct open_interval {
    uint32_t id;
    int64_t ns;
    tt__trace_event ev;
} open_interval;

typedef struct emitter {
    enum format fmt;
    sink *s;
    const tt__trace *t;
    int first; /* JSON: no comma before the next element */
    open_interval *stack;
    size_t depth, cap;
} emitter;

static void comma(emitter *e)
{
    if (!e->first)
        put(e->s, ",\n", 2);
    e->first = 0;
}

static void chrome_common(emitter *e, const char *ph, const tt__trace_thread *th, int64_t ns)
{
    puts_(e->s, "{\"ph\":\"");
    puts_(e->s, ph);
    puts_(e->s, "\",\"pid\":");
    put_u64(e->s, e->t->h.pid);
    puts_(e->s, ",\"tid\":");
    put_u64(e->s, th->tid);
    puts_(e->s, ",\"ts\":");
    put_us(e->s, ns);
}

static void chrome_name(emitter *e, const tt__trace_event *ev, const char *what)
{
    puts_(e->s, ",\"name\":");
    if (ev->text) {
        put_json_str(e->s, ev->text, ev->text_len);
    } else {
        char n[48];
        int len = snprintf(n, sizeof n, "%s %u", what, ev->id);
        put_json_str(e->s, n, (size_t)len);
    }
}

static void chrome_cpu_args(emitter *e, const tt__trace_event *b, const tt__trace_event *end)
{
    if (!is_cpu(b->kind) || !end || !is_cpu(end->kind) || (int64_t)b->p0 < 0 || (int64_t)end->p0 < 0)
        return;
    int64_t user = (int64_t)(end->p0 - b->p0), sys = (int64_t)(end->p1 - b->p1);
    puts_(e->s, ",\"cpu_user_ns\":");
    put_i64(e->s, user);
    puts_(e->s, ",\"cpu_system_ns\":");
    put_i64(e->s, sys);
    puts_(e->s, ",\"cpu_total_ns\":");
    put_i64(e->s, user + sys);
}

static void chrome_event(emitter *e, const tt__trace_thread *th, const tt__trace_event *ev)
{
    int64_t ns = rebase(e->t, ev);
    if (is_begin(ev->kind)) {
        if (e->depth == e->cap) {
            size_t cap = e->cap ? e->cap * 2 : 64;
            open_interval *st = realloc(e->stack, cap * sizeof *st);
            if (!st)
                return; /* out of memory: this interval shows up as an unmatched end */
            e->stack = st;
            e->cap = cap;
        }
        e->stack[e->depth++] = (open_interval){ev->id, ns, *ev};
        return;
    }
    comma(e);
    if (is_end(ev->kind)) {
        size_t k = e->depth;
        while (k > 0 && e->stack[k - 1].id != ev->id)
            k--;
        if (k > 0) {
            open_interval *b = &e->stack[k - 1];
            chrome_common(e, "X", th, b->ns);
            puts_(e->s, ",\"dur\":");
            put_us(e->s, diff_ns(ns, b->ns));
            chrome_name(e, &b->ev, "interval");
            puts_(e->s, ",\"args\":{\"id\":");
            put_u64(e->s, ev->id);
            chrome_cpu_args(e, &b->ev, ev);
            puts_(e->s, "}}");
            memmove(b, b + 1, (e->depth - k) * sizeof *b);
            e->depth--;
            return;
        }
        chrome_common(e, "i", th, ns);
        chrome_name(e, ev, "end without begin");
    } else {
        chrome_common(e, "i", th, ns);
        chrome_name(e, ev, "event");
    }
    puts_(e->s, ",\"s\":\"t\",\"args\":{\"id\":");
    put_u64(e->s, ev->id);
    if (ev->kind == TT__KIND_VALUE) {
        puts_(e->s, ",\"value\":");
        put_u64(e->s, ev->p0);
    }
    puts_(e->s, "}}");
}

/* Intervals still open at the end of a thread: Perfetto draws "B" events
 * to the end of the trace. */
static void chrome_open_intervals(emitter *e, const tt__trace_thread *th)
{
    for (size_t k = 0; k < e->depth; k++) {
        comma(e);
        chrome_common(e, "B", th, e->stack[k].ns);
        chrome_name(e, &e->stack[k].ev, "interval");
        puts_(e->s, ",\"args\":{\"id\":");
        put_u64(e->s, e->stack[k].id);
        puts_(e->s, "}}");
    }
    e->depth = 0;
}

static void csv_event(emitter *e, const tt__trace_thread *th, const tt__trace_event *ev, int64_t delta)
{
    sink *s = e->s;
    put_u64(s, th->tid);
    put(s, ",", 1);
    put_csv_str(s, th->name, strlen(th->name));
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
    put(s, "\n", 1);
}

static void json_event(emitter *e, const tt__trace_event *ev, int64_t delta)
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
        comma(e);
        puts_(s, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
        put_u64(s, e->t->h.pid);
        puts_(s, ",\"tid\":");
        put_u64(s, th->tid);
        puts_(s, ",\"args\":{\"name\":");
        put_json_str(s, th->name, strlen(th->name));
        puts_(s, "}}");
        break;
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

static void emit_thread(emitter *e, const tt__trace_thread *th)
{
    uint64_t total = th->head - th->first;
    uint64_t events = e->fmt == FMT_CHROME || e->fmt == FMT_CSV ? 0 : count_events(e->t, th);
    thread_start(e, th, events, total - events);
    int64_t prev = 0;
    int have_prev = 0;
    tt__trace_event ev;
    for (uint64_t k = 0; k < total; k++) {
        if (!tt__trace_event_at(e->t, th, k, &ev))
            continue;
        int64_t delta = have_prev ? diff_ns(ev.ns, prev) : 0;
        prev = ev.ns;
        have_prev = 1;
        switch (e->fmt) {
        case FMT_TEXT: text_event(e->s, e->t, &ev, delta); break;
        case FMT_CSV: csv_event(e, th, &ev, delta); break;
        case FMT_JSON: json_event(e, &ev, delta); break;
        case FMT_CHROME: chrome_event(e, th, &ev); break;
        }
    }
    if (e->fmt == FMT_CHROME)
        chrome_open_intervals(e, th);
    if (e->fmt == FMT_JSON) {
        puts_(e->s, "]}");
        e->first = 0;
    }
}

static void emit(emitter *e)
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
        puts_(s, "tid,thread,index,t_ns,delta_ns,kind,id,value,text,cpu_user_ns,cpu_system_ns\n");
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
        puts_(s, ",\"threads\":[\n");
        break;
    case FMT_CHROME:
        puts_(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        puts_(s, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
        put_u64(s, t->h.pid);
        puts_(s, ",\"tid\":0,\"args\":{\"name\":\"threadtime pid ");
        put_u64(s, t->h.pid);
        puts_(s, "\"}}");
        e->first = 0;
        break;
    }
    for (uint32_t i = 0; i < t->nthreads; i++)
        emit_thread(e, &t->threads[i]);
    if (e->fmt == FMT_JSON || e->fmt == FMT_CHROME)
        puts_(s, "\n]}\n");
}

/* ---- the command ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: threadtime dump [--format text|csv|json|chrome] [-o OUT] FILE\n"
               "Prints a trace file written by tt_log_dump() or left by a crash-safe log.\n"
               "  --format  text (default; per-thread deltas in ns), csv, json, or chrome\n"
               "            (Chrome trace JSON for Perfetto / chrome://tracing; ts in us)\n"
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
    enum format fmt = FMT_TEXT;
    const char *path = NULL, *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
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
        emit(&e);
        flush(s);
        free(e.stack);
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
