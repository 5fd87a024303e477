/* threadtime: the flyweight event log.
 *
 * Per-thread rings of fixed-size records stamped with the cycle counter. An
 * event costs about one rdtsc: no lock, no allocation and no shared atomic on
 * the recording path. Calls made before tt_log_start() or after tt_log_stop()
 * record nothing and take one predictable branch into an out-of-line check.
 *
 * The recording calls are inlined into C and C++ callers (define
 * TT_NO_INLINE before including this header to call the exported functions
 * instead); every one is also a real exported symbol, which is what the Java
 * and Python bindings call. Inlined callers depend on the ring layout below,
 * so they must be rebuilt when the library's major version changes.
 *
 * Every recording call is safe from a signal handler running on the thread
 * it interrupts, and never blocks. See docs/events.md for the full contract
 * (fork, thread exit, memory bounds, crash-safe mode).
 */
#ifndef THREADTIME_EVENT_H
#define THREADTIME_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of text an event keeps; longer text is truncated to this (no NUL
 * is stored when the text fills all 16 bytes). */
#define TT_EVENT_TEXT_MAX 16

/* Limits of tt_log_options.ring_records and .max_threads. */
#define TT_LOG_RING_MIN 16u
#define TT_LOG_RING_MAX (1u << 23)
#define TT_LOG_RING_DEFAULT 16384u
#define TT_LOG_THREADS_MAX 65536u
#define TT_LOG_THREADS_DEFAULT 256u

/* What stamps the events. */
typedef enum tt_log_clock {
    TT_LOG_CLOCK_AUTO = 0,      /* the counter if it earns trust, else MONOTONIC_RAW */
    TT_LOG_CLOCK_COUNTER = 1,   /* the cycle counter, even if it looks untrustworthy */
    TT_LOG_CLOCK_MONOTONIC = 2, /* clock_gettime(CLOCK_MONOTONIC_RAW): ~25 ns/event */
} tt_log_clock;

/* Options for tt_log_start(). Set .size = sizeof(tt_log_options); fields
 * are only ever appended, so older callers keep working. Zero means "the
 * environment variable, else the default" for every field. */
typedef struct tt_log_options {
    size_t size;
    /* Records per thread ring (32 bytes each), rounded up to a power of two
     * in [TT_LOG_RING_MIN, TT_LOG_RING_MAX]. Env: THREADTIME_RING. */
    uint32_t ring_records;
    /* Crash-safe mode: rings live in this MAP_SHARED file, which is itself a
     * trace file `threadtime dump` reads after the process died. Made as a
     * dump is (see tt_log_dump) and renamed into place once allocated. Env:
     * THREADTIME_FILE. NULL: rings in anonymous memory. */
    const char *crash_file;
    /* Written at exit if not NULL. Env: THREADTIME_DUMP_AT_EXIT. */
    const char *exit_dump_path;
    /* Non-zero: tt_event_begin/end also record the thread's CPU time (as
     * tt_event_begin_cpu/end_cpu do). Env: THREADTIME_CPU=1. */
    int cpu_on_intervals;
    /* Rings at most: the memory bound (see docs/events.md). Env:
     * THREADTIME_THREADS. */
    uint32_t max_threads;
    /* Env: THREADTIME_CLOCK=auto|counter|monotonic. */
    tt_log_clock clock;
    /* Permission bits of every file the log creates (crash files, dumps),
     * less the umask: the owner's read and write and at most 0777. A trace
     * holds whatever the program recorded, so the default is 0600. Env:
     * THREADTIME_FILE_MODE (octal, e.g. 0640). */
    unsigned file_mode;
    /* Crash-safe mode: how many of this process's fork children get a crash
     * file of their own ("<crash_file>.<child pid>", each as large as this
     * one); the others record in memory. Default 0. Env:
     * THREADTIME_FORK_FILES. See docs/events.md#fork. */
    uint32_t fork_files;
    /* Non-zero: each begin_cpu and end_cpu (and begin/end where
     * cpu_on_intervals is set) also records the thread's run-queue wait so
     * far, in a run_wait record right after the begin and right before the
     * end, so that a trace shows an interval's wait for a CPU beside its CPU.
     * One pread of the thread's schedstat per bound (~0.5-0.8 us). The first
     * such bound on a thread opens that file and registers its thread-exit
     * close (as tt_self_sched does): not from a signal handler. Env:
     * THREADTIME_CPU_WAIT=1. */
    int wait_on_cpu_intervals;
} tt_log_options;

