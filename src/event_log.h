/* Internal: what the recorder (event.c) offers the dump (event_dump.c).
 * The dependency runs one way: the dump knows this interface and nothing
 * else of the recorder; the recorder knows nothing of the dump (at exit it
 * calls the writer tt_log_start handed it, see event_exit.c). */
#ifndef TT_EVENT_LOG_H
#define TT_EVENT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Ring i of a run's table: the header, then fixed-size rings. */
static inline tt__ring *tt__ring_at(unsigned char *table, size_t ring_bytes, uint32_t i)
{
    return (tt__ring *)(table + TT__TRACE_HEADER_SIZE + (size_t)i * ring_bytes);
}

/* The current run, held still: start, stop, fork and other dumps wait
 * until tt__log_release(). Threads keep recording into its rings. */
typedef struct tt__log_view {
    tt__trace_header *hdr;  /* the live header: its counters still move */
    unsigned char *table;   /* for tt__ring_at */
    size_t ring_bytes;
    uint32_t ring_records, max_threads;
    unsigned source;        /* TT__TRACE_SOURCE_* */
    int recording;          /* 0 once tt_log_stop ran */
} tt__log_view;

/* Holds the current run and describes it in *v. Returns 0, or -ESRCH
 * (nothing held) when no log was ever started. */
int tt__log_hold(tt__log_view *v);
void tt__log_release(void);

/* What the recorder calls at process exit with a run's exit_dump_path. */
typedef int (*tt__log_writer)(const char *path);

/* tt_log_start, with the writer for the exit dump (event_exit.c). */
int tt__log_start(const tt_log_options *opts, tt__log_writer at_exit);

#endif /* TT_EVENT_LOG_H */
