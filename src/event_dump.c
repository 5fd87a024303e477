/* tt_log_dump: a consistent trace file from rings that are still being
 * written. Each ring is copied in chunks; a record counts only if its commit
 * word carries its own index tag, and after each chunk the ring's head is
 * read again to drop what the owner overwrote during the copy. The file is
 * written beside its destination and renamed over it, so a reader never sees
 * half a dump and a failure (full disk) leaves the rings untouched. */
#include "internal.h"
#include "util.h"
#include "arch.h"
#include "event_internal.h"
#include "event_log.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Records copied per chunk: 128 KiB, small enough to stay in L2 between the
 * copy and the write. */
#define TT__DUMP_CHUNK 4096u
#define TT__DUMP_BUFFER (1u << 20)
/* Longest literal kept in the string table. */
#define TT__LITERAL_MAX 255u

typedef struct out {
    int fd;
    int err;
    unsigned char *buf;
    size_t used;
} out;

static int write_all(int fd, const void *p, size_t len)
{
    const unsigned char *s = p;
    while (len) {
        ssize_t n = write(fd, s, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

static void out_flush(out *o)
{
    if (!o->err)
        o->err = write_all(o->fd, o->buf, o->used);
    o->used = 0;
}

static void out_write(out *o, const void *p, size_t n)
{
    const unsigned char *s = p;
    if (n >= TT__DUMP_BUFFER / 2) {
        /* A chunk of records: written straight from where it was copied. */
        out_flush(o);
        if (!o->err)
            o->err = write_all(o->fd, p, n);
        return;
    }
    while (n && !o->err) {
        size_t k = TT__DUMP_BUFFER - o->used < n ? TT__DUMP_BUFFER - o->used : n;
        memcpy(o->buf + o->used, s, k);
        o->used += k;
        s += k;
        n -= k;
        if (o->used == TT__DUMP_BUFFER)
            out_flush(o);
    }
}

/* Literal texts by address: an open-addressing table of pointers and the
 * blob the file's string table is written from. */
typedef struct strtab {
    uintptr_t *keys;
    uint64_t *offsets;
    size_t cap, count;
    char *blob;
    size_t len, blob_cap;
    int err;
} strtab;

static size_t strtab_slot(const strtab *t, uintptr_t key)
{
    size_t i = (size_t)((key >> 3) * UINT64_C(0x9E3779B97F4A7C15)) & (t->cap - 1);
    while (t->keys[i] && t->keys[i] != key)
        i = (i + 1) & (t->cap - 1);
    return i;
}

static int strtab_grow(strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    strtab bigger = {.cap = cap};
    bigger.keys = calloc(cap, sizeof *bigger.keys);
    bigger.offsets = calloc(cap, sizeof *bigger.offsets);
    if (!bigger.keys || !bigger.offsets) {
        free(bigger.keys);
        free(bigger.offsets);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i])
            continue;
        size_t j = strtab_slot(&bigger, t->keys[i]);
        bigger.keys[j] = t->keys[i];
        bigger.offsets[j] = t->offsets[i];
    }
    free(t->keys);
    free(t->offsets);
    t->keys = bigger.keys;
    t->offsets = bigger.offsets;
    t->cap = cap;
    return 0;
}

/* Offset of text in the blob, adding it on first sight; sets *len. */
static uint64_t strtab_add(strtab *t, const char *text, uint64_t *len)
{
    size_t n = strnlen(text, TT__LITERAL_MAX);
    *len = n;
    if (t->err || (2 * (t->count + 1) > t->cap && (t->err = strtab_grow(t))))
        return 0;
    size_t i = strtab_slot(t, (uintptr_t)text);
    if (t->keys[i])
        return t->offsets[i];
    char *b = tt__grow(t->blob, &t->blob_cap, t->len + n + 1, 1, 4096);
    if (!b) {
        t->err = -ENOMEM;
        return 0;
    }
    t->blob = b;
    memcpy(t->blob + t->len, text, n);
    t->blob[t->len + n] = 0;
    t->keys[i] = (uintptr_t)text;
    t->offsets[i] = t->len;
    t->count++;
    t->len += n + 1;
    return t->offsets[i];
}

static int record_kind(uint64_t w1) { return (int)((w1 >> TT__W1_KIND_SHIFT) & 0xffu); }

/* Copies the records [i, i + n) of r into dst: whole committed records, and
 * zeros where a record was never committed or was overwritten meanwhile.
 * Returns 0, or 1 if the ring changed owner (the rest must be dropped). */
static int copy_chunk(tt__ring *r, uint32_t state, uint64_t i, uint32_t n, uint64_t *dst, strtab *st)
{
    uint64_t slot_mask = r->slot_mask;
    const unsigned char *recs = (const unsigned char *)(r + 1);
    for (uint32_t j = 0; j < n; j++) {
        const uint64_t *rec = (const uint64_t *)(recs + (((i + j) * TT__TRACE_RECORD_SIZE) & slot_mask));
        uint64_t *d = dst + (size_t)j * TT__RECORD_WORDS;
        /* Acquire: pairs with the commit's release; that record's time and
         * payload are visible if the tag below matches. */
        uint64_t w1 = __atomic_load_n(&rec[1], __ATOMIC_ACQUIRE);
        if ((w1 >> TT__W1_TAG_SHIFT) != ((i + j) & 0xffffffu) || record_kind(w1) == 0) {
            memset(d, 0, TT__TRACE_RECORD_SIZE);
            continue;
        }
        d[0] = __atomic_load_n(&rec[0], __ATOMIC_RELAXED);
        d[1] = w1;
        d[2] = __atomic_load_n(&rec[2], __ATOMIC_RELAXED);
        d[3] = __atomic_load_n(&rec[3], __ATOMIC_RELAXED);
    }
    /* Acquire: if a word above came from a newer lap, its writer's claim
     * (ordered before its stores by a release fence) shows in head now. */
    tt__fence_acquire();
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) != state)
        return 1;
    uint64_t cap = slot_mask / TT__TRACE_RECORD_SIZE + 1;
    for (uint32_t j = 0; j < n; j++) {
        uint64_t *d = dst + (size_t)j * TT__RECORD_WORDS;
        if (i + j + cap < head)
            memset(d, 0, TT__TRACE_RECORD_SIZE);
        else if (record_kind(d[1]) == TT__KIND_LITERAL)
            d[2] = strtab_add(st, (const char *)(uintptr_t)d[2], &d[3]);
    }
    return 0;
}