/* Starts the log (opts may be NULL). The rings of an earlier run are
 * discarded. Takes ~10 ms the first time (counter calibration).
 * Returns 0, -EALREADY (running), -EINVAL (an option or environment value
 * out of range: tt_log_error() says which; or a crash_file that is a
 * device, FIFO or socket), -EACCES (another user's symlink at crash_file),
 * -EISDIR, -ENOMEM, -ENOSPC or another errno of creating the crash-safe
 * file. A start that fails leaves every file as it was. In a setuid, setgid
 * or file-capability program no environment variable is read
 * (docs/security.md). */
TT_API int tt_log_start(const tt_log_options *opts);
/* Why the last tt_log_start() in this process refused an option, an
 * environment value or its crash file's destination (-EINVAL, or -EACCES
 * and -EISDIR for the destination): a static sentence naming the field, its
 * variable and what is allowed. "" when the last start succeeded or failed
 * for another reason (a full disk: the code says it). Never NULL; a later
 * start replaces it. A refused environment value is also named, with its
 * value, in one line on stderr. */
TT_API const char *tt_log_error(void);
/* Stops recording; rings stay readable (tt_log_dump) until the next start.
 * Returns 0 or -ESRCH (not running). */
TT_API int tt_log_stop(void);
/* Writes every ring to a trace file at path, running or stopped; the rings
 * are not consumed, but rings of exited threads are released afterwards.
 * The file is written under a new unguessable name beside path (mode
 * file_mode, 0600 by default) and renamed over it; a symlink at path is
 * followed only if it is the caller's own or its directory owner's.
 * Returns 0, -EFAULT, -ESRCH (never started), -EACCES (another user's
 * symlink at path), -EISDIR, or the errno of writing (-ENOSPC, ...; the
 * partial file is removed and the rings are intact). Not for signal
 * handlers. */
TT_API int tt_log_dump(const char *path);

/* Names the calling thread in the log (else its kernel name, 15 bytes at
 * most, at its first event is used). Every trace written afterwards keeps
 * the whole name (up to TT_EVENT_NAME_MAX bytes of UTF-8) in its
 * thread-name table, by tid; the thread's section keeps the first 15 bytes
 * as before, and a reader takes the tid's whole name only for a section
 * whose 15 bytes agree with it (so a tid a later thread reuses, or a later
 * run's ring of a thread that did not name itself again, shows its kernel
 * name). Not for the recording path (may lock, may allocate).
 * Returns 0, -EFAULT (name NULL), -EINVAL (empty, longer than
 * TT_EVENT_NAME_MAX, or not valid UTF-8), -ESRCH (log not running),
 * -ENOSPC (no ring left for this thread) or -ENOMEM. */
TT_API int tt_log_thread_name(const char *name);

/* What the running (or last) log uses. */
typedef struct tt_log_info {
    size_t size;             /* set to sizeof(tt_log_info) */
    int running;             /* 1 while recording */
    tt_log_clock source;     /* COUNTER or MONOTONIC: what stamps events */
    double counter_hz;       /* calibrated counter frequency (0: MONOTONIC) */
    uint32_t ring_records;   /* per thread, after rounding */
    uint32_t max_threads;
    int crash_safe;          /* 1 if rings live in a file */
} tt_log_info;
/* Returns 0, -EFAULT, -EINVAL (size too small) or -ESRCH (never started). */
TT_API int tt_log_info_get(tt_log_info *out);

/* ---- recording: never block, never allocate, never fail loudly ---- */

/* An instant event: ~1 rdtsc (one 32-byte record). */
TT_API void tt_event(uint32_t id);
/* With text copied into the record, truncated to TT_EVENT_TEXT_MAX bytes.
 * NULL records an empty text. */
