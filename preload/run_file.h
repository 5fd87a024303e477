/* The recording of `threadtime run`: one crash-safe file per process.
 *
 * A process started under `threadtime run` writes DIR/<pid>-<n>.ttrun. Its
 * header is written once as the file is made; from the process's first
 * thread record on (a thread started, a child reaped) the file is mapped
 * shared, so what a thread stores is in the page cache at once and
 * survives SIGKILL of the process. A process that never needs a record
 * before it exits (a shell's child that runs and ends, a compiler) writes
 * its one record and the header's end with pwrite at exit, and is never
 * mapped: mapping and the page faults of the two pages written through it
 * were ~15 us of such a process here. Layout:
 *
 *   header (TT_RUN_HEADER_SIZE bytes)
 *   thread_cap thread records (TT_RUN_THREAD_SIZE bytes each)
 *   sample_cap samples (TT_RUN_SAMPLE_SIZE bytes each), a ring
 *
 * A thread record is taken with one fetch-add on threads_used and becomes
 * visible when its state is stored (release); a record changes state only
 * by a compare-and-swap to TT_RUN_WRITING, so the thread's own exit and the
 * process's exit handler never both fill it. A sample is counted (release
 * on samples_head) after it is written. Nothing here takes a lock.
 *
 * The same code is compiled into the preload library and into the
 * threadtime command (which writes the file itself when it samples a
 * process from outside, and reads every file back).
 */
#ifndef TT_RUN_FILE_H
#define TT_RUN_FILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "threadtime/sched.h"

/* The magic is the family's and stays; the version says the layout. */
#define TT_RUN_MAGIC "TTRUN\0v1"
#define TT_RUN_MAGIC_LEN 8
#define TT_RUN_VERSION 2
#define TT_RUN_HEADER_SIZE 4096
#define TT_RUN_THREAD_SIZE 128
/* Version 1: thread records of 96 bytes, without the scheduler's figures.
 * A reader still takes it (tt__run_file_upgrade). */
#define TT_RUN_THREAD_SIZE_V1 96
#define TT_RUN_SAMPLE_SIZE 32
/* The most records and samples a reader takes from one file (the
 * THREADTIME_RUN_THREADS and THREADTIME_RUN_SAMPLES rows stop there). */
#define TT_RUN_THREAD_CAP_MAX (1u << 24)
#define TT_RUN_SAMPLE_CAP_MAX (1u << 26)
#define TT_RUN_NAME 16 /* the kernel's 15 bytes and a NUL */

/* Process states (header.state). */
enum {
    TT_RUN_PROC_RUNNING = 0, /* nothing said it ended: killed, or still running */
    TT_RUN_PROC_EXITED = 1,  /* the exit handler finished */
    TT_RUN_PROC_EXECED = 2,  /* the image was replaced by exec (same pid, next file) */
    /* Set by threadtime run on its copy, never by the process: */
    TT_RUN_PROC_REAPED = 3,  /* ended without its exit record (killed, or never recorded); its
                                parent reaped it, and what its threads did not record is its
                                parent's wait4 figure */
    TT_RUN_PROC_ALIVE = 4,   /* still running when the report was written (outlived the command) */
};

/* header.flags */
#define TT_RUN_FLAG_OUTSIDE 1u /* sampled from outside through /proc (no preload) */
#define TT_RUN_FLAG_ALONE 2u   /* the process's one record (threads_used 1) is in the header's
                                  page, at TT_RUN_ALONE_AT, not at record 0: the exit record of a
                                  file never mapped (tt__run_file_put_alone). Only in a file a
                                  process wrote: tt__run_file_read moves it to record 0 */
#define TT_RUN_ALONE_AT 1024

