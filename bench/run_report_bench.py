#!/usr/bin/env python3
"""The run report's cost on a large recording (make bench-run-report):
one process with N thread records (half of them a sampler's records of
threads that also have their own, which the report must match by tid),
printed as text and with --group, for N in SIZES. With a BASELINE
threadtime, each is timed the same way, alternating with this one, ROUNDS
times; the medians and their ratio are printed. The floor is the same
dump of a recording of 2 records (reading and starting up).

Usage: run_report_bench.py THREADTIME TMPDIR [BASELINE] [ROUNDS]"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "run"))
from run_recording import many_threads  # noqa: E402

SIZES = (60000, 80000)


def timed(cli, path, *args):
    t = time.perf_counter()
    subprocess.run([cli, "dump", *args, path], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main():
    cli, tmp = sys.argv[1], sys.argv[2]
    base = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    clis = [("this", cli)] + ([("baseline", base)] if base else [])
    print(f"{'records':>8} {'args':>8} " + " ".join(f"{name + ' s':>12}" for name, _ in clis) +
          ("   ratio" if base else ""))
    for n in (2,) + SIZES:
        path = os.path.join(tmp, f"run_report_bench_{n}.ttrunset")
        with open(path, "wb") as f:
            f.write(many_threads(n, clones=0))
        for args in ((), ("--group",)):
            times = {name: [] for name, _ in clis}
            for _ in range(rounds):
                for name, c in clis:
                    times[name].append(timed(c, path, *args))
            med = {name: statistics.median(v) for name, v in times.items()}
            row = f"{n:>8} {' '.join(args) or '-':>8} " + " ".join(f"{med[name]:>12.3f}" for name, _ in clis)
            if base:
                row += f" {med['baseline'] / med['this']:>7.1f}x"
            print(row, flush=True)
        os.unlink(path)


main()