TT_API void tt_event_text(uint32_t id, const char *text);
/* With a 64-bit value. */
TT_API void tt_event_value(uint32_t id, uint64_t value);
/* With a string kept by pointer: no copy at the event, the text (up to 255
 * bytes) is read when the log is dumped, so it must stay valid and unchanged
 * until then (a string literal). In crash-safe mode the pointer would mean
 * nothing to a later reader, so the text is copied as tt_event_text does. */
TT_API void tt_event_literal(uint32_t id, const char *text);
/* Interval bounds; a reader pairs each end with the latest open begin of
 * the same id on the same thread. */
TT_API void tt_event_begin(uint32_t id);
TT_API void tt_event_end(uint32_t id);
/* Interval bounds that also record the thread's user and system CPU time
 * (the core's consistent split at ns resolution: user + system == the
 * total, each monotonic per thread). The total is tt_self_fast_ns()'s, the
 * split proportioned by tick counts read once per fast-clock anchor: about
 * 20 ns while the thread stays on its CPU, three clock reads (~0.9 us on
 * the reference machine) after a switch (docs/fast-clock.md). */
TT_API void tt_event_begin_cpu(uint32_t id);
TT_API void tt_event_end_cpu(uint32_t id);

/* ---- names, virtual threads, probes (docs/events.md) ---- */

/* Longest name tt_event_name keeps, in bytes (UTF-8, no NUL). */
#define TT_EVENT_NAME_MAX 255

/* Names an event id in every trace written afterwards: the trace carries an
 * id -> UTF-8 name table, each id once. Naming an id again replaces its name.
 * Names live outside the log, so they may be set before tt_log_start and they
 * survive stop/start; a crash-safe file receives them as they are set.
 * Thread-safe; not for the recording path (may lock, may allocate).
 * Returns 0, -EFAULT (name NULL), -EINVAL (empty, longer than
 * TT_EVENT_NAME_MAX, or not valid UTF-8), -ENOMEM. */
TT_API int tt_event_name(uint32_t id, const char *name);

/* Virtual-thread markers, written into the calling (carrier) thread's ring,
 * one counter read each. Events the carrier records after mount(v) and before
 * unmount(v) belong to virtual thread v (a Java thread id, > 0). */
TT_API void tt_event_mount(uint64_t vthread_id);
TT_API void tt_event_unmount(uint64_t vthread_id);

/* Names virtual thread vthread_id (1 .. 2^48 - 1) in every trace written
 * afterwards, like tt_event_name (a crash-safe file receives it at once;
 * naming it again replaces the name; it survives stop/start). A reader
 * gives the name to that virtual thread's track. Thread-safe; not for the
 * recording path (may lock, may allocate). Returns 0, -EFAULT (name NULL),
 * -EINVAL (vthread_id 0 or too large; name empty, longer than
 * TT_EVENT_NAME_MAX, or not valid UTF-8), -ENOMEM. */
TT_API int tt_log_vthread_name(uint64_t vthread_id, const char *name);

/* Distinct ids one OS thread's probe accumulator holds; calls of further ids
 * are counted as overflow (the trace's summary says how many). */
#define TT_PROBE_IDS_PER_THREAD 384u

/* Probe intervals. begin records a begin event (kind 4) and returns its time
 * word (0 if the log is not running: then end records nothing and
 * accumulates nothing). end records an end event (kind 5, or kind 11 when
 * the call exited by an exception) and adds the call to the calling OS
 * thread's accumulator for id: calls, total and max wall time (now - t0),
 * exceptional exits. No lock, no shared atomic, no allocation after the
 * thread's first probe. The _cpu variants record begin_cpu/end_cpu (kinds
 * 6/7) instead and also accumulate user/system CPU for calls whose begin and
 * end ran on the same OS thread with no mount/unmount marker between them
 * (otherwise the CPU is not that call's; the summary counts such calls
 * apart). Probes ignore tt_log_options.cpu_on_intervals: the caller picks
 * the variant. Signal-safe and never blocking, like every recording call. */
