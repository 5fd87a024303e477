/* `threadtime run`: shared between the command (run.c) and the reader and
 * report (run_report.c), which `threadtime dump` also calls for a kept
 * recording. */
#ifndef TT_CLI_RUN_H
#define TT_CLI_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "out.h"

/* A kept recording (-o FILE): this header (version 1: up to flags), the
 * command line (cmd_len bytes), then each process's file as a u64 length
 * and its bytes. */
#define TT_RUNSET_MAGIC "TTRUNSET"
#define TT_RUNSET_VERSION 2
typedef struct tt__runset_header {
    char magic[8];
    uint32_t version, files;
    int32_t exit_status;    /* as threadtime returned it (128+sig for a signal) */
    uint32_t cmd_len;
    int64_t rusage_user_ns; /* wait4() of the command: the tree it waited for */
    int64_t rusage_system_ns;
    uint64_t flags;          /* bit 0: sampled from outside */
    /* Version 2. The same wait4's switch counts, and the CPU throttling of
     * threadtime's cgroup (the command's, unless it moved) over the run:
     * cgroup_error 0, or the errno that kept it from being read (then no
     * figure is known; -1: a version 1 recording, which has none). */
    int64_t rusage_voluntary, rusage_involuntary;
    int32_t cgroup_error, cgroup_version;
    int64_t cgroup_quota_us, cgroup_period_us; /* at the end; quota -1: none */
    int64_t cgroup_periods, cgroup_throttled_periods, cgroup_throttled_ns; /* end less start */
} tt__runset_header;

/* Bytes of the header of a kept recording of this version (0: unknown). */
static inline size_t tt__runset_header_size(uint32_t version)
{
    return version == 1 ? offsetof(tt__runset_header, rusage_voluntary)
           : version == TT_RUNSET_VERSION ? sizeof(tt__runset_header) : 0;
}

typedef struct tt__run_proc_buf {
    unsigned char *data;
    size_t len;
} tt__run_proc_buf;

/* Everything one report needs. */
typedef struct tt__run_set {
    tt__runset_header h;
    char *cmd;
    tt__run_proc_buf *procs;
    uint32_t nprocs;
    size_t procs_cap; /* procs has room for this many */
} tt__run_set;

/* Appends a process's file (data, len bytes, malloc'd: the set owns it
 * then) to s, the room doubled when full. 0 or -ENOMEM (data not taken). */
int tt__run_set_add(tt__run_set *s, unsigned char *data, size_t len);
/* Loads every .ttrun file of dir. 0 or -errno (message printed). */
int tt__run_set_load_dir(const char *dir, tt__run_set *s);
/* Adds to s the processes the run log (b, n bytes: run_file.h) holds that
 * have no file in s: an image that exited alone as its file would say it,
 * one with a START alone as one that never exited. Then marks each image
 * that a later image of its process followed as replaced by exec. Bytes of
 * the log that were no whole record (damage, a record cut short) are
 * skipped, their count in *skipped; every whole record is still taken.
 * The records are parsed in b itself, which this rearranges
 * (tt__run_log_compact): b must be aligned as malloc aligns (-EINVAL
 * otherwise, nothing done). 0 or -ENOMEM. */
int tt__run_set_add_log(tt__run_set *s, unsigned char *b, size_t n, size_t *skipped);
/* The magic a kept recording (threadtime run -o) starts with. */
static inline int tt__run_set_is(const unsigned char *b, size_t len)
{
    return len >= 8 && memcmp(b, TT_RUNSET_MAGIC, 8) == 0;
}
/* Parses a kept recording already read into memory (threadtime dump reads
 * it): every length it states is checked against len, and each process's
 * file as tt__run_file_check does. 0, or -EINVAL with *why what is wrong
 * (s then empty). */
int tt__run_set_parse(const unsigned char *b, size_t len, tt__run_set *s, const char **why);
/* Writes s as a kept recording. 0 or -errno. */
int tt__run_set_save(const tt__run_set *s, const char *path);
void tt__run_set_free(tt__run_set *s);

/* Writes the report in fmt (names escaped as out.h says) to out, which it
 * flushes. 0 or -ENOMEM. */
int tt__run_report(const tt__run_set *s, enum out_format fmt, int group, sink *out);

int tt__cli_run(int argc, char **argv);

#endif
