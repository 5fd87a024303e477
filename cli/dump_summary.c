/* --summary: per name (or id), calls and times sorted by total, from the
 * probes' accumulators where the trace has them and else from the pairs
 * the trace model finds in the rings; then the hit counts of instant
 * events (line probes, Class::method@LINE). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "util.h"

/* Where a row's calls, total, max, thrown and CPU come from. */
enum { FROM_RINGS = 0, FROM_ACCUMULATORS = 1, FROM_BOTH = 2 };

/* a + b, held at the int64 range instead of overflowing: a damaged file's
 * anchors can turn durations into extremes. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Calls ended with a figure their caller measured (end_cpu_total,
 * end_mounted): totals only, no user/system split. */
typedef struct measured {
    uint64_t cpu_calls, mounted_calls;
    int64_t cpu, mounted;
} measured;

static void measured_add(measured *m, unsigned kind, int64_t ns);

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
    measured m; /* calls whose caller measured its own CPU or time mounted */
    int64_t *durs;
    size_t ndurs, cap;
    /* from the pairs, used when the id was not accumulated */
    uint64_t pair_thrown, pair_cpu_calls;
    int64_t pair_total, pair_max, pair_cpu_user, pair_cpu_system;
    measured pair_m;
    uint64_t hits; /* instant events of the id */
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
        srow *rows = slots ? tt__grow(sm->rows, &sm->cap, n / 2, sizeof *rows, n / 2) : NULL;
        if (!rows) {
            free(slots);
            sm->err = -ENOMEM;
            return NULL;
        }
        sm->rows = rows;
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

/* A pair adds its duration; an instant adds a hit. */
static void on_event(void *ctx, const tt__track *tr, const tt__step *end, const tt__step *b)
{
    summary *sm = ctx;
    (void)tr;
    if (!b) {
        srow *r = end->ev.kind == TT__KIND_INSTANT ? row_of(sm, end->ev.id) : NULL;
        if (r)
            r->hits++;
        return;
    }
    srow *r = row_of(sm, end->ev.id);
    if (!r)
        return;
    int64_t *d = tt__grow(r->durs, &r->cap, r->ndurs + 1, sizeof *d, 16);
    if (!d) {
        sm->err = -ENOMEM;
        return;
    }
    r->durs = d;
    int64_t dur = tt__diff_ns(end->ns, b->ns);
    r->durs[r->ndurs++] = dur;
    r->pair_total = sat_add(r->pair_total, dur);
    r->pair_max = dur > r->pair_max ? dur : r->pair_max;
    r->pair_thrown += (uint64_t)end->ev.thrown;
    int64_t user, sys, ns;
    if (tt__event_measured(&end->ev, &ns)) {
        measured_add(&r->pair_m, end->ev.kind, ns);
    } else if (tt__pair_cpu(b, end, &user, &sys)) {
        r->pair_cpu_calls++;
        r->pair_cpu_user = sat_add(r->pair_cpu_user, user);
        r->pair_cpu_system = sat_add(r->pair_cpu_system, sys);
    }
}

static void measured_add(measured *m, unsigned kind, int64_t ns)
{
    if (kind == TT__KIND_END_MOUNTED) {
        m->mounted_calls++;
        m->mounted = sat_add(m->mounted, ns);
    } else {
        m->cpu_calls++;
        m->cpu = sat_add(m->cpu, ns);
    }
}

static void measured_merge(measured *dst, const measured *src)
{
    dst->cpu_calls += src->cpu_calls;
    dst->cpu = sat_add(dst->cpu, src->cpu);
    dst->mounted_calls += src->mounted_calls;
    dst->mounted = sat_add(dst->mounted, src->mounted);
}

/* Calls with a CPU figure (split or total), and its sum. */
static uint64_t cpu_calls_all(const srow *r) { return r->cpu_calls + r->m.cpu_calls; }
static int64_t cpu_all(const srow *r) { return sat_add(sat_add(r->cpu_user, r->cpu_system), r->m.cpu); }
/* The user/system split is known for the row's CPU only if no call gave a total alone. */
static int split_known(const srow *r) { return r->cpu_calls > 0 && r->m.cpu_calls == 0; }

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
        r->m = (measured){en->sums.cpu_total_calls, en->sums.mounted_calls, (int64_t)en->sums.cpu_total_ns,
                          (int64_t)en->sums.mounted_ns};
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
            r->m = r->pair_m;
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
    dst->total = sat_add(dst->total, src->total);
    dst->max = src->max > dst->max ? src->max : dst->max;
    dst->thrown += src->thrown;
    dst->cpu_calls += src->cpu_calls;
    dst->cpu_user = sat_add(dst->cpu_user, src->cpu_user);
    dst->cpu_system = sat_add(dst->cpu_system, src->cpu_system);
    dst->cpu_apart += src->cpu_apart;
    measured_merge(&dst->m, &src->m);
    dst->hits += src->hits;
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

