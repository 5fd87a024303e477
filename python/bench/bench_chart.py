"""The trace chart's cost against the number of intervals, in one run.

    python python/bench/bench_chart.py [--sizes 5000,10000,20000,50000] [--rounds 3]

For each size, a trace of that many intervals on one thread (every other
one a CPU interval, so the CPU panel gets half of them as points) is
written to a temporary directory, then each round times
`chart.write_trace(read_trace(path), dir)` (the PNG and the HTML page with
its SVG) in this process, matplotlib already imported. Wall and CPU time
(this process's), medians over the rounds, interleaved by size; the cost
per interval says whether it grows linearly. The issue's floor: 50,000
intervals in <= 2 s. It never runs in the tests.
"""
from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import threadtime
from threadtime import chart

FLOOR_S = 2.0


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def make_trace(path: Path, n: int) -> None:
    threadtime.start_log(ring_records=1 << 21)
    try:
        for i in range(n):
            with threadtime.interval(i % 5, cpu=i % 2 == 0):
                pass
    finally:
        threadtime.stop_log()
    threadtime.dump(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="5000,10000,20000,50000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-chart-") as tmp:
        out = Path(tmp)
        traces = {}
        for n in sizes:
            traces[n] = out / f"{n}.trace"
            make_trace(traces[n], n)
        chart.write_trace(threadtime.read_trace(traces[sizes[0]]), out / "warm")  # imports, fonts
        wall: dict[int, list[float]] = {n: [] for n in sizes}
        cpu: dict[int, list[float]] = {n: [] for n in sizes}
        for _ in range(args.rounds):
            for n in sizes:
                gc.collect()
                c0, t0 = cpu_s(), time.perf_counter()
                chart.write_trace(threadtime.read_trace(traces[n]), out / str(n))
                wall[n].append(time.perf_counter() - t0)
                cpu[n].append(cpu_s() - c0)
    print(f"trace chart (PNG + HTML), medians of {args.rounds} interleaved rounds")
    print(f"{'intervals':>9} {'wall s':>8} {'CPU s':>8} {'CPU us/interval':>16}")
    for n in sizes:
        c = statistics.median(cpu[n])
        print(f"{n:>9} {statistics.median(wall[n]):8.2f} {c:8.2f} {c / n * 1e6:16.1f}")
    big = max(sizes)
    got = statistics.median(cpu[big])
    print(f"floor: {big} intervals in <= {FLOOR_S} s: {got:.2f} s CPU "
          f"({statistics.median(wall[big]):.2f} s wall) ({'holds' if got <= FLOOR_S else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
