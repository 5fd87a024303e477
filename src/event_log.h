/* Internal: the state of one run of the event log, shared by event.c
 * (recording, registration) and event_dump.c (writing trace files). */
#ifndef TT_EVENT_LOG_H
#define TT_EVENT_LOG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

typedef struct tt__run {
    uint64_t key;           /* odd; what tt__tls.key holds for this run's rings */
    _Atomic int recording;  /* cleared by tt_log_stop */
    tt_log_options opts;    /* resolved; paths point at crash_path, exit_path */
    char *crash_path;       /* NULL: rings in anonymous memory */
    char *exit_path;
    int fd;                 /* the crash-safe file, or -1 */
    unsigned char *table;   /* trace header, then max_threads rings */
    tt__trace_header *hdr;  /* == table */
    size_t table_bytes, ring_bytes;
    uint32_t ring_records, max_threads;
    unsigned source;        /* TT__TRACE_SOURCE_* */
    double hz;              /* 0 for MONOTONIC_RAW */
    uint64_t order;         /* atomic counter: claim and exit sequence */
    struct tt__run *retired_next; /* list of retired runs, kept (see run_retire) */
} tt__run;

/* The current run (acquire), or NULL before the first start. */
tt__run *tt__run_current(void);
/* Ring i of run's table. */
tt__ring *tt__run_ring(const tt__run *run, uint32_t i);
/* Unmaps and frees what run holds (not run itself). */
void tt__run_release(tt__run *run);
/* The lock serializing start, stop, dump and fork. */
void tt__log_lock(void);
void tt__log_unlock(void);

#endif /* TT_EVENT_LOG_H */