/* Thread record states. */
enum {
    TT_RUN_EMPTY = 0,
    TT_RUN_LIVE = 1,     /* started through pthread_create, not ended yet */
    TT_RUN_ENDED = 2,    /* read by the thread itself at its end */
    TT_RUN_AT_EXIT = 3,  /* alive when the process exited; read by the exit handler */
    TT_RUN_SEEN = 4,     /* found by a sampler (not started through pthread_create) */
    TT_RUN_WRITING = 5,  /* being filled; the previous state's fields are stale */
    TT_RUN_FROM_PARENT = 6, /* set by threadtime run on its copy (TT_RUN_PROC_REAPED): the
                               process's CPU by its parent's wait4 less what its threads and
                               children recorded themselves */
};

/* tt__run_thread.flags */
#define TT_RUN_NAME_END 1u
#define TT_RUN_SCHED 2u   /* run_wait_ns .. involuntary_switches were read (else unknown) */
#define TT_RUN_NO_WAIT 4u /* with TT_RUN_SCHED: the switch counts alone (run_wait_ns and
                             timeslices not read: a thread shorter than TT_RUN_WAIT_MIN_NS) */

/* A thread that ends sooner after its start has its switch counts read
 * (getrusage), not its wait for a CPU: the first read of a thread's /proc
 * files costs ~35-50 us of CPU (the kernel makes the thread's /proc entries,
 * and drops them at its exit; make bench-run, part 5), 2-3x an empty
 * thread's whole start and end, and at most ~2.5 % of a thread that lived
 * this long. */
#define TT_RUN_WAIT_MIN_NS 2000000

/* Thread record kinds. */
enum {
    TT_RUN_KIND_PTHREAD = 1, /* started through pthread_create */
    TT_RUN_KIND_OTHER = 2,   /* the main thread, or a thread started by clone() */
    TT_RUN_KIND_CHILD = 3,   /* not a thread: a child process this one reaped (tid: its pid;
                                user/system: its rusage from wait4, its reaped children's in it) */
};

typedef struct tt__run_header {
    char magic[TT_RUN_MAGIC_LEN];
    uint32_t version, header_size;
    uint32_t thread_size, sample_size;
    uint32_t thread_cap, sample_cap;
    uint32_t pid, ppid;
    uint32_t flags, sampler_tid; /* sampler_tid 0: no sampler thread in the process */
    uint64_t start_ns;           /* CLOCK_MONOTONIC when the file was made */
    uint64_t start_real_ns;      /* CLOCK_REALTIME at the same moment */
    uint64_t interval_ns;        /* the sampler's period, 0 without one */
    _Atomic uint32_t threads_used; /* records taken; above thread_cap = dropped */
    _Atomic uint32_t state;        /* TT_RUN_PROC_* */
    _Atomic uint64_t samples_head; /* samples written (the ring keeps the last sample_cap) */
    _Atomic uint64_t end_ns;       /* CLOCK_MONOTONIC at exit, or the latest sample round */
    _Atomic uint64_t sampler_cpu_ns; /* the sampler's own CPU time */
    _Atomic uint64_t sampler_rounds;
    char exe[256];               /* argv[0]-like: the command as the process saw itself */
    /* Appended within version 2 (zero in a file from before: unknown). */
    uint64_t proc_start;         /* field 22 of /proc/PID/stat, clock ticks after boot: the same for
                                    every image of one process (exec keeps it), another for a later
                                    process given the same pid. pid and proc_start name a process */
    _Atomic uint32_t children_dropped; /* children reaped that found no record (the file was full):
                                          counted in threads_used too, but they are not threads */
    uint64_t proc_ino;           /* the process's pidfs inode number (a pidfd's st_ino, Linux 6.9 and
                                    later on 64-bit): unique per process for the boot and kept by
                                    exec, so it names a process as proc_start does, without a read
                                    of /proc; 0 where the kernel has no pidfs (proc_start is read
                                    then). A process's key is the two: tt__run_same_key */
    uint64_t boot_offset;        /* tt__run_boot_offset() when the file was made: places proc_start
                                    on start_ns's clock for a reader after a suspend or a reboot */
    uint32_t file_errno;         /* the errno with which the image failed to make this file when it
                                    first needed it (set by a reader, from its TT_RUN_LOG_NOFILE
                                    record), or to reserve blocks in it (set at exit, the state left
                                    RUNNING: records were lost); 0: none */
} tt__run_header;

