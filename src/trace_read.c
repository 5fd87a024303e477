/* Reading trace files, defensively: every offset and count in the file is
 * checked against its length before use, a damaged or truncated part stops
 * the parse with a message saying what and where, and everything before it
 * stays readable. Fuzzed by fuzz/fuzz_trace_read.c. */
#include "internal.h"
#include "event_internal.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tt__utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t more;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            more = 1, cp = c & 0x1f, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
            more = 2, cp = c & 0x0f, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
            more = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return 0; /* a continuation byte first, or a lead byte UTF-8 never uses */
        }
        if (n - i <= more)
            return 0;
        for (size_t k = 1; k <= more; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i + k] & 0x3fu);
        }
        /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
        if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return 0;
        i += more + 1;
    }
    return 1;
}

/* Notes damage; a second note is appended to the first. */
static void damage(tt__trace *t, const char *fmt, ...)
{
    size_t used = strlen(t->error);
    if (used && used + 2 < sizeof t->error) {
        memcpy(t->error + used, "; ", 3);
        used += 2;
    }
    t->damaged = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->error + used, sizeof t->error - used, fmt, ap);
    va_end(ap);
}

static int refuse(tt__trace *t, const char *what)
{
    snprintf(t->error, sizeof t->error, "%s", what);
    t->damaged = 1;
    return -EINVAL;
}

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

/* Checks the header; returns 0 or -EINVAL with error[] set. */
static int check_header(tt__trace *t)
{
    tt__trace_header *h = &t->h;
    if (t->len < TT__TRACE_MAGIC_LEN || memcmp(t->buf, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN) != 0)
        return refuse(t, "not a threadtime trace file (no TTRACE signature at the start)");
    if (t->len < TT__TRACE_HEADER_SIZE_1_0)
        return refuse(t, "truncated: the file ends inside its 128-byte header");
    /* The 1.0 part first; what a later minor appended is read below, once
     * header_size is known to lie inside the file. */
    memset(h, 0, sizeof *h);
    memcpy(h, t->buf, TT__TRACE_HEADER_SIZE_1_0);
    if (h->version_major != TT__TRACE_VERSION_MAJOR) {
        snprintf(t->error, sizeof t->error, "trace format version %u.%u; this reader knows %u.x",
                 h->version_major, h->version_minor, TT__TRACE_VERSION_MAJOR);
        t->damaged = 1;
        return -EINVAL;
    }
    if (h->header_size < TT__TRACE_HEADER_SIZE_1_0 || h->section_size != TT__TRACE_SECTION_SIZE ||
        h->record_size != TT__TRACE_RECORD_SIZE)
        return refuse(t, "damaged header: header, section or record size is not the version 1 value");
    if (h->source < TT__TRACE_SOURCE_TSC || h->source > TT__TRACE_SOURCE_MONOTONIC_RAW)
        return refuse(t, "damaged header: unknown time source");
    int has_end = (h->flags & TT__TRACE_END_ANCHOR) && h->anchors[1].counter > h->anchors[0].counter &&
                  h->anchors[1].mono_ns > h->anchors[0].mono_ns;
    if (!has_end)
        h->flags &= ~TT__TRACE_END_ANCHOR;
    if (h->source != TT__TRACE_SOURCE_MONOTONIC_RAW && !has_end &&
        !(isfinite(h->counter_hz) && h->counter_hz >= 1e3 && h->counter_hz <= 1e12))
        return refuse(t, "damaged header: no usable counter frequency");
    if (h->header_size > t->len)
        return refuse(t, "truncated: the file ends inside its header");
    if (h->version_minor >= 1) {
        size_t n = h->header_size < sizeof *h ? h->header_size : sizeof *h;
        memcpy((unsigned char *)h + TT__TRACE_HEADER_SIZE_1_0, t->buf + TT__TRACE_HEADER_SIZE_1_0,
               n - TT__TRACE_HEADER_SIZE_1_0);
    }
    if (h->version_minor < 2) {
        /* 1.1's reserved2: whatever a 1.1 writer left there means nothing. */
        h->thread_names_dropped = 0;
        h->thread_names_offset = h->thread_names_size = 0;
    }
    return 0;
}