TT_API uint64_t tt_probe_begin(uint32_t id);
TT_API void tt_probe_end(uint32_t id, uint64_t t0, int thrown);
TT_API uint64_t tt_probe_begin_cpu(uint32_t id);
TT_API void tt_probe_end_cpu(uint32_t id, uint64_t t0, int thrown);

/* What the figure given to tt_probe_end_measured counts. */
typedef enum tt_probe_measure {
    /* CPU time of the calling thread's own account across the call (a Java
     * virtual thread charged in exact mode): kind 12, end_cpu_total. */
    TT_PROBE_MEASURE_CPU = 1,
    /* Time the calling virtual thread was mounted across the call (mounted
     * mode): its CPU plus what its carriers lost to preemption, or blocked
     * while it was pinned; never its parked time. Kind 13, end_mounted. */
    TT_PROBE_MEASURE_MOUNTED = 2,
} tt_probe_measure;

/* Ends a probe that tt_probe_begin opened, with a figure the caller measured
 * itself: the difference of its own account across the call (begin to end,
 * the stretch still open at the end included). Records an end of kind 12 or
 * 13 carrying ns (w2) and adds the call as tt_probe_end does, plus ns to the
 * accumulator's total of that measure. The figure is the caller's own, so it
 * counts wherever begin and end ran: a virtual thread that moved carriers,
 * or saw mount/unmount markers between, still gets it. ns < 0 (the account
 * could not be read) or an unknown measure records the end with no figure
 * (kind 12, w2 all ones) and counts the call as not attributable; the call's
 * wall time counts in every case. Only a total: no user/system split.
 * Signal-safe and never blocking; ~the cost of tt_probe_end. */
TT_API void tt_probe_end_measured(uint32_t id, uint64_t t0, int64_t ns, tt_probe_measure measure, int thrown);

/* ---- the ring layout, shared with the inline path (not API) ----
 *
 * A ring is a 128-byte header followed by a power-of-two number of 32-byte
 * records; the header starts with the two words the recording path uses:
 * head (index of the next record) and slot_mask ((records - 1) * 32, so
 * that record i sits at byte (i * 32) & slot_mask of the record area).
 * A record is four 64-bit words:
 *   w0  time: counter ticks (or CLOCK_MONOTONIC_RAW ns in fallback mode)
 *   w1  bits 0..31 id, 32..39 kind, 40..63 the low 24 bits of the record's
 *       index in its ring. Written last, with release: a record counts only
 *       if its index bits match, so a reader never takes a half-written one.
 *   w2, w3  payload: text bytes, value, CPU times, literal pointer.
 */
enum {
    TT__KIND_INSTANT = 1,
    TT__KIND_TEXT = 2,
    TT__KIND_VALUE = 3,
    TT__KIND_BEGIN = 4,
    TT__KIND_END = 5,
    TT__KIND_BEGIN_CPU = 6,
    TT__KIND_END_CPU = 7,
    TT__KIND_LITERAL = 8,
    TT__KIND_MOUNT = 9,   /* w2: the virtual thread's id */
    TT__KIND_UNMOUNT = 10, /* w2: the virtual thread's id */
    /* A probe's end on an exceptional exit; pairs like an end. A kind of its
     * own, not a payload bit: callers inlined from an older header write
     * ends without touching w2, so a bit there could be a stale one. */
    TT__KIND_END_THROWN = 11,
    /* A probe's end with the call's own CPU, measured by the caller
     * (tt_probe_end_measured): w2 the ns (all ones: none), w3 bit 63 the
     * thrown bit, as end_cpu's (only the library writes these kinds). */
    TT__KIND_END_CPU_TOTAL = 12,
    /* The same with the time the caller was mounted (TT_PROBE_MEASURE_MOUNTED). */
    TT__KIND_END_MOUNTED = 13,
    /* The thread's run-queue wait so far (tt_log_options.wait_on_cpu_intervals):
     * w2 its schedstat run delay in ns, w3 its timeslices; written right
     * after a begin_cpu and right before an end_cpu, with their id (only the
     * library writes these). */
    TT__KIND_RUN_WAIT = 14,
};
/* An end_cpu, end_cpu_total or end_mounted on an exceptional exit: bit 63
 * of its w3 (a system CPU time never reaches it). Only the library writes
 * those records. */