/* A row of the interval table: something was called or paired. */
static int has_calls(const srow *r) { return r->calls || r->ndurs || r->accumulated != FROM_RINGS; }

/* Hit rows by hits, most first, then by name order (the sort before). */
static int by_hits(const void *a, const void *b)
{
    const srow *x = *(const srow *const *)a, *y = *(const srow *const *)b;
    if (x->hits != y->hits)
        return x->hits > y->hits ? -1 : 1;
    return x < y ? -1 : x > y;
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
        put_cstr(s, "-");
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
        put_cstr(s, "-");
}

static void put_row_name(sink *s, const srow *r)
{
    if (r->name) {
        put_escaped(s, r->name, r->name_len);
    } else {
        put_cstr(s, "id ");
        put_u64(s, r->id);
    }
}

static void summary_text(sink *s, const summary *sm, srow **hit, size_t nhit)
{
    const tt__trace *t = sm->t;
    char line[256];
    if (t->has_summary)
        put_cstr(s, "calls, total, mean, max, thrown and CPU: every call (the probes' accumulators);\n"
                    "p50 and p99: the begin/end pairs still in the rings (column 'pairs')\n");
    else if (t->h.summary_size)
        put_cstr(s, "the trace's probe summary is damaged (see the message on stderr):\n"
                    "every figure comes from the begin/end pairs still in the rings\n");
    else
        put_cstr(s, "this trace has no probe summary (a 1.0 file, a crash-safe file, or intervals placed by hand):\n"
                    "every figure comes from the begin/end pairs still in the rings\n");
    if (t->summary_overflow) {
        snprintf(line, sizeof line,
                 "%llu calls are in no row: their id did not fit in its thread's accumulator (%u ids)\n",
                 (unsigned long long)t->summary_overflow, TT_PROBE_IDS_PER_THREAD);
        put_cstr(s, line);
    }
    put_cstr(s, "\n     calls   total_us     mean_us      p50_us      p99_us      max_us     pairs  thrown"
                "  cpu_user_us  cpu_sys_us      cpu_us  cpu_calls  name\n");
    for (size_t i = 0; i < sm->n; i++) {
        const srow *r = &sm->rows[i];
        if (!has_calls(r))
            continue;
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
        cell(s, 13, put_us_or_dash, split_known(r), r->cpu_user);
        cell(s, 12, put_us_or_dash, split_known(r), r->cpu_system);
        cell(s, 12, put_us_or_dash, cpu_calls_all(r) > 0, cpu_all(r));
        cell(s, 11, fill_u, 1, (int64_t)cpu_calls_all(r));
        put_cstr(s, "  ");
        put_row_name(s, r);
        if (r->accumulated == FROM_RINGS && t->has_summary)
            put_cstr(s, "  (from the rings)");
        else if (r->accumulated == FROM_BOTH)
            put_cstr(s, "  (partly from the rings)");
        if (r->nmore) {
            snprintf(line, sizeof line, "  (%zu ids)", r->nmore + 1);
            put_cstr(s, line);
        }
        if (r->m.cpu_calls && r->cpu_calls) {
            snprintf(line, sizeof line, "  (%llu calls' CPU without a user/system split)",
                     (unsigned long long)r->m.cpu_calls);
            put_cstr(s, line);
        }
        if (r->m.mounted_calls) {
            snprintf(line, sizeof line, "  (%llu calls mounted ", (unsigned long long)r->m.mounted_calls);
            put_cstr(s, line);
            put_us(s, r->m.mounted);
            put_cstr(s, " us: time mounted, not CPU)");
        }
        if (r->cpu_apart) {
            snprintf(line, sizeof line, "  (%llu calls' CPU not attributable)", (unsigned long long)r->cpu_apart);
            put_cstr(s, line);
        }
        put_cstr(s, "\n");
    }
    if (!nhit)
        return;
    put_cstr(s, "\ninstant events (line probes among them) still in the rings:\n\n      hits  name\n");
    for (size_t i = 0; i < nhit; i++) {
        cell(s, 10, fill_u, 1, (int64_t)hit[i]->hits);
        put_cstr(s, "  ");
        put_row_name(s, hit[i]);
        put_cstr(s, "\n");
    }
}

static void json_kv(sink *s, const char *key, int have, int64_t v)
{
    put_cstr(s, ",\"");
    put_cstr(s, key);
    put_cstr(s, "\":");
    if (have)
        put_i64(s, v);
    else
        put_cstr(s, "null");
}