/* 1 if [offset, offset + size) lies inside the file (and past the header). */
static int inside(const tt__trace *t, uint64_t offset, uint64_t size)
{
    return offset >= t->h.header_size && offset <= t->len && size <= t->len - offset;
}

static int name_order(const void *a, const void *b)
{
    const tt__trace_name *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    /* Equal keys: file order (the texts lie in the file in that order). */
    return x->text < y->text ? -1 : x->text > y->text;
}

/* A name table at [offset, offset + size): entries up to a zero word or the
 * table's end, sorted, each key once (the last entry wins: a crash-safe
 * file appends renames). The event table holds namespace 0 only, the
 * thread table namespaces 1 and 2. A damaged entry stops the table (what
 * came before stays); a name that is not UTF-8 is dropped alone. */
static int read_names(tt__trace *t, uint64_t offset, uint64_t size, int threads, tt__trace_name **out,
                      uint32_t *count)
{
    const char *what = threads ? "thread-name table" : "name table";
    if (!size)
        return 0;
    if (!inside(t, offset, size)) {
        damage(t, "%s missing or cut off: it should span bytes %llu..%llu of %zu", what,
               (unsigned long long)offset, (unsigned long long)offset + size, t->len);
        return 0;
    }
    const unsigned char *base = t->buf + offset;
    uint64_t off = 0;
    tt__trace_name *names = calloc(size / 16 + 1, sizeof *names); /* an entry takes 16 bytes at least */
    if (!names)
        return -ENOMEM;
    uint32_t n = 0;
    while (size - off >= 8) {
        uint64_t w;
        memcpy(&w, base + off, sizeof w);
        if (!w)
            break;
        unsigned ns = TT__NAME_WORD_NSPACE(w);
        uint32_t len = TT__NAME_WORD_LEN(w);
        uint64_t id = TT__NAME_WORD_ID(w);
        int known = threads ? (ns == TT__NAMES_OS_THREAD && id <= UINT32_MAX) || (ns == TT__NAMES_VTHREAD && id)
                            : ns == TT__NAMES_EVENT && id <= UINT32_MAX;
        if (!known || len == 0) {
            damage(t, "%s damaged at byte %llu: an entry of length %u in namespace %u", what,
                   (unsigned long long)(offset + off), len, ns);
            break;
        }
        if (TT__NAME_ENTRY_SIZE(len) > size - off) {
            damage(t, "%s cut off at byte %llu (the name of id %llu)", what, (unsigned long long)(offset + off),
                   (unsigned long long)id);
            break;
        }
        const char *text = (const char *)base + off + 8;
        if (tt__utf8_valid(text, len))
            names[n++] = (tt__trace_name){id, ns, len, text};
        else
            damage(t, "%s: the name of id %llu is not UTF-8; dropped", what, (unsigned long long)id);
        off += TT__NAME_ENTRY_SIZE(len);
    }
    qsort(names, n, sizeof *names, name_order);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m && names[m - 1].ns == names[i].ns && names[m - 1].id == names[i].id)
            m--;
        names[m++] = names[i];
    }
    *out = names;
    *count = m;
    return 0;
}

typedef struct name_key {
    const tt__trace *t;
    unsigned ns;
    uint64_t id;
} name_key;

static int tname_below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    const tt__trace_name *m = &k->t->tnames[i];
    return m->ns < k->ns || (m->ns == k->ns && m->id < k->id);
}

/* The thread-name table's entry of (ns, id), or NULL. */
static const tt__trace_name *tname_find(const tt__trace *t, unsigned ns, uint64_t id)
{
    name_key k = {t, ns, id};
    size_t at = tt__lower_bound(t->ntnames, tname_below, &k);
    return at < t->ntnames && t->tnames[at].ns == ns && t->tnames[at].id == id ? &t->tnames[at] : NULL;
}