typedef struct tt__run_thread {
    _Atomic uint32_t state;
    uint32_t tid;
    uint32_t kind;
    uint32_t flags;            /* TT_RUN_NAME_END: name_end is the name at its end, even "" */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC; for SEEN: first and last seen */
    int64_t user_ns, system_ns; /* the consistent split; -1: unknown (SEEN from inside) */
    char name_start[TT_RUN_NAME];
    char name_end[TT_RUN_NAME];
    uint64_t spare[2];         /* the sampler's latest figure: total ns, and when */
    /* Version 2. The scheduler's accounts (threadtime/sched.h), read with
     * the split when TT_RUN_SCHED is set: time runnable but waiting for a
     * CPU, times given one, switches away by blocking and by preemption. */
    int64_t run_wait_ns, timeslices;
    int64_t voluntary_switches, involuntary_switches;
} tt__run_thread;

typedef struct tt__run_sample {
    uint64_t t_ns;   /* CLOCK_MONOTONIC */
    uint32_t tid;
    uint32_t round;  /* which sampler round (all threads of a round share it) */
    int64_t total_ns; /* the thread's CPU time then */
    uint64_t spare;
} tt__run_sample;

_Static_assert(sizeof(tt__run_header) <= TT_RUN_ALONE_AT, "header fits before a lone record");
_Static_assert(TT_RUN_ALONE_AT + TT_RUN_THREAD_SIZE <= TT_RUN_HEADER_SIZE, "a lone record fits in the header's page");
_Static_assert(sizeof(tt__run_thread) == TT_RUN_THREAD_SIZE, "thread record size");
_Static_assert(sizeof(tt__run_sample) == TT_RUN_SAMPLE_SIZE, "sample size");

/* One process's file. It is sparse: only the header and the records and
 * samples written so far have blocks, reserved a chunk ahead (doubling)
 * through a fresh open of path (checked to be the same file), so a full
 * disk ends recording, never raises SIGBUS. Until it is mapped
 * (tt__run_file_map), hdr points to head, a copy of what the file's header
 * says, and threads is NULL. A file held in memory (path "") has room for
 * all its capacity. */
typedef struct tt__run_file {
    tt__run_header *hdr;
    tt__run_thread *threads;
    tt__run_sample *samples;
    size_t bytes;                 /* of the mapping; 0 while not mapped */
    _Atomic uint32_t thread_room; /* records with blocks */
    uint32_t sample_room;         /* samples with blocks (the sampler's alone) */
    _Atomic int full;             /* a reservation failed (its errno): nothing more is taken */
    dev_t dev;
    ino_t ino;
    char path[4096 + 32];
    tt__run_header head; /* the header while the file is not mapped */
} tt__run_file;

/* The run's log: one append-only file, DIR/TT_RUN_LOG_NAME, made by
 * threadtime run before the command starts (its device and inode in the
 * environment). A lone process (one thread, no record taken, no sampler)
 * has no file of its own: it appends one START record at load and one EXIT
 * record at exit, each with a single write() on an O_APPEND descriptor,
 * which a local filesystem (tmpfs, ext4) makes whole and in order against
 * other appends (the write holds the inode's lock). Making and freeing a
 * file per process was most of what such a process cost here. A process
 * that becomes non-lone makes its file as before; the reader joins the two
 * by pid, key and start. A fork child that stays lone writes its EXIT
 * record alone (it has no START: killed, its parent's wait4 counts it). */
#define TT_RUN_LOG_NAME "run.ttlog"
#define TT_RUN_LOG_MAGIC 0x474c5454u /* "TTLG" in the file */
#define TT_RUN_LOG_END 0x444e4554u   /* "TEND": the record's last bytes were written */
#define TT_RUN_LOG_SIZE 512          /* divides a page: no record spans two */

