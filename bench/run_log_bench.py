#!/usr/bin/env python3
"""The memory threadtime run holds to read its run's log (make
bench-run-log): a command that appends N lone processes' START and EXIT
records (1 KiB a process, fake pids) to the log and exits, run under
`threadtime run`; the peak resident memory (ru_maxrss of wait4 on
threadtime, which the command's own ~10 MB stays below) and the wall time,
medians of ROUNDS runs. N = 0 is the floor (the command and an empty log).
With a BASELINE threadtime, each row runs it too, alternating.

Usage: run_log_bench.py THREADTIME TMPDIR [BASELINE] [ROUNDS] [N...]"""
import os
import statistics
import subprocess
import sys
import time

# Appends sys.argv[1] START/EXIT pairs, each a record of run_file.h's
# tt__run_log_rec (512 bytes, little-endian), of pids from 4,000,000 on (above
# pid_max, so no real process of the run shares one).
WRITER = r"""
import os, struct, sys
n = int(sys.argv[1])
def rec(kind, pid):
    b = bytearray(512)
    struct.pack_into("<IHHII", b, 0, 0x474C5454, 512, kind, pid, 1)
    struct.pack_into("<QQQQQ", b, 16, pid, 0, 1000 + pid, 0, 2000 + pid)
    if kind == 2:  # EXIT: its one thread, read at exit (state 3, kind 2: the main thread)
        struct.pack_into("<IIIIQQqq", b, 56, 3, pid, 2, 0, 1000 + pid, 2000 + pid, 700, 300)
    b[184:192] = b"/bin/tru"
    struct.pack_into("<I", b, 508, 0x444E4554)
    return bytes(b)
with open(os.path.join(os.environ["THREADTIME_RUN_DIR"], "run.ttlog"), "ab") as f:
    for i in range(0, n, 1024):
        f.write(b"".join(rec(1, p) + rec(2, p) for p in range(4000000 + i, 4000000 + min(n, i + 1024))))
"""


def once(cli, tmp, n):
    t = time.perf_counter()
    p = subprocess.Popen([cli, "run", "--report", os.path.join(tmp, "report"), "--",
                          sys.executable, "-c", WRITER, str(n)], env=dict(os.environ, TMPDIR=tmp))
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status:
        sys.exit(f"{cli}: status {status}")
    return ru.ru_maxrss, wall


def main():
    cli, tmp = sys.argv[1], sys.argv[2]
    base = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    sizes = [int(a) for a in sys.argv[5:]] or [0, 20000, 80000]
    clis = [("this", cli)] + ([("baseline", base)] if base else [])
    print(f"{'processes':>9} {'log MiB':>8} " + " ".join(f"{name + ' KiB':>14} {name + ' s':>11}" for name, _ in clis))
    for n in sizes:
        got = {name: [] for name, _ in clis}
        for _ in range(rounds):
            for name, c in clis:
                got[name].append(once(c, tmp, n))
        row = f"{n:>9} {n * 1024 / 2**20:>8.1f} "
        row += " ".join(f"{statistics.median(r for r, _ in got[name]):>14.0f} "
                        f"{statistics.median(w for _, w in got[name]):>11.3f}" for name, _ in clis)
        print(row, flush=True)


main()