/* Writes ring r as one section in index order. */
static void dump_ring(tt__ring *r, uint32_t state, out *o, uint64_t *chunk, strtab *st)
{
    tt__ring sec;
    memset(&sec, 0, sizeof sec);
    sec.head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    sec.slot_mask = r->slot_mask;
    sec.base = __atomic_load_n(&r->base, __ATOMIC_RELAXED);
    sec.order = __atomic_load_n(&r->order, __ATOMIC_RELAXED);
    sec.name[0] = __atomic_load_n(&r->name[0], __ATOMIC_RELAXED);
    sec.name[1] = __atomic_load_n(&r->name[1], __ATOMIC_RELAXED);
    sec.magic = TT__SECTION_MAGIC;
    sec.state = TT__RING_STATE(state);
    sec.tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
    uint64_t cap = sec.slot_mask / TT__TRACE_RECORD_SIZE + 1;
    uint64_t first = sec.head > cap && sec.head - cap > sec.base ? sec.head - cap : sec.base;
    sec.stored = (uint32_t)(sec.head - first);
    out_write(o, &sec, sizeof sec);
    int dropped = 0;
    for (uint64_t i = first; i < sec.head; i += TT__DUMP_CHUNK) {
        uint32_t n = sec.head - i < TT__DUMP_CHUNK ? (uint32_t)(sec.head - i) : TT__DUMP_CHUNK;
        if (dropped || (dropped = copy_chunk(r, state, i, n, chunk, st)))
            memset(chunk, 0, (size_t)n * TT__TRACE_RECORD_SIZE);
        out_write(o, chunk, (size_t)n * TT__TRACE_RECORD_SIZE);
    }
}

