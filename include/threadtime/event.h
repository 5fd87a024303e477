/* threadtime: the flyweight event log.
 *
 * Per-thread rings of fixed-size records stamped with the cycle counter. An
 * event costs about one rdtsc: no lock, no allocation and no shared atomic on
 * the recording path. Calls made before tt_log_start() or after tt_log_stop()
 * record nothing and cost one predictable branch.
 */
#ifndef THREADTIME_EVENT_H
#define THREADTIME_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of text an event keeps; longer text is truncated to this. */
#define TT_EVENT_TEXT_MAX 16

/* Options for tt_log_start(). Set .size = sizeof(tt_log_options); fields
 * are only ever appended, so older callers keep working. */
typedef struct tt_log_options {
    size_t size;
    /* Records per thread ring, rounded up to a power of two; 0: the
     * THREADTIME_RING environment variable, else the default. */
    uint32_t ring_records;
    /* Crash-safe mode: rings live in this MAP_SHARED file, readable by
     * `threadtime dump` after the process died. NULL: THREADTIME_FILE, else
     * rings in anonymous memory. */
    const char *crash_file;
    /* Written at exit if not NULL (else THREADTIME_DUMP_AT_EXIT). */
    const char *exit_dump_path;
    /* Record thread CPU time (tt_self_total_ns) on begin/end events. */
    int cpu_on_intervals;
} tt_log_options;

/* Starts the log (opts may be NULL). Returns 0, -EALREADY, -EINVAL, -ENOMEM,
 * or the errno of creating the crash-safe file. */
TT_API int tt_log_start(const tt_log_options *opts);
/* Stops recording; rings stay readable until the next start. */
TT_API int tt_log_stop(void);
/* Writes every ring to a trace file at path. Returns 0 or -errno (the file
 * is removed on failure, e.g. -ENOSPC). */
TT_API int tt_log_dump(const char *path);

/* Names the calling thread in the log (else its pthread name is used). */
TT_API int tt_log_thread_name(const char *name);

TT_API void tt_event(uint32_t id);
TT_API void tt_event_text(uint32_t id, const char *text);
TT_API void tt_event_value(uint32_t id, uint64_t value);
TT_API void tt_event_begin(uint32_t id);
TT_API void tt_event_end(uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* THREADTIME_EVENT_H */
