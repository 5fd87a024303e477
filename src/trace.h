/* The trace file format (version 1.2), shared by the writer (event.c: dumps
 * and crash-safe files) and the reader (trace_read.c). docs/trace-format.md
 * is the reference; this header is its C form. All integers little-endian.
 *
 *   file header (128 bytes)
 *   section 0 .. sections-1: section header (128 bytes) + records (32 each)
 *   string table (literal texts, NUL-terminated), if strings_size > 0
 *   name table, probe summary (1.1), thread-name table (1.2), where the
 *   header points
 *
 * A crash-safe file is the live ring table itself: every ring is a section
 * laid out as a ring (record of index i at byte (i * 32) & slot_mask of
 * its body); a dump writes
 * each thread's records in index order instead. */
#ifndef TT_TRACE_H
#define TT_TRACE_H

#include <stdint.h>

#include "threadtime/event.h"

#define TT__TRACE_MAGIC "TTRACE\032\n" /* 8 bytes; \032 stops `type`, \n catches text-mode mangling */
#define TT__TRACE_MAGIC_LEN 8
#define TT__TRACE_VERSION_MAJOR 1
#define TT__TRACE_VERSION_MINOR 2
/* 1.3 adds record kind 14 (run_wait): written only by a run with the wait
 * at CPU bounds on, so every other trace stays 1.2, readable as before. */
#define TT__TRACE_VERSION_MINOR_RUN_WAIT 3
/* 1.0 files have a 128-byte header; 1.1 appends the fields from names_offset
 * on (readers take what header_size covers and zero the rest); 1.2 puts the
 * thread-name table's fields where 1.1 had reserved2 (zero in a 1.1 file). */
#define TT__TRACE_HEADER_SIZE_1_0 128
#define TT__TRACE_HEADER_SIZE 192
#define TT__TRACE_SECTION_SIZE 128
#define TT__TRACE_RECORD_SIZE 32

/* file header flags */
#define TT__TRACE_RING_LAYOUT 0x1u /* sections are rings (crash-safe file) */
#define TT__TRACE_END_ANCHOR 0x2u  /* anchors[1] is valid (dump or clean stop) */

/* what w0 of a record holds */
#define TT__TRACE_SOURCE_TSC 1u           /* x86-64 time-stamp counter ticks */
#define TT__TRACE_SOURCE_CNTVCT 2u        /* aarch64 virtual counter ticks */
#define TT__TRACE_SOURCE_MONOTONIC_RAW 3u /* CLOCK_MONOTONIC_RAW ns */

/* One instant seen through three clocks. */
typedef struct tt__anchor {
    uint64_t counter; /* w0 units (ticks, or ns for MONOTONIC_RAW) */
    int64_t mono_ns;  /* CLOCK_MONOTONIC_RAW */
    int64_t real_ns;  /* CLOCK_REALTIME */
} tt__anchor;

typedef struct tt__trace_header {
    char magic[TT__TRACE_MAGIC_LEN];
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t header_size;
    uint32_t section_size;
    uint32_t record_size;
    uint32_t flags;
    uint32_t source;
    uint32_t sections;
    uint32_t pid;
    double counter_hz;     /* calibrated at start; 0 for MONOTONIC_RAW */
    tt__anchor anchors[2]; /* [0] at start, [1] at dump or stop */
    uint64_t strings_offset;
    uint64_t strings_size;
    uint32_t threads_dropped; /* threads that found no ring (all held by live threads) */
    uint32_t rings_recycled;  /* exited threads' rings reused before a dump */
    uint32_t ring_records;
    uint32_t reserved;
    /* ---- 1.1 ---- */
    uint64_t names_offset;   /* the name table (0 if none) */
    uint64_t names_size;
    uint64_t summary_offset; /* the probe summary (0 if none) */
    uint64_t summary_size;
    uint32_t names_dropped;  /* names that did not fit in a crash-safe file's name area */
    /* ---- 1.2 ---- */
    uint32_t thread_names_dropped; /* the same for the thread-name area */
    uint64_t thread_names_offset;  /* the thread-name table (0 if none) */
    uint64_t thread_names_size;
    uint32_t reserved2[2];
} tt__trace_header;

/* The name tables: entries back to back, each a u64 word (bits 0..31 the
 * id's low half, 32..39 the name's length, 1..TT_EVENT_NAME_MAX, 40..47 the
 * namespace, 48..63 the id's bits 32..47), then the UTF-8 bytes,
 * zero-padded to a multiple of 8. A zero word ends a table early (the
 * unused tail of a crash-safe file's area). A dump writes each key once; a
 * crash-safe file appends renames, and the last one wins.
 * Event names (namespace 0: the 1.1 entry exactly) make the name table;
 * thread names (namespaces 1 and 2) a table of their own, so that a 1.1
 * reader, which knows neither, never takes a tid for an event id. */
#define TT__NAMES_EVENT 0u     /* id: an event id */
#define TT__NAMES_OS_THREAD 1u /* id: a tid */
#define TT__NAMES_VTHREAD 2u   /* id: a virtual thread's id (a Java thread id) */
#define TT__NAMES_ID_MAX ((UINT64_C(1) << 48) - 1)
#define TT__NAME_WORD_NS(ns, id, len)                                                                   \
    ((uint64_t)(uint32_t)(id) | ((uint64_t)(len) << 32) | ((uint64_t)(ns) << 40) |                      \
     (((uint64_t)(id) >> 32) << 48))