static void json_ids(sink *s, const srow *r)
{
    put_cstr(s, "{\"ids\":[");
    put_u64(s, r->id);
    for (size_t k = 0; k < r->nmore; k++) {
        put_cstr(s, ",");
        put_u64(s, r->more[k]);
    }
    put_cstr(s, "],\"name\":");
    if (r->name)
        put_json_utf8(s, r->name, r->name_len);
    else
        put_cstr(s, "null");
}

static void summary_json(sink *s, const summary *sm, srow **hit, size_t nhit)
{
    const tt__trace *t = sm->t;
    put_cstr(s, "{\"source\":\"");
    put_cstr(s, t->has_summary ? "accumulators" : "rings");
    put_cstr(s, "\",\"overflow_calls\":");
    put_u64(s, t->summary_overflow);
    put_cstr(s, ",\"damaged\":");
    json_damaged(s, t);
    put_cstr(s, ",\"rows\":[");
    int first = 1;
    for (size_t i = 0; i < sm->n; i++) {
        const srow *r = &sm->rows[i];
        if (!has_calls(r))
            continue;
        int h50, h99;
        int64_t p50 = percentile(r, 0.50, &h50), p99 = percentile(r, 0.99, &h99);
        put_cstr(s, first ? "\n" : ",\n");
        first = 0;
        json_ids(s, r);
        static const char *const from[] = {"rings", "accumulators", "both"};
        put_cstr(s, ",\"from\":\"");
        put_cstr(s, from[r->accumulated]);
        put_cstr(s, "\"");
        json_kv(s, "calls", 1, (int64_t)r->calls);
        json_kv(s, "total_ns", 1, r->total);
        json_kv(s, "mean_ns", r->calls > 0, r->calls ? r->total / (int64_t)r->calls : 0);
        json_kv(s, "p50_ns", h50, p50);
        json_kv(s, "p99_ns", h99, p99);
        json_kv(s, "max_ns", 1, r->max);
        json_kv(s, "percentile_calls", 1, (int64_t)r->ndurs);
        json_kv(s, "thrown", 1, (int64_t)r->thrown);
        json_kv(s, "cpu_calls", 1, (int64_t)cpu_calls_all(r));
        json_kv(s, "cpu_ns", cpu_calls_all(r) > 0, cpu_all(r));
        json_kv(s, "cpu_user_ns", split_known(r), r->cpu_user);
        json_kv(s, "cpu_system_ns", split_known(r), r->cpu_system);
        json_kv(s, "cpu_apart", 1, (int64_t)r->cpu_apart);
        json_kv(s, "mounted_calls", 1, (int64_t)r->m.mounted_calls);
        json_kv(s, "mounted_ns", r->m.mounted_calls > 0, r->m.mounted);
        put_cstr(s, "}");
    }
    put_cstr(s, "\n],\"hits\":[");
    for (size_t i = 0; i < nhit; i++) {
        put_cstr(s, i ? ",\n" : "\n");
        json_ids(s, hit[i]);
        json_kv(s, "hits", 1, (int64_t)hit[i]->hits);
        put_cstr(s, "}");
    }
    put_cstr(s, "\n]}\n");
}

int summary_emit(sink *s, const tt__trace *t, int json)
{
    summary sm = {.t = t};
    srow **hit = NULL;
    size_t nhit = 0;
    const tt__walk_ops ops = {NULL, on_event, NULL, NULL};
    int rc = tt__trace_walk(t, &ops, &sm);
    if (rc == 0) {
        finish_rows(&sm);
        rc = sm.err ? sm.err : merge_names(&sm);
    }
    if (rc == 0) {
        for (size_t i = 0; i < sm.n; i++)
            if (sm.rows[i].ndurs)
                qsort(sm.rows[i].durs, sm.rows[i].ndurs, sizeof *sm.rows[i].durs, by_int64);
        if (sm.n)
            qsort(sm.rows, sm.n, sizeof *sm.rows, by_total);
        hit = malloc((sm.n ? sm.n : 1) * sizeof *hit);
        rc = hit ? 0 : -ENOMEM;
    }
    if (rc == 0) {
        for (size_t i = 0; i < sm.n; i++)
            if (sm.rows[i].hits)
                hit[nhit++] = &sm.rows[i];
        if (nhit)
            qsort(hit, nhit, sizeof *hit, by_hits);
        if (json)
            summary_json(s, &sm, hit, nhit);
        else
            summary_text(s, &sm, hit, nhit);
    }
    free(hit);
    for (size_t i = 0; i < sm.n; i++) {
        free(sm.rows[i].durs);
        free(sm.rows[i].more);
    }
    free(sm.rows);
    free(sm.slots);
    return rc;
}