/* Zero bytes that bring offset at to a multiple of 8. */
static uint64_t pad8(out *o, uint64_t at)
{
    static const unsigned char zeros[8];
    size_t n = (size_t)(-at & 7);
    out_write(o, zeros, n);
    return at + n;
}

/* A name table (TT__NAME_TABLE_*) from byte at, if it has an entry: its
 * place in *offset and *size. Returns 0 or -ENOMEM. */
static int write_names(out *o, int table, uint64_t *at, uint64_t *offset, uint64_t *size)
{
    unsigned char *names;
    size_t names_len;
    int rc = tt__names_serialize(table, &names, &names_len);
    if (rc)
        return rc;
    if (names_len) {
        *at = pad8(o, *at);
        *offset = *at;
        *size = names_len;
        out_write(o, names, names_len);
        *at += names_len;
    }
    free(names);
    return 0;
}

/* The tables after the string table, from byte at: the name table and the
 * probe summary (1.1), the thread-name table (1.2); each only if it has
 * something to say. */
static int write_tables(const tt__log_view *run, out *o, tt__trace_header *h, uint64_t at)
{
    int rc = write_names(o, TT__NAME_TABLE_EVENTS, &at, &h->names_offset, &h->names_size);
    if (rc == 0)
        rc = write_names(o, TT__NAME_TABLE_THREADS, &at, &h->thread_names_offset, &h->thread_names_size);
    if (rc)
        return rc;
    tt__summary_entry *sum;
    tt__summary_header sh = {.entry_size = sizeof *sum};
    rc = tt__acc_summary(run->key, &sum, &sh.count, &sh.overflow_calls);
    if (rc)
        return rc;
    if (sh.count || sh.overflow_calls) {
        at = pad8(o, at);
        h->summary_offset = at;
        h->summary_size = sizeof sh + (uint64_t)sh.count * sizeof *sum;
        out_write(o, &sh, sizeof sh);
        out_write(o, sum, (size_t)sh.count * sizeof *sum);
    }
    free(sum);
    return 0;
}