enum {
    TT_RUN_LOG_START = 1, /* an image loaded the preload */
    TT_RUN_LOG_EXIT = 2,  /* it exited alone: its one thread's figures */
    TT_RUN_LOG_NOFILE = 3, /* it needed its own file (a thread started, a child reaped) and could
                              not make it (err: the errno): what it ran is not recorded, and it
                              writes no EXIT (its parent's wait4 counts it) */
};
#define TT_RUN_LOG_ERR_MAX 4095 /* the largest errno a NOFILE record may carry */

typedef struct tt__run_log_rec {
    uint32_t magic;      /* TT_RUN_LOG_MAGIC */
    uint16_t size;       /* TT_RUN_LOG_SIZE */
    uint16_t kind;       /* TT_RUN_LOG_* */
    uint32_t pid, ppid;
    uint64_t proc_start, proc_ino; /* the process's key, as in a file's header */
    uint64_t start_ns;   /* CLOCK_MONOTONIC at the image's start (a fork child's: the fork):
                            with pid and key, which image a record is of */
    uint64_t start_real_ns;
    uint64_t end_ns;     /* EXIT: CLOCK_MONOTONIC at exit */
    tt__run_thread thread; /* EXIT: the one thread, state TT_RUN_AT_EXIT, tid pid */
    char exe[256];       /* as the header's, NUL or not */
    uint64_t boot_offset; /* as the header's, taken with the record */
    uint32_t err;         /* NOFILE: the errno, 1 to TT_RUN_LOG_ERR_MAX */
    unsigned char spare[TT_RUN_LOG_SIZE - 456];
    uint32_t end;        /* TT_RUN_LOG_END */
} tt__run_log_rec;

_Static_assert(sizeof(tt__run_log_rec) == TT_RUN_LOG_SIZE, "log record size");
_Static_assert(4096 % TT_RUN_LOG_SIZE == 0, "a log record never spans two pages");

/* The log as threadtime run made it: its device, inode and owner (the
 * command's effective uid), and its mode, TT_RUN_LOG_MODE exactly (set
 * with fchmod, whatever the umask). A process that outlived the run can
 * still find a file at the log's path once the run's directory is gone,
 * and a filesystem reuses a freed inode number (ext4 does), so device and
 * inode alone could name another user's file made since. */
#define TT_RUN_LOG_MODE 0600
typedef struct tt__run_log_id {
    uint64_t dev, ino; /* ino 0: no log */
    uint32_t uid;      /* UINT32_MAX: none given (no file is taken) */
} tt__run_log_id;

/* Appends r to the log DIR/TT_RUN_LOG_NAME, which must be the regular file
 * id names, with TT_RUN_LOG_MODE (a file put at that path by anyone else
 * is never written): open, fstat, one write, close. 0, or -errno
 * (-ESTALE: another file; -EIO: a short write; -EFBIG: past this process's
 * file size limit). Only system calls; the check compares what fstat
 * returns, so it costs none of its own. */
int tt__run_log_append(const char *dir, const tt__run_log_id *id, const tt__run_log_rec *r);

/* The process's file size limit (RLIMIT_FSIZE) may have changed: read it
 * again before the next write or truncate of a run file. Called by the
 * preload's wrappers of setrlimit and prlimit. */
void tt__run_fsize_changed(void);

/* Parses the log held in b (n bytes) in place: each whole, valid record
 * is moved, in the log's order, to the front of b, so that b then starts
 * with *records records (b must be aligned as a tt__run_log_rec is: from
 * malloc). A stretch that is no record (garbage a program wrote, a record
 * cut short) is skipped up to the next record's magic; a log without one
 * moves nothing. Returns the bytes skipped. */
size_t tt__run_log_compact(unsigned char *b, size_t n, size_t *records);

/* Fills a new header's constant part: magic, version, layout, capacities. */
void tt__run_header_init(tt__run_header *h, uint32_t thread_cap, uint32_t sample_cap);

