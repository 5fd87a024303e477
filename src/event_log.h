/* Internal: what the recorder (event.c) offers the dump (event_dump.c).
 * The dependency runs one way: the dump knows this interface and nothing
 * else of the recorder; the recorder knows nothing of the dump (at exit it
 * calls the writer tt_log_start handed it, see event_exit.c). */
#ifndef TT_EVENT_LOG_H
#define TT_EVENT_LOG_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Ring i of a run's table: the header, then fixed-size rings. */
static inline tt__ring *tt__ring_at(unsigned char *table, size_t ring_bytes, uint32_t i)
{
    return (tt__ring *)(table + TT__TRACE_HEADER_SIZE + (size_t)i * ring_bytes);
}

/* A crash-safe file's name area (event_names.c fills it, under the lock).
 * A file has two, indexed by table: event names, thread names. */
typedef struct tt__name_area {
    unsigned char *base;    /* in the shared mapping */
    size_t size, used;
    uint32_t *dropped;      /* the file header's names_dropped or thread_names_dropped */
} tt__name_area;
#define TT__NAME_TABLE_EVENTS 0
#define TT__NAME_TABLE_THREADS 1

/* The current run, held still: start, stop, fork and other dumps wait
 * until tt__log_release(). Threads keep recording into its rings. */
typedef struct tt__log_view {
    tt__trace_header *hdr;  /* the live header: its counters still move */
    unsigned char *table;   /* for tt__ring_at */
    size_t ring_bytes;
    uint32_t ring_records, max_threads;
    unsigned source;        /* TT__TRACE_SOURCE_* */
    int recording;          /* 0 once tt_log_stop ran */
    uint64_t key;           /* the run's key: what its probe sums are tagged with */
    unsigned file_mode;     /* what a dump's new file is created with */
} tt__log_view;

/* Holds the current run and describes it in *v. Returns 0, or -ESRCH
 * (nothing held) when no log was ever started. */
int tt__log_hold(tt__log_view *v);
void tt__log_release(void);
/* Takes the same lock whether or not a log ever ran; *areas is the current
 * run's two name areas (by TT__NAME_TABLE_*), or NULL. Release with
 * tt__log_release(). */
void tt__log_lock(tt__name_area **areas);

/* The out-of-line record: stamps and writes the record into the calling
 * thread's ring (if it has or can take one) and returns its time word, or
 * returns 0 if the log is not recording. Sets *run_key to the run's key. */
uint64_t tt__record_slow(uint64_t w1, uint64_t p0, uint64_t p1, uint64_t *run_key);
/* A begin_cpu or end_cpu record (kind and id in w1) with the calling
 * thread's CPU split, read at the record's own counter value (event_probe.c:
 * the probes' _cpu records are made the same way). A split that cannot be
 * read is stored as user all ones, system 0. */
void tt__record_cpu(uint64_t w1);
/* Holds back on the calling thread every signal but those a fault raises,
 * for a write of several words that a handler on this thread must not see
 * half done (the thread's ring registration, a probe table's reset). Two
 * system calls (pthread_sigmask); async-signal-safe. Returns 1 if held: pass
 * *old to tt__signals_release then. */
int tt__signals_hold(sigset_t *old);
void tt__signals_release(const sigset_t *old, int held);
/* The current (or last) run's key, 0 if none; 1 while recording. */
uint64_t tt__log_key(void);
int tt__log_recording(void);

/* ---- probe accumulators (event_probe.c) ---- */

/* Called once per process from the log's set-up, and in a fork child. */
void tt__acc_process_init(void);
void tt__acc_fork_child(void);
/* The probe sums of run key, merged over every thread (exited ones too),
 * sorted by id; *out is malloc'd (free it), NULL with *count 0 when there is
 * nothing. Returns 0 or -ENOMEM. */
int tt__acc_summary(uint64_t key, tt__summary_entry **out, uint32_t *count, uint64_t *overflow_calls);

/* ---- the name table (event_names.c) ---- */

/* Under the log's lock: writes every name into its area of areas (a new
 * crash-safe file's two). */
void tt__names_fill_area(tt__name_area *areas);
/* Under the log's lock: table TT__NAME_TABLE_* in file form (each key
 * once); *out malloc'd, NULL when empty. Returns 0 or -ENOMEM. */
int tt__names_serialize(int table, unsigned char **out, size_t *len);
/* The rules every name meets (tt_event_name's): 0 with *len its length,
 * -EFAULT (NULL), -EINVAL (empty, longer than TT_EVENT_NAME_MAX, not UTF-8). */
int tt__name_check(const char *name, size_t *len);
/* Sets the name of (ns, id) (TT__NAMES_*), len bytes checked by
 * tt__name_check; takes the log's lock. Returns 0 or -ENOMEM. */
int tt__name_set(unsigned ns, uint64_t id, const char *name, size_t len);

/* ---- creating files (event_file.c) ---- */

/* tt__file_target's answer for a FIFO, character device or socket, or a
 * file reached through /proc (/dev/stdout redirected to a file): a stream
 * to append to, not a file to replace. */
#define TT__FILE_STREAM 1
/* Its answer for another user's symlink at path (planted in a shared
 * directory): neither followed nor replaced; callers return -EACCES, as the
 * kernel's fs.protected_symlinks does. */
#define TT__FILE_PLANTED 2
/* Where a file bound for path goes. 0 with *real (malloc'd) the path to
 * create beside and rename over: path itself when absent or a regular
 * file, or the regular file a trusted symlink at path leads to (the
 * caller's own link, or its directory owner's). TT__FILE_STREAM when path
 * leads to a FIFO, character device or socket, or through /proc.
 * TT__FILE_PLANTED for another user's symlink. -EISDIR for a directory,
 * -EINVAL for a block device, another -errno if path cannot be looked at. */
int tt__file_target(const char *path, char **real);
/* Creates a new file beside path (from tt__file_target), named
 * "<path>.<16 random hex digits>.tmp", with O_EXCL|O_NOFOLLOW|O_CLOEXEC and
 * mode (less the umask). Returns the fd (read and write) with the name in
 * *tmp (malloc'd), or -errno with *tmp NULL and nothing created. */
int tt__file_create(const char *path, unsigned mode, char **tmp);
/* Renames tmp (made by tt__file_create) to path, unless path has become a
 * directory, device, FIFO or socket meanwhile (-EINVAL). On failure tmp is
 * removed and path is as it was. Returns 0 or -errno. */
int tt__file_place(const char *tmp, const char *path);

/* What the recorder calls at process exit with a run's exit_dump_path. */
typedef int (*tt__log_writer)(const char *path);

/* tt_log_start, with the writer for the exit dump (event_exit.c). */
int tt__log_start(const tt_log_options *opts, tt__log_writer at_exit);

#endif /* TT_EVENT_LOG_H */