static int write_trace(const tt__log_view *run, out *o, uint32_t *dumped_states, strtab *st)
{
    /* The fields before the string table change only under the lock we
     * hold; the counters after it are updated atomically by registering
     * threads, so they are read that way. */
    tt__trace_header h;
    memset(&h, 0, sizeof h);
    memcpy(&h, run->hdr, offsetof(tt__trace_header, strings_offset)); /* its version too */
    h.header_size = TT__TRACE_HEADER_SIZE;
    h.ring_records = run->ring_records;
    h.flags = TT__TRACE_END_ANCHOR;
    if (run->recording ||
        !(run->hdr->flags & TT__TRACE_END_ANCHOR)) {
        int rc = tt__anchor_take(&h.anchors[1], run->source != TT__TRACE_SOURCE_MONOTONIC_RAW);
        if (rc)
            return rc;
    }
    h.threads_dropped = __atomic_load_n(&run->hdr->threads_dropped, __ATOMIC_RELAXED);
    h.rings_recycled = __atomic_load_n(&run->hdr->rings_recycled, __ATOMIC_RELAXED);
    h.sections = 0;
    out_write(o, &h, sizeof h);
    uint64_t *chunk = malloc((size_t)TT__DUMP_CHUNK * TT__TRACE_RECORD_SIZE);
    if (!chunk)
        return -ENOMEM;
    for (uint32_t i = 0; i < run->max_threads && !o->err; i++) {
        tt__ring *r = tt__ring_at(run->table, run->ring_bytes, i);
        /* Acquire: pairs with the owner's release of LIVE or EXITED; its
         * base, tid, name and last head are visible. */
        uint32_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
        unsigned s = TT__RING_STATE(state);
        if (s != TT__RING_LIVE && s != TT__RING_EXITED)
            continue;
        dump_ring(r, state, o, chunk, st);
        h.sections++;
        dumped_states[i] = s == TT__RING_EXITED ? state : 0;
    }
    free(chunk);
    if (st->err)
        return st->err;
    out_flush(o);
    if (o->err)
        return o->err;
    off_t end = lseek(o->fd, 0, SEEK_END);
    if (end < 0)
        return -errno;
    uint64_t at = (uint64_t)end;
    if (st->len) {
        h.strings_offset = at;
        h.strings_size = st->len;
        out_write(o, st->blob, st->len);
        at += st->len;
    }
    int rc = write_tables(run, o, &h, at);
    if (rc)
        return rc;
    out_flush(o);
    if (o->err)
        return o->err;
    if (pwrite(o->fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
        return errno ? -errno : -EIO;
    return 0;
}

/* Copies the finished trace in fd to path, a stream (a pipe, a terminal,
 * /dev/stdout): renaming over it would replace the device or the link, and
 * a pipe cannot be seeked back to fill in the header, so the trace was
 * built in an unnamed temporary file first. */
static int copy_to(int fd, const char *path, unsigned char *buf)
{
    /* Appended: a regular file (stdout redirected with >>, or one put there
     * since tt__file_target looked) keeps what it held. */
    int dst = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (dst < 0)
        return -errno;
    struct stat sb;
    int rc = fstat(dst, &sb) != 0 ? -errno : S_ISBLK(sb.st_mode) ? -EINVAL : 0;
    if (rc == 0 && lseek(fd, 0, SEEK_SET) < 0)
        rc = -errno;
    while (rc == 0) {
        ssize_t n = read(fd, buf, TT__DUMP_BUFFER);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        rc = write_all(dst, buf, (size_t)n);
    }
    if (close(dst) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

int tt_log_dump(const char *path)
{
    if (!path)
        return -EFAULT;
    tt__log_view view, *run = &view;
    if (tt__log_hold(run) != 0)
        return -ESRCH;
    char *tmp = NULL;
    uint32_t *dumped = calloc(run->max_threads, sizeof *dumped);
    out o = {.fd = -1, .buf = malloc(TT__DUMP_BUFFER)};
    strtab st = {0};
    char *real = NULL;
    int rc = tt__file_target(path, &real);
    int special = rc == TT__FILE_STREAM;
    if (special)
        rc = 0;
    else if (rc == TT__FILE_PLANTED)
        rc = -EACCES;
    if (rc == 0 && !(dumped && o.buf))
        rc = -ENOMEM;
    if (rc == 0) {
        if (special) {
            /* Unnamed: nothing to plant a link at, nothing left behind. */
            const char *dir = tt__env("TMPDIR");
            o.fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
            if (o.fd < 0)
                o.fd = -errno;
        } else {
            o.fd = tt__file_create(real, run->file_mode, &tmp);
        }
        rc = o.fd < 0 ? o.fd : write_trace(run, &o, dumped, &st);
        if (rc == 0 && special)
            rc = copy_to(o.fd, path, o.buf);
        if (o.fd >= 0 && close(o.fd) != 0 && rc == 0)
            rc = -errno;
        if (tmp && rc == 0)
            rc = tt__file_place(tmp, real);
        else if (tmp)
            unlink(tmp);
    }
    /* The dumped rings of exited threads are free again, unless their ring
     * changed hands meanwhile (then the state word's generation differs). */
    for (uint32_t i = 0; rc == 0 && i < run->max_threads; i++) {
        uint32_t s = dumped[i];
        if (s)
            __atomic_compare_exchange_n(&tt__ring_at(run->table, run->ring_bytes, i)->state, &s, TT__RING_WITH_STATE(s, TT__RING_FREE),
                                        0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    tt__log_release();
    free(tmp);
    free(real);
    free(dumped);
    free(o.buf);
    free(st.keys);
    free(st.offsets);
    free(st.blob);
    return rc;
}
