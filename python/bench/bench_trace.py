"""read_trace() and to_pandas() against `threadtime dump --format csv`, on
one 10-million-event trace, in one run.

    python python/bench/bench_trace.py --threadtime build/cli/threadtime \\
        --writer build/cli/event_dump_bench [--runs 5] [--dir build]

The writer (bench/event_dump_bench.c: four threads, 10 M events of every
common kind) makes the trace; then each round times, one after the other:

  csv        the C tool converting the file to CSV (written to a file in --dir)
  open       read_trace(path): the file read and parsed, events counted
  iterate    read_trace(path) and every Event of every thread built in Python
  to_pandas  read_trace(path).to_pandas()

and the medians over the rounds are printed with the issue's floors:
read_trace (iterate) <= 2x csv, to_pandas <= 3 s. Each step's wall time and
CPU time (user + system: its own process's, or the subprocess's) are
recorded; all four are single-threaded, so on a quiet machine the two agree,
and on a busy one the CPU time says what the step itself costs. It never
runs in the tests.
"""
from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import threadtime


def cpu_s() -> float:
    """CPU seconds of this process and of its waited-for children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn) -> tuple[float, float]:
    """(wall, CPU) seconds of fn()."""
    gc.collect()
    c0, t0 = cpu_s(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, cpu_s() - c0


def iterate(path: Path) -> int:
    n = 0
    for th in threadtime.read_trace(path):
        for _ in th.events:
            n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threadtime", required=True, help="the threadtime command-line tool")
    ap.add_argument("--writer", required=True, help="bench/event_dump_bench (writes the 10 M-event trace)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where the trace and CSV go (default: a new temp dir)")
    ap.add_argument("--json", action="store_true", help="medians as JSON")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-trace-") as tmp:
        trace = Path(tmp) / "10M.trace"
        csv = Path(tmp) / "10M.csv"
        subprocess.run([args.writer, str(trace)], check=True, stdout=subprocess.DEVNULL)
        events = threadtime.read_trace(trace).events
        rows: dict[str, list[tuple[float, float]]] = {"csv": [], "open": [], "iterate": [], "to_pandas": []}
        for _ in range(args.runs):
            rows["csv"].append(timed(lambda: subprocess.run(
                [args.threadtime, "dump", "--format", "csv", "-o", str(csv), str(trace)], check=True)))
            csv.unlink()
            rows["open"].append(timed(lambda: threadtime.read_trace(trace)))
            rows["iterate"].append(timed(lambda: iterate(trace)))
            rows["to_pandas"].append(timed(lambda: threadtime.read_trace(trace).to_pandas()))
        size = trace.stat().st_size
    wall = {k: statistics.median(w for w, _ in v) for k, v in rows.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in rows.items()}
    if args.json:
        print(json.dumps({"events": events, "bytes": size, "runs": args.runs, "median_wall_s": wall,
                          "median_cpu_s": cpu, "all_wall_cpu_s": rows}))
        return 0
    print(f"{events:,} events, {size / 1e6:.0f} MB trace, {args.runs} rounds; seconds:")
    print(f"{'step':<10} {'wall p50':>9} {'min':>7} {'max':>7} {'CPU p50':>8}")
    for k, v in rows.items():
        ws = [w for w, _ in v]
        print(f"{k:<10} {wall[k]:9.3f} {min(ws):7.3f} {max(ws):7.3f} {cpu[k]:8.3f}")
    for what, m in (("wall", wall), ("CPU", cpu)):
        ratio = m["iterate"] / m["csv"]
        print(f"\n{what}: read_trace + every Event / dump --format csv: {ratio:.2f} (floor <= 2): "
              f"{'met' if ratio <= 2 else 'NOT met'}; read_trace alone / csv: {m['open'] / m['csv']:.2f}; "
              f"to_pandas {m['to_pandas']:.2f} s (floor <= 3 s): {'met' if m['to_pandas'] <= 3 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
