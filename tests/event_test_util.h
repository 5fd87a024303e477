/* Helpers shared by the event-log tests: dump to a temporary file and read
 * it back through the trace reader. */
#ifndef TT_EVENT_TEST_UTIL_H
#define TT_EVENT_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event_internal.h"
#include "threadtime/threadtime.h"
#include "tt_test.h"

/* A loaded trace file: its bytes and the parse. */
typedef struct loaded_trace {
    unsigned char *bytes;
    size_t len;
    tt__trace t;
    int rc;
} loaded_trace;

/* A path unique to this process and tag, in TMPDIR or /tmp. */
static inline void temp_path(char *buf, size_t n, const char *tag)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/tt_%s_%d.trace", dir && *dir ? dir : "/tmp", tag, (int)getpid());
}

/* Reads a whole file into memory; returns its length or -1. */
static inline long read_file(const char *path, unsigned char **out)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    unsigned char *b = malloc((size_t)st.st_size + 1);
    long got = 0;
    while (b && got < st.st_size) {
        ssize_t n = read(fd, b + got, (size_t)(st.st_size - got));
        if (n <= 0)
            break;
        got += n;
    }
    close(fd);
    *out = b;
    return b ? got : -1;
}

static inline int load_trace(const char *path, loaded_trace *lt)
{
    long n = read_file(path, &lt->bytes);
    lt->len = n < 0 ? 0 : (size_t)n;
    lt->rc = n < 0 ? -EIO : tt__trace_open(&lt->t, lt->bytes, lt->len);
    return lt->rc;
}

/* Dumps the log to a temporary file and loads it. */
static inline int dump_and_load(const char *tag, loaded_trace *lt)
{
    char path[256];
    temp_path(path, sizeof path, tag);
    int rc = tt_log_dump(path);
    CHECK_OP(rc, ==, 0);
    if (rc == 0)
        rc = load_trace(path, lt);
    unlink(path);
    return rc;
}

static inline void free_trace(loaded_trace *lt)
{
    if (lt->rc != -EIO)
        tt__trace_close(&lt->t);
    free(lt->bytes);
    lt->bytes = NULL;
}

/* The section of thread tid, or NULL. */
static inline const tt__trace_thread *find_thread(const tt__trace *t, uint32_t tid)
{
    for (uint32_t i = 0; i < t->nthreads; i++)
        if (t->threads[i].tid == tid)
            return &t->threads[i];
    return NULL;
}

/* Committed events of th. */
static inline uint64_t count_committed(const tt__trace *t, const tt__trace_thread *th)
{
    tt__trace_event ev;
    uint64_t n = 0;
    for (uint64_t k = 0; k < th->head - th->first; k++)
        n += (uint64_t)tt__trace_event_at(t, th, k, &ev);
    return n;
}

static inline tt_log_options small_log(uint32_t ring, uint32_t threads)
{
    tt_log_options o = {.size = sizeof o, .ring_records = ring, .max_threads = threads};
    return o;
}

/* A thread body: names itself, then records events value events
 * (id 2, values 0, 1, 2, ...). */
typedef struct value_thread_arg {
    const char *name;
    uint64_t events;
} value_thread_arg;

static inline void *value_thread(void *p)
{
    const value_thread_arg *a = p;
    tt_log_thread_name(a->name);
    for (uint64_t i = 0; i < a->events; i++)
        tt_event_value(2, i);
    return NULL;
}

static inline void spin_until(atomic_int *flag)
{
    while (!atomic_load(flag))
        sched_yield();
}

#endif /* TT_EVENT_TEST_UTIL_H */