/* Gives each thread its tid's whole name when the section's name is that
 * name's first 15 bytes, as tt_log_thread_name writes both; a tid reused by
 * a thread that never named itself keeps its kernel name. */
static void attach_thread_names(tt__trace *t)
{
    for (uint32_t i = 0; i < t->nthreads; i++) {
        tt__trace_thread *th = &t->threads[i];
        const tt__trace_name *n = tname_find(t, TT__NAMES_OS_THREAD, th->tid);
        size_t shown = strlen(th->name);
        if (n && shown == (n->len < 15 ? n->len : 15) && memcmp(th->name, n->text, shown) == 0) {
            th->full_name = n->text;
            th->full_len = n->len;
        }
    }
    for (uint32_t i = 0; i < t->ntnames; i++)
        t->nvnames += t->tnames[i].ns == TT__NAMES_VTHREAD;
}

const char *tt__trace_thread_name(const tt__trace_thread *th, size_t *len)
{
    if (th->full_name) {
        *len = th->full_len;
        return th->full_name;
    }
    *len = strlen(th->name);
    return th->name;
}

const tt__trace_name *tt__trace_vthread_names(const tt__trace *t, uint32_t *n)
{
    /* They close the table: namespace 2 sorts after 1. */
    *n = t->nvnames;
    return t->nvnames ? t->tnames + (t->ntnames - t->nvnames) : NULL;
}

const char *tt__trace_vthread_name(const tt__trace *t, uint64_t v, size_t *len)
{
    const tt__trace_name *n = tname_find(t, TT__NAMES_VTHREAD, v);
    if (!n)
        return NULL;
    *len = n->len;
    return n->text;
}

/* The probe summary: its header, then entries sorted by id. A damaged
 * header drops the summary; entries stop at the first one out of order. */
static int read_summary(tt__trace *t)
{
    const tt__trace_header *h = &t->h;
    if (!h->summary_size)
        return 0;
    tt__summary_header sh;
    if (!inside(t, h->summary_offset, h->summary_size) || h->summary_size < sizeof sh) {
        damage(t, "probe summary missing or cut off: it should span bytes %llu..%llu of %zu",
               (unsigned long long)h->summary_offset, (unsigned long long)h->summary_offset + h->summary_size,
               t->len);
        return 0;
    }
    memcpy(&sh, t->buf + h->summary_offset, sizeof sh);
    uint64_t room = h->summary_size - sizeof sh;
    if (sh.entry_size < TT__SUMMARY_ENTRY_SIZE_1_1 || sh.entry_size % 8 || sh.entry_size > 4096) {
        damage(t, "probe summary damaged: entries of %u bytes", sh.entry_size);
        return 0;
    }
    uint64_t count = sh.count;
    if (count > room / sh.entry_size) {
        damage(t, "probe summary cut off: %llu of its %u entries present",
               (unsigned long long)(room / sh.entry_size), sh.count);
        count = room / sh.entry_size;
    }
    t->summary = calloc(count ? count : 1, sizeof *t->summary);
    if (!t->summary)
        return -ENOMEM;
    const unsigned char *p = t->buf + h->summary_offset + sizeof sh;
    uint32_t n = 0;
    for (uint64_t i = 0; i < count; i++) {
        /* calloc'd: fields past a shorter (older) entry stay 0. */
        memcpy(&t->summary[n], p + i * sh.entry_size,
               sh.entry_size < sizeof *t->summary ? sh.entry_size : sizeof *t->summary);
        if (n && t->summary[n].id <= t->summary[n - 1].id) {
            damage(t, "probe summary damaged: entry %llu (id %u) is out of order; the rest is dropped",
                   (unsigned long long)i + 1, t->summary[n].id);
            break;
        }
        n++;
    }
    t->nsummary = n;
    t->summary_overflow = sh.overflow_calls;
    t->has_summary = 1;
    return 0;
}

static int name_below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    return k->t->names[i].id < k->id;
}

