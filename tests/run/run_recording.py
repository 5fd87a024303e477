"""Recordings of `threadtime run` built byte by byte, as preload/run_file.h
(one process's file) and cli/run.h (a kept recording, run -o) lay them
out: for test_run_report.py and bench/run_report_bench.py."""
import struct

HEADER_SIZE, THREAD_SIZE, SAMPLE_SIZE = 4096, 128, 32
THREAD_SIZE_V1 = 96  # version 1: no scheduler figures
EMPTY, LIVE, ENDED, AT_EXIT, SEEN = 0, 1, 2, 3, 4
PTHREAD, OTHER = 1, 2
RUNNING, EXITED, EXECED = 0, 1, 2
NAME_END, SCHED, NO_WAIT = 1, 2, 4  # tt_run_thread.flags


def thread(tid, name, state=ENDED, kind=PTHREAD, start=1_000_000_000, end=1_002_000_000, user=1_000_000,
           system=500_000, name_start=None, spare=(0, 0), sched=None, no_wait=False, version=2):
    """A thread record; sched: (run_wait_ns, timeslices, voluntary, involuntary)
    read with it (flag SCHED), or None for not read; no_wait: the switches
    alone were read (flag NO_WAIT)."""
    flags = (SCHED | (NO_WAIT if no_wait else 0)) if sched and version > 1 else 0
    rec = struct.pack("<IIII qq qq 16s16s QQ", state, tid, kind, flags, start, end,
                      user, system, (name_start if name_start is not None else name)[:15],
                      name[:15] if name_start is not None else b"", *spare)
    return rec if version == 1 else rec + struct.pack("<qqqq", *(sched or (0, 0, 0, 0)))


def proc_file(pid, ppid, exe, threads, samples=(), thread_cap=None, sample_cap=4, state=EXITED, threads_used=None,
              sampler_tid=0, start=1_000_000_000, end=1_010_000_000, pad=b"\0", flags=0, sampler_cpu=0, version=2,
              key=None):
    """key: (proc_start, proc_ino, boot_offset) appended after exe, or None
    (a file from before them)."""
    thread_cap = thread_cap or max(len(threads), 1)
    used = len(threads) if threads_used is None else threads_used
    tsize = THREAD_SIZE if version == 2 else THREAD_SIZE_V1
    h = struct.pack("<8sIIIIIIIIII QQQ II QQQQ", b"TTRUN\0v1", version, HEADER_SIZE, tsize, SAMPLE_SIZE, thread_cap,
                    sample_cap, pid, ppid, flags, sampler_tid, start, start, 0, used, state, len(samples), end,
                    sampler_cpu, 0) + exe[:256].ljust(256, b"\0")
    if key:
        h += struct.pack("<QI4xQQ", key[0], 0, key[1], key[2])
    body = h + pad * (HEADER_SIZE - len(h))
    body += b"".join(threads[:thread_cap]).ljust(thread_cap * tsize, b"\0")
    ring = [struct.pack("<QIIqQ", *s, 0) for s in samples]
    return body + b"".join(ring[-sample_cap:]).ljust(sample_cap * SAMPLE_SIZE, b"\0")


def run_set(procs, cmd=b"prog", exit_status=0, rusage=(0, 0), switches=(0, 0), cgroup=(0, 1, -1, 100_000, 0, 0, 0),
            version=2):
    """A kept recording. cgroup: (error, version, quota_us, period_us,
    periods, throttled_periods, throttled_ns) over the run."""
    h = struct.pack("<8sIIiIqqQ", b"TTRUNSET", version, len(procs), exit_status, len(cmd), *rusage, 0)
    if version == 2:
        h += struct.pack("<qqiiqqqqq", *switches, *cgroup)
    return h + cmd + b"".join(struct.pack("<Q", len(p)) + p for p in procs)


def many_threads(n, clones=10):
    """A recording of one process with n + clones thread records: n/2
    threads started with pthread_create that ended (tids from 1000, named
    w#0, w#1, ...), a sampler's SEEN record of each taken before its own
    record was published (so covered by it: never counted twice), and
    `clones` threads only the sampler saw (clone()d, named clone)."""
    half = n // 2
    ts = [thread(1000 + i, b"w#%d" % i, start=1_000_000_000, end=1_005_000_000) for i in range(half)]
    ts += [thread(1000 + i, b"w#%d" % i, state=SEEN, kind=OTHER, start=1_001_000_000, end=1_004_000_000,
                  user=0, system=0, spare=(2_000_000, 1_004_000_000)) for i in range(half)]
    ts += [thread(900_000 + i, b"clone", state=SEEN, kind=OTHER, user=0, system=0,
                  spare=(3_000_000, 1_004_000_000)) for i in range(clones)]
    return run_set([proc_file(1000, 1, b"many", ts)], cmd=b"many")