#define TT__END_CPU_THROWN (UINT64_C(1) << 63)
#define TT__W1_KIND_SHIFT 32
#define TT__W1_TAG_SHIFT 40
#define TT__RING_HEADER_WORDS 16
#define TT__RECORD_WORDS 4

/* Per-thread state of the recording path. key equals tt__fast_key only
 * while the log runs on the counter and ring is this thread's ring of the
 * current run; any mismatch sends the call out of line. */
typedef struct tt__tls_state {
    uint64_t key;
    uint64_t *ring;
} tt__tls_state;

/* initial-exec: one %fs-relative load, no __tls_get_addr call. The block is
 * 16 bytes, small enough for the static TLS surplus glibc keeps for
 * libraries loaded with dlopen (the JVM and CPython load us that way). */
extern TT_API __thread tt__tls_state tt__tls __attribute__((tls_model("initial-exec")));
/* The key of the current run (odd) while recording on the counter; ~0
 * otherwise, which no thread's key ever equals. */
extern TT_API uint64_t tt__fast_key;
/* The out-of-line path: registration, fallback clock, stopped log. */
TT_API void tt__event_slow(uint64_t w1, uint64_t p0, uint64_t p1);
/* Non-zero while begin/end must also record CPU time. */
extern TT_API int tt__cpu_intervals;

#define TT__W1(kind, id) (((uint64_t)(kind) << TT__W1_KIND_SHIFT) | (uint32_t)(id))

/* Claims the next slot of ring: returns the record and sets *index. The
 * claim is one instruction a signal handler on this thread cannot split. */
static inline __attribute__((always_inline)) uint64_t *tt__claim_slot(uint64_t *ring, uint64_t *index)
{
    uint64_t h = tt__claim(&ring[0]);
    /* Orders the claim before the slot's stores: a dump that sees any new
     * word of this slot also sees the new head and drops the old record. */
    tt__fence_release();
    *index = h;
    return (uint64_t *)((char *)ring + TT__RING_HEADER_WORDS * 8 + ((h * TT__RECORD_WORDS * 8) & ring[1]));
}

/* Stores the payload, then the commit word. words is how many payload
 * words to store (a constant once inlined). */
static inline __attribute__((always_inline)) void tt__commit(uint64_t *rec, uint64_t index, uint64_t w1,
                                                             uint64_t p0, uint64_t p1, int words)
{
    if (words > 0)
        __atomic_store_n(&rec[2], p0, __ATOMIC_RELAXED);
    if (words > 1)
        __atomic_store_n(&rec[3], p1, __ATOMIC_RELAXED);
    /* Release: the time and payload are visible before the commit word. */
    __atomic_store_n(&rec[1], w1 | (index << TT__W1_TAG_SHIFT), __ATOMIC_RELEASE);
}

/* The recording path: ~11 ns and 16 instructions for tt_event on x86-64
 * (a key check, an xadd, one rdtsc, three stores). */
static inline __attribute__((always_inline)) void tt__record(uint64_t w1, uint64_t p0, uint64_t p1,
                                                             int words)
{
    if (__builtin_expect(tt__tls.key != __atomic_load_n(&tt__fast_key, __ATOMIC_RELAXED), 0)) {
        tt__event_slow(w1, p0, p1);
        return;
    }
    uint64_t index;
    uint64_t *rec = tt__claim_slot(tt__tls.ring, &index);
    tt__counter_store(&rec[0]);
    tt__commit(rec, index, w1, p0, p1, words);
}

/* Copies up to 16 bytes of text into two words, zero-padded. When the 16
 * bytes after text lie in one page they are loaded whole (an unaligned load
 * cannot fault inside a mapped page) and cut at the first NUL with bit
 * arithmetic: ~18 instructions, no call. Near a page end, and under ASan or
 * TSan (which would see the bytes past the NUL), a byte loop does it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TT__TEXT_BYTEWISE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TT__TEXT_BYTEWISE 1
#endif
#endif

/* Bytes below the first zero byte of v kept, the rest cleared; *ended set
 * if v holds a zero byte. */
