/* Reading trace files, defensively: every offset and count in the file is
 * checked against its length before use, a damaged or truncated part stops
 * the parse with a message saying what and where, and everything before it
 * stays readable. Fuzzed by fuzz/fuzz_trace_read.c. */
#include "internal.h"
#include "event_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (t->len < TT__TRACE_HEADER_SIZE)
        return refuse(t, "truncated: the file ends inside its 128-byte header");
    memcpy(h, t->buf, sizeof *h);
    if (h->version_major != TT__TRACE_VERSION_MAJOR) {
        snprintf(t->error, sizeof t->error, "trace format version %u.%u; this reader knows %u.x",
                 h->version_major, h->version_minor, TT__TRACE_VERSION_MAJOR);
        t->damaged = 1;
        return -EINVAL;
    }
    if (h->header_size < TT__TRACE_HEADER_SIZE || h->section_size != TT__TRACE_SECTION_SIZE ||
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
    return 0;
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
    uint64_t offset = h->header_size;
    for (uint32_t k = 0; k < h->sections; k++)
        if (!read_section(t, k, &offset))
            break;
    return 0;
}

void tt__trace_close(tt__trace *t)
{
    free(t->threads);
    t->threads = NULL;
    t->nthreads = 0;
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
    uint64_t index = th->first + k;
    if (index >= th->head)
        return 0;
    uint64_t pos = (t->h.flags & TT__TRACE_RING_LAYOUT) ? (index & th->mask) : k;
    if (pos >= th->stored)
        return 0;
    uint64_t w[TT__RECORD_WORDS];
    memcpy(w, th->body + pos * TT__TRACE_RECORD_SIZE, sizeof w);
    unsigned kind = (unsigned)((w[1] >> TT__W1_KIND_SHIFT) & 0xffu);
    if ((w[1] >> TT__W1_TAG_SHIFT) != (index & 0xffffffu) || !tt__trace_kind_name(kind))
        return 0;
    memset(ev, 0, sizeof *ev);
    ev->index = index;
    ev->time = w[0];
    ev->ns = tt__trace_ns(t, w[0]);
    ev->id = (uint32_t)w[1];
    ev->kind = kind;
    ev->p0 = w[2];
    ev->p1 = w[3];
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