int32_t tt__trace_name_index(const tt__trace *t, uint32_t id)
{
    name_key k = {t, 0, id};
    size_t at = tt__lower_bound(t->nnames, name_below, &k);
    return at < t->nnames && t->names[at].id == id ? (int32_t)at : -1;
}

const char *tt__trace_name_of(const tt__trace *t, uint32_t id, size_t *len)
{
    int32_t i = tt__trace_name_index(t, id);
    if (i < 0)
        return NULL;
    *len = t->names[i].len;
    return t->names[i].text;
}

static void check_strings(tt__trace *t)
{
    tt__trace_header *h = &t->h;
    if (!h->strings_size)
        return;
    if (h->strings_offset < h->header_size || h->strings_offset > t->len ||
        h->strings_size > t->len - h->strings_offset) {
        damage(t, "string table (literal texts) missing or cut off: it should span bytes %llu..%llu of %zu",
               (unsigned long long)h->strings_offset,
               (unsigned long long)(h->strings_offset + h->strings_size), t->len);
        h->strings_size = 0;
    }
}

/* Where record k of th lies in the body and its w1, or 0 if it is not
 * there or is not a committed record of index first + k: its tag (the
 * index's low 24 bits) differs, or its kind is unknown. */
static int record_w1(const tt__trace *t, const tt__trace_thread *th, uint64_t k, uint64_t *pos, uint64_t *w1)
{
    uint64_t index = th->first + k;
    if (index >= th->head)
        return 0;
    *pos = (t->h.flags & TT__TRACE_RING_LAYOUT) ? (index & th->mask) : k;
    if (*pos >= th->stored)
        return 0;
    memcpy(w1, th->body + *pos * TT__TRACE_RECORD_SIZE + sizeof(uint64_t), sizeof *w1);
    unsigned kind = (unsigned)((*w1 >> TT__W1_KIND_SHIFT) & 0xffu);
    return (*w1 >> TT__W1_TAG_SHIFT) == (index & 0xffffffu) && tt__trace_kind_name(kind);
}

/* Counts th's records that do not decode although records before and
 * after them do. A ring's usual gaps are at its edges (the record being
 * written at the head, the one being overwritten at the tail); one inside
 * is a flipped byte in a kind or a tag, or (rarely) a write that a signal
 * handler interrupted and the thread never finished. Either way it is
 * dropped, and the trace's message says how many. */
static void count_damaged(tt__trace *t, tt__trace_thread *th)
{
    uint64_t pending = 0, pos, w1;
    int seen = 0;
    for (uint64_t k = 0; k < th->head - th->first && k < th->stored; k++) {
        if (record_w1(t, th, k, &pos, &w1)) {
            th->damaged += seen ? pending : 0;
            pending = 0;
            seen = 1;
        } else {
            pending++;
        }
    }
    if (th->damaged)
        damage(t, "tid %u: %llu records between intact ones do not decode (damaged, or never committed by an "
                  "interrupted write) and were dropped",
               th->tid, (unsigned long long)th->damaged);
}