#define TT__NAME_WORD(id, len) TT__NAME_WORD_NS(TT__NAMES_EVENT, id, len)
#define TT__NAME_WORD_LEN(w) ((uint32_t)((w) >> 32) & 0xffu)
#define TT__NAME_WORD_NSPACE(w) ((unsigned)((w) >> 40) & 0xffu)
#define TT__NAME_WORD_ID(w) (((w) & 0xffffffffu) | (((w) >> 48) << 32))
#define TT__NAME_ENTRY_SIZE(len) (8 + (((uint64_t)(len) + 7) & ~UINT64_C(7)))
/* Bytes of each name area a crash-safe file reserves (two: event names,
 * thread names). */
#define TT__NAME_AREA_SIZE (64u * 1024u)

/* The probe summary: this header, then count entries of entry_size bytes,
 * sorted by id, each id once. Durations in time-word units (convert like
 * time words, without the offset); CPU in ns. */
typedef struct tt__summary_header {
    uint32_t entry_size;     /* sizeof(tt__summary_entry): 72 in 1.1, 104 with the measured ends; larger entries append fields */
    uint32_t count;
    uint64_t overflow_calls; /* calls not accumulated: their id found no room in its thread's table */
    uint64_t reserved[2];
} tt__summary_header;

/* What the probes add up per id. */
typedef struct tt__probe_sums {
    uint64_t calls;         /* tt_probe_end calls with a running begin */
    uint64_t total;         /* sum of (end - begin), time-word units */
    uint64_t max;
    uint64_t thrown;        /* calls that exited by an exception */
    uint64_t cpu_calls;     /* _cpu calls whose CPU is theirs (same OS thread, no marker between) */
    uint64_t cpu_user_ns;   /* summed over cpu_calls */
    uint64_t cpu_system_ns;
    uint64_t cpu_apart;     /* _cpu calls whose CPU could not be attributed */
    /* ---- 1.2: calls ended by tt_probe_end_measured (no user/system split) ---- */
    uint64_t cpu_total_calls; /* with the CPU of the caller's own account */
    uint64_t cpu_total_ns;
    uint64_t mounted_calls;   /* with the time the caller was mounted */
    uint64_t mounted_ns;
} tt__probe_sums;

typedef struct tt__summary_entry {
    uint32_t id;
    uint32_t reserved;
    tt__probe_sums sums;
} tt__summary_entry;

/* dst += src (max: the larger). */
static inline void tt__sums_merge(tt__probe_sums *dst, const tt__probe_sums *src)
{
    dst->calls += src->calls;
    dst->total += src->total;
    dst->max = src->max > dst->max ? src->max : dst->max;
    dst->thrown += src->thrown;
    dst->cpu_calls += src->cpu_calls;
    dst->cpu_user_ns += src->cpu_user_ns;
    dst->cpu_system_ns += src->cpu_system_ns;
    dst->cpu_apart += src->cpu_apart;
    dst->cpu_total_calls += src->cpu_total_calls;
    dst->cpu_total_ns += src->cpu_total_ns;
    dst->mounted_calls += src->mounted_calls;
    dst->mounted_ns += src->mounted_ns;
}

/* Section states (also the live ring states). */
#define TT__RING_FREE 0u
#define TT__RING_CLAIMED 1u /* being set up by its new owner; not yet readable */
#define TT__RING_LIVE 2u
#define TT__RING_EXITED 3u

/* The state word: +1 generation per owner, so a dump can tell that a ring
 * changed hands while it was being read. */
#define TT__RING_STATE(word) ((word) & 0xffu)
#define TT__RING_WITH_STATE(word, s) (((word) & ~0xffu) | (s))
#define TT__RING_NEXT_GEN(word, s) ((((word) & ~0xffu) + 0x100u) | (s))

#define TT__SECTION_MAGIC 0x52485454u /* "TTHR" */

/* A ring header, and in a file a section header. head and slot_mask come
 * first: they are the two words the inline recording path uses. */
typedef struct tt__ring {
    uint64_t head;     /* index of the next record; only the owner adds to it */
    uint64_t slot_mask; /* (records - 1) * 32: record i is at byte (i * 32) & slot_mask */
    uint64_t base;     /* head when the current owner took the ring */
    uint64_t order;    /* claim / exit sequence: recycling takes the oldest exit */
    uint64_t name[2];  /* thread name, NUL-padded, 16 bytes */
    uint32_t magic;    /* TT__SECTION_MAGIC */
    uint32_t state;    /* bits 0..7 TT__RING_*, 8..31 owner generation */
    uint32_t tid;
    uint32_t stored;   /* records in this section's body */
    uint32_t reserved[16];
} tt__ring;

_Static_assert(sizeof(tt__trace_header) == TT__TRACE_HEADER_SIZE, "file header layout");
_Static_assert(sizeof(tt__ring) == TT__TRACE_SECTION_SIZE, "section header layout");
/* Entries of 1.1 files stop after cpu_apart; a reader zeroes what a file's
 * entry_size does not cover. */
#define TT__SUMMARY_ENTRY_SIZE_1_1 72
_Static_assert(sizeof(tt__summary_header) == 32 && sizeof(tt__summary_entry) == 104, "summary layout");
_Static_assert(sizeof(tt__ring) == 8 * TT__RING_HEADER_WORDS, "ring header size the inline path assumes");

#endif /* TT_TRACE_H */