/* What a new file's header says beyond what tt__run_file_create reads
 * itself (its start, proc_start). */
typedef struct tt__run_file_init {
    pid_t pid, ppid;
    uint32_t thread_cap, sample_cap;
    uint32_t flags;       /* TT_RUN_FLAG_* */
    uint64_t interval_ns; /* the sampler's period, 0 without one */
    uint64_t start_ns;    /* CLOCK_MONOTONIC of the process's start; 0: now */
    const char *exe;      /* NULL: none */
    int filtered;         /* a seccomp filter is on the process: the key is its start, not a
                             pidfd's inode (the filter may kill it for pidfd_open or fstatfs) */
    uint64_t proc_start, proc_ino; /* the key when already read; both 0: read it */
    uint64_t start_real_ns;        /* CLOCK_REALTIME of the start; 0: now */
} tt__run_file_init;

/* Bytes of a file with these capacities. */
size_t tt__run_file_bytes(uint32_t thread_cap, uint32_t sample_cap);

/* Creates dir/<pid>-<n>.ttrun with the first free n, sparse at its full
 * size, and writes its header (from init, its key: proc_ino, or proc_start
 * from /proc where there is no pidfs or init->filtered) with one pwrite;
 * not mapped, unless the caller is root (mapped then: see run_file.c). A file
 * of the same process (pid and key, tt__run_same_key)
 * found on the way is marked EXECED: this process's earlier image is gone;
 * one of another process that had the pid before (killed: still RUNNING)
 * is left as it is. Only system calls and no allocation, so a fork child
 * may call it. Returns 0 or -errno with nothing left behind. */
int tt__run_file_create(const char *dir, const tt__run_file_init *init, tt__run_file *out);

/* Maps f shared, blocks reserved first for the header and a first page of
 * records (a full disk is -ENOSPC now, never SIGBUS later; samples get
 * theirs when the first is written); hdr then points into the mapping.
 * 0 (also when mapped already) or -errno, f unchanged. Only system calls. */
int tt__run_file_map(tt__run_file *f);

/* Writes, into a file that took no record (not mapped, or mapped when
 * made and its records then let go: f->threads NULL, f->hdr the mapping),
 * its one thread record rec and then its
 * header, f->head (whose threads_used, end_ns and state the caller set),
 * both in the header's page (the record at TT_RUN_ALONE_AT, the header
 * flagged TT_RUN_FLAG_ALONE): the exit record of a process that never took
 * a record before, in one page of the file, not two (a page less to make
 * and free per process on tmpfs, and to read back). 0 or -errno. Only
 * system calls: _exit() in a signal handler calls it. */
int tt__run_file_put_alone(tt__run_file *f, const tt__run_thread *rec);

/* The start of a process as its stat line says (field 22, clock ticks
 * after boot; the line of /proc/PID/stat in buf, NUL-terminated), with its
 * state and parent when those are not NULL. 0 when the line cannot be
 * parsed. */
uint64_t tt__run_stat_start(const char *buf, char *state, uint32_t *ppid);

/* proc_start of a running pid (its /proc stat file read), or 0 when it
 * cannot be read. Only system calls: a fork child may call it. */
uint64_t tt__run_proc_start(pid_t pid);

/* proc_ino of a running pid: the inode number of a pidfd of it, where the
 * pidfd is pidfs's (statfs says so: before Linux 6.9 every pidfd shares
 * one anonymous inode) and the number is 64-bit; 0 otherwise (an older
 * kernel, a sandbox that refuses pidfd_open, a 32-bit build, the pid
 * gone). ~3 system calls that, unlike the stat read, make no /proc entry
 * for the process (that read was ~27 us of a fresh process's start). Only
 * system calls: a fork child may call it. */
uint64_t tt__run_proc_ino(pid_t pid);

/* The same from a pidfd already open (0: not pidfs's, or a 32-bit build). */
uint64_t tt__run_pidfd_ino(int pidfd);