static inline uint64_t tt__cut_at_nul(uint64_t v, int *ended)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    uint64_t zeros = (v - ones) & ~v & highs; /* lowest set bit marks the first NUL */
    if (!zeros)
        return v;
    *ended = 1;
    unsigned bit = (unsigned)__builtin_ctzll(zeros) - 7; /* first bit of the NUL byte */
    return v & ((UINT64_C(1) << bit) - 1);
}

/* Sixteen text bytes as two words, returned in registers. */
typedef struct tt__text16 {
    uint64_t w[2];
} tt__text16;

/* The careful copy; NULL gives empty text. */
static inline tt__text16 tt__text_bytewise(const char *text)
{
    tt__text16 t = {{0, 0}};
    char *out = (char *)t.w;
    for (int i = 0; text && i < TT_EVENT_TEXT_MAX && text[i]; i++)
        out[i] = text[i];
    return t;
}

static inline tt__text16 tt__text_words(const char *text)
{
#ifndef TT__TEXT_BYTEWISE
    /* text is not NULL and its 16 bytes lie in one page: offset 1..4080
     * (offset 0, a page-aligned text, takes the careful copy; NULL too). */
    if (__builtin_expect((((uintptr_t)text - 1) & 4095) < 4096 - 16, 1)) {
        int ended = 0;
        const char *p = text;
        /* Hides the object's size from the compiler, which would otherwise
         * warn about (or exploit) the read past a short literal's end. */
        __asm__("" : "+r"(p));
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        a = tt__cut_at_nul(a, &ended);
        b = ended ? 0 : tt__cut_at_nul(b, &ended);
        tt__text16 t = {{a, b}};
        return t;
    }
#endif
    return tt__text_bytewise(text);
}

static inline void tt__event_inline(uint32_t id)
{
    tt__record(TT__W1(TT__KIND_INSTANT, id), 0, 0, 0);
}

static inline void tt__event_text_inline(uint32_t id, const char *text)
{
    tt__text16 t = tt__text_words(text);
    tt__record(TT__W1(TT__KIND_TEXT, id), t.w[0], t.w[1], 2);
}

static inline void tt__event_value_inline(uint32_t id, uint64_t value)
{
    tt__record(TT__W1(TT__KIND_VALUE, id), value, 0, 1);
}

static inline void tt__event_begin_inline(uint32_t id)
{
    if (__builtin_expect(__atomic_load_n(&tt__cpu_intervals, __ATOMIC_RELAXED), 0))
        tt_event_begin_cpu(id);
    else
        tt__record(TT__W1(TT__KIND_BEGIN, id), 0, 0, 0);
}

static inline void tt__event_end_inline(uint32_t id)
{
    if (__builtin_expect(__atomic_load_n(&tt__cpu_intervals, __ATOMIC_RELAXED), 0))
        tt_event_end_cpu(id);
    else
        tt__record(TT__W1(TT__KIND_END, id), 0, 0, 0);
}

#if !defined(TT_NO_INLINE) && !defined(TT_BUILDING_LIBRARY)
#define tt_event(id) tt__event_inline(id)
#define tt_event_text(id, text) tt__event_text_inline((id), (text))
#define tt_event_value(id, value) tt__event_value_inline((id), (value))
#define tt_event_begin(id) tt__event_begin_inline(id)
#define tt_event_end(id) tt__event_end_inline(id)
#endif

/* A scoped interval (GCC and Clang): begin here, end when the enclosing
 * block exits by any path.  { TT_EVENT_SCOPE(7); ...work... } */
static inline void tt__scope_end(const uint32_t *id) { tt__event_end_inline(*id); }
#define TT__SCOPE_VAR2(line) tt__scope_##line
#define TT__SCOPE_VAR(line) TT__SCOPE_VAR2(line)
#define TT_EVENT_SCOPE(id)                                                                  \
    __attribute__((cleanup(tt__scope_end))) const uint32_t TT__SCOPE_VAR(__LINE__) = (id); \
    tt__event_begin_inline(TT__SCOPE_VAR(__LINE__))

#ifdef __cplusplus
}
#endif

#endif /* THREADTIME_EVENT_H */