/* Parses one section at *offset; returns 1 to go on, 0 to stop. */
static int read_section(tt__trace *t, uint32_t k, uint64_t *offset)
{
    tt__trace_header *h = &t->h;
    int ring_layout = (h->flags & TT__TRACE_RING_LAYOUT) != 0;
    if (t->len - *offset < TT__TRACE_SECTION_SIZE) {
        damage(t, "truncated: thread section %u of %u is missing (the file ends at byte %zu)", k + 1,
               h->sections, t->len);
        return 0;
    }
    tt__ring sec;
    memcpy(&sec, t->buf + *offset, sizeof sec);
    if (sec.magic != TT__SECTION_MAGIC) {
        damage(t, "damaged: thread section %u of %u at byte %llu has no section signature", k + 1,
               h->sections, (unsigned long long)*offset);
        return 0;
    }
    uint64_t cap = sec.slot_mask / TT__TRACE_RECORD_SIZE + 1;
    if (sec.slot_mask % TT__TRACE_RECORD_SIZE || !is_pow2(cap) || cap > TT_LOG_RING_MAX || sec.stored > cap || sec.head < sec.base ||
        (ring_layout && sec.stored != cap) || (!ring_layout && sec.stored > sec.head - sec.base)) {
        damage(t, "damaged: thread section %u of %u (tid %u) has inconsistent sizes", k + 1, h->sections,
               sec.tid);
        return 0;
    }
    uint64_t body = *offset + TT__TRACE_SECTION_SIZE;
    uint64_t room = (t->len - body) / TT__TRACE_RECORD_SIZE;
    uint64_t present = sec.stored < room ? sec.stored : room;
    *offset = body + (uint64_t)sec.stored * TT__TRACE_RECORD_SIZE;
    unsigned state = TT__RING_STATE(sec.state);
    if (state == TT__RING_LIVE || state == TT__RING_EXITED) {
        tt__trace_thread *th = &t->threads[t->nthreads++];
        memset(th, 0, sizeof *th);
        th->tid = sec.tid;
        th->state = state;
        memcpy(th->name, sec.name, TT_EVENT_TEXT_MAX);
        th->mask = cap - 1;
        th->head = sec.head;
        if (ring_layout)
            th->first = sec.head - sec.base > cap ? sec.head - cap : sec.base;
        else
            th->first = sec.head - sec.stored;
        th->overwritten = sec.head - sec.base > cap ? sec.head - sec.base - cap : 0;
        th->body = t->buf + body;
        th->stored = present;
        count_damaged(t, th);
    }
    if (present < sec.stored) {
        damage(t, "truncated: thread section %u of %u (tid %u) holds %llu of its %u records", k + 1,
               h->sections, sec.tid, (unsigned long long)present, sec.stored);
        return 0;
    }
    return 1;
}

int tt__trace_open(tt__trace *t, const void *buf, size_t len)
{
    memset(t, 0, sizeof *t);
    t->buf = buf;
    t->len = len;
    int rc = check_header(t);
    if (rc)
        return rc;
    tt__trace_header *h = &t->h;
    /* Never more threads than sections that fit in the file. */
    uint64_t fit = (len - h->header_size) / TT__TRACE_SECTION_SIZE;
    uint64_t n = h->sections < fit ? h->sections : fit;
    t->threads = calloc(n ? n : 1, sizeof *t->threads);
    if (!t->threads)
        return -ENOMEM;
    check_strings(t);
    if (read_names(t, h->names_offset, h->names_size, 0, &t->names, &t->nnames) ||
        read_names(t, h->thread_names_offset, h->thread_names_size, 1, &t->tnames, &t->ntnames) ||
        read_summary(t))
        return -ENOMEM;
    uint64_t offset = h->header_size;
    for (uint32_t k = 0; k < h->sections; k++)
        if (!read_section(t, k, &offset))
            break;
    attach_thread_names(t);
    return 0;
}

void tt__trace_close(tt__trace *t)
{
    free(t->threads);
    free(t->names);
    free(t->tnames);
    free(t->summary);
    t->threads = NULL;
    t->names = NULL;
    t->tnames = NULL;
    t->summary = NULL;
    t->nthreads = t->nnames = t->ntnames = t->nvnames = t->nsummary = 0;
}

const char *tt__trace_kind_name(unsigned kind)
{
    switch (kind) {
    case TT__KIND_INSTANT: return "instant";
    case TT__KIND_TEXT: return "text";
    case TT__KIND_VALUE: return "value";
    case TT__KIND_BEGIN: return "begin";
    case TT__KIND_END: return "end";
    case TT__KIND_BEGIN_CPU: return "begin_cpu";
    case TT__KIND_END_CPU: return "end_cpu";
    case TT__KIND_LITERAL: return "literal";
    case TT__KIND_MOUNT: return "mount";
    case TT__KIND_UNMOUNT: return "unmount";
    case TT__KIND_END_THROWN: return "end_thrown"; /* decoded as an end that threw */
    case TT__KIND_END_CPU_TOTAL: return "end_cpu_total";
    case TT__KIND_END_MOUNTED: return "end_mounted";
    case TT__KIND_RUN_WAIT: return "run_wait";
    }
    return NULL;
}