/* A running pid's key: *proc_ino (tt__run_proc_ino), or where that is 0
 * or the process is under a seccomp filter (filtered: pidfd_open and
 * fstatfs may kill it) *proc_start (tt__run_proc_start). Only system
 * calls. */
void tt__run_proc_key(pid_t pid, int filtered, uint64_t *proc_start, uint64_t *proc_ino);

/* 1 when two processes' keys (proc_start, proc_ino; either 0: unknown) can
 * be one process: the inodes equal where both have one, else the starts
 * where both have one, else 1 (nothing says they differ). */
int tt__run_same_key(uint64_t start_a, uint64_t ino_a, uint64_t start_b, uint64_t ino_b);

/* 1 when the file headers earlier and later (made after it) can be two
 * images of one process: one pid, and tt__run_same_key where their keys
 * can be compared. Where one has only its inode and the other only its
 * start they cannot: then an earlier image that exited is another process,
 * and so is a later one whose process started after the earlier image's
 * file was made (run_file.c says how exactly). */
int tt__run_same_process(const tt__run_header *earlier, const tt__run_header *later);

/* Unmaps and forgets the file (hdr NULL); NULL or a file not mapped is
 * accepted. */
void tt__run_file_close(tt__run_file *f);

/* Takes a record (state still EMPTY), reserving blocks for it first, or
 * NULL when the file is full (the drop is counted by threads_used passing
 * thread_cap) or the disk is. Only system calls: a signal handler may. */
tt__run_thread *tt__run_thread_take(tt__run_file *f);

/* Moves a record from state `from` to TT_RUN_WRITING; 1 if this caller won. */
int tt__run_thread_claim(tt__run_thread *t, uint32_t from);

/* Stores a read of the thread's scheduler accounts in t (TT_RUN_SCHED;
 * TT_RUN_NO_WAIT too where s->run_wait_ns is -1: the switches alone). */
void tt__run_thread_sched(tt__run_thread *t, const tt_sched *s);

/* Publishes a record's fields with state `to` (release). */
void tt__run_thread_publish(tt__run_thread *t, uint32_t to);

/* Appends one sample to the ring (none once the disk is full). One writer
 * at a time (the sampler). */
void tt__run_sample_add(tt__run_file *f, uint64_t t_ns, uint32_t tid, uint32_t round, int64_t total_ns);

/* CLOCK_MONOTONIC / CLOCK_REALTIME in ns. */
uint64_t tt__run_now(void);
uint64_t tt__run_now_real(void);
/* CLOCK_BOOTTIME - CLOCK_MONOTONIC (the time suspended since boot) in ns,
 * plus 1: 0 says unknown (a file or record from before it was kept). */
uint64_t tt__run_boot_offset(void);

/* Reads a process's file back from fd, a regular file of size bytes (a
 * reader's copy): its header, the
 * records taken (and one spare) and the samples the ring still holds, with its
 * capacities cut to those, so a copy is as large as what was recorded,
 * not as the file; a version 1 file comes back in this version's layout.
 * NULL when the file is shorter than its header says or damaged
 * (tt__run_file_check), or out of memory, with *why set; else *len is set. */
unsigned char *tt__run_file_read(int fd, off_t size, size_t *len, const char **why);

/* A process's file held in memory (b, n bytes, malloc'd) in this version's
 * layout: b itself when it is in it, else (version 1) a new copy with the
 * thread records widened and their scheduler figures unknown, b freed.
 * NULL with *why set (b freed) when b is neither, or out of memory. The
 * result still needs tt__run_file_check. */
unsigned char *tt__run_file_upgrade(unsigned char *b, size_t *n, const char **why);

/* Checks that buf (n bytes, e.g. a whole file read back) holds a complete
 * header with capacities that fit n. 0 or -EINVAL with *why set. */
int tt__run_file_check(const void *buf, size_t n, const char **why);

#endif /* TT_RUN_FILE_H */