/* long double keeps 64 bits of mantissa: exact for any ns count a real
 * trace holds, and a damaged file's extremes saturate instead of
 * overflowing. */
static int64_t saturate(long double v)
{
    if (v >= 9223372036854775807.0L)
        return INT64_MAX;
    if (v <= -9223372036854775808.0L)
        return INT64_MIN;
    return (int64_t)v;
}

int64_t tt__trace_dur_ns(const tt__trace *t, uint64_t ticks)
{
    const tt__trace_header *h = &t->h;
    if (h->source == TT__TRACE_SOURCE_MONOTONIC_RAW)
        return saturate((long double)ticks);
    const tt__anchor *a = &h->anchors[0], *b = &h->anchors[1];
    if (h->flags & TT__TRACE_END_ANCHOR)
        return saturate((long double)ticks * ((long double)b->mono_ns - (long double)a->mono_ns) /
                        (long double)(b->counter - a->counter));
    return saturate((long double)ticks * 1e9L / (long double)h->counter_hz);
}

int64_t tt__trace_ns(const tt__trace *t, uint64_t time)
{
    const tt__trace_header *h = &t->h;
    if (h->source == TT__TRACE_SOURCE_MONOTONIC_RAW)
        return (int64_t)time;
    const tt__anchor *a = &h->anchors[0], *b = &h->anchors[1];
    long double dt = (long double)(int64_t)(time - a->counter);
    long double ns;
    if (h->flags & TT__TRACE_END_ANCHOR)
        ns = dt * ((long double)b->mono_ns - (long double)a->mono_ns) / (long double)(b->counter - a->counter);
    else
        ns = dt * 1e9L / (long double)h->counter_hz;
    return saturate((long double)a->mono_ns + ns);
}

int tt__trace_event_at(const tt__trace *t, const tt__trace_thread *th, uint64_t k, tt__trace_event *ev)
{
    uint64_t index = th->first + k, pos, w1;
    if (!record_w1(t, th, k, &pos, &w1))
        return 0;
    uint64_t w[TT__RECORD_WORDS];
    memcpy(w, th->body + pos * TT__TRACE_RECORD_SIZE, sizeof w);
    unsigned kind = (unsigned)((w[1] >> TT__W1_KIND_SHIFT) & 0xffu);
    memset(ev, 0, sizeof *ev);
    ev->index = index;
    ev->time = w[0];
    ev->ns = tt__trace_ns(t, w[0]);
    ev->id = (uint32_t)w[1];
    ev->kind = kind;
    ev->p0 = w[2];
    ev->p1 = w[3];
    /* An exceptional end reads as an end that threw; end_cpu's flag exists
     * from 1.1 on (a 1.0 w3 is the plain time). */
    if (kind == TT__KIND_END_THROWN) {
        ev->kind = TT__KIND_END;
        ev->thrown = 1;
    } else if ((kind == TT__KIND_END_CPU && t->h.version_minor >= 1) || kind == TT__KIND_END_CPU_TOTAL ||
               kind == TT__KIND_END_MOUNTED) {
        ev->thrown = (w[3] & TT__END_CPU_THROWN) != 0;
        ev->p1 = w[3] & ~TT__END_CPU_THROWN;
    }
    if (kind == TT__KIND_TEXT) {
        ev->text = (const char *)th->body + pos * TT__TRACE_RECORD_SIZE + 2 * sizeof(uint64_t);
        ev->text_len = strnlen(ev->text, TT_EVENT_TEXT_MAX);
    } else if (kind == TT__KIND_LITERAL && !(t->h.flags & TT__TRACE_RING_LAYOUT) &&
               w[2] < t->h.strings_size && w[3] < t->h.strings_size - w[2]) {
        ev->text = (const char *)t->buf + t->h.strings_offset + w[2];
        ev->text_len = strnlen(ev->text, (size_t)w[3]);
    }
    return 1;
}
