"""How fast Python code can learn its own thread's CPU time, every way at once.

    python python/bench/bench.py [--time S] [--warmup S] [--threads 1,2] [--rounds N] [--json]

Runs each method in one process, one after the other (with --rounds N, N
times over, the methods interleaved in each round, and each row is then the
round with the median p50), and reports the time per call the way
`threadtime bench` does (sample time: batches of calls timed
with perf_counter_ns, percentiles over the batches' per-call times). Every
figure includes the Python call and the loop around it. With --json the
output has the shape of `threadtime bench --json`, so `python -m
threadtime.chart` draws it. Needs psutil. Not part of the tests.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import sys
import threading
import time
from typing import Callable

import psutil

import threadtime

BASELINE = "procfs_stat"
# A batch lasts at least this long, so perf_counter_ns's own ~50 ns is a
# small share of every sample.
BATCH_MIN_NS = 20_000

# The calling thread's VIRT clock, built by hand from the kernel's encoding
# of CPU clock ids: bits 31..3 hold ~tid (all ones: "the caller"), bit 2 set
# means one thread, bits 1..0 pick the clock (1 = VIRT, user ticks).
CPUCLOCK_PERTHREAD = 0x4
CPUCLOCK_VIRT = 0x1
CALLER_VIRT_CLOCKID = (~0 << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_VIRT


def _psutil_own_times(tid: int) -> Callable[[], tuple[float, float]]:
    """psutil's way for the calling thread: list every thread, pick ours."""
    proc = psutil.Process()

    def call() -> tuple[float, float]:
        for t in proc.threads():
            if t.id == tid:
                return t.user_time, t.system_time
        raise LookupError(f"psutil does not list thread {tid}")
    return call


def _fast_clock(on: bool) -> Callable[[], int]:
    """total_ns with the fast clock on or off (a process-wide switch, so
    each of the two rows sets it for itself)."""
    try:
        threadtime.set_fast_clock(on)
    except OSError as e:
        print(f"fast clock: {e}", file=sys.stderr)
    return threadtime.total_ns


_SPAN = threadtime.interval(2)


def _interval_block() -> None:
    with _SPAN:
        pass


# name -> (description, factory called on the measuring thread with its
# native id, returning the zero-argument call to time).
METHODS: dict[str, tuple[str, Callable[[int], Callable[[], object]]]] = {
    BASELINE: ("baseline: threadtime.procfs_read, open+read+parse of /proc/self/task/<tid>/stat",
               lambda tid: lambda: threadtime.procfs_read(0, tid)),
    "psutil_threads": ("psutil.Process().threads(), the calling thread's entry",
                       _psutil_own_times),
    "getrusage_thread": ("resource.getrusage(RUSAGE_THREAD): user+system, us",
                         lambda tid: lambda: resource.getrusage(resource.RUSAGE_THREAD)),
    "thread_time_ns": ("time.thread_time_ns(): precise total only",
                       lambda tid: time.thread_time_ns),
    "clock_gettime_ns_virt": ("time.clock_gettime_ns on a hand-built VIRT clockid: raw user",
                              lambda tid: lambda: time.clock_gettime_ns(CALLER_VIRT_CLOCKID)),
    "tt_user_raw_ns": ("threadtime.user_raw_ns(): raw user time",
                       lambda tid: threadtime.user_raw_ns),
    "tt_system_raw_ns": ("threadtime.system_raw_ns(): raw system time (2 clock reads)",
                         lambda tid: threadtime.system_raw_ns),
    "tt_total_ns": ("threadtime.total_ns(): precise total through the fast clock",
                    lambda tid: _fast_clock(True)),
    "tt_total_ns_syscall": ("threadtime.total_ns() with set_fast_clock(False): one system call",
                            lambda tid: _fast_clock(False)),
    "tt_times": ("threadtime.times(): consistent user/system/total split",
                 lambda tid: threadtime.times),
    "tt_thread_times": ("threadtime.thread_times(native_id): split through the handle cache",
                        lambda tid: lambda: threadtime.thread_times(tid)),
    # The event log runs for the whole benchmark; these two record into it.
    "tt_event_value": ("threadtime.event(id, int): one event with a value",
                       lambda tid: lambda: threadtime.event(1, 42)),
    "tt_interval": ("with threadtime.interval(id): a begin and an end event",
                    lambda tid: _interval_block),
}


def _size_batch(call: Callable[[], object]) -> int:
    """Calls per batch so that a batch lasts at least BATCH_MIN_NS."""
    n = 1
    while True:
        best = math.inf
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(n):
                call()
            best = min(best, time.perf_counter_ns() - t0)
        if best >= BATCH_MIN_NS:
            return n
        n *= 2


def _measure(call: Callable[[], object], warmup_ns: int, measure_ns: int, samples: list[float]) -> int:
    n = _size_batch(call)
    for phase_ns, keep in ((warmup_ns, False), (measure_ns, True)):
        end = time.perf_counter_ns() + phase_ns
        while True:
            t0 = time.perf_counter_ns()
            for _ in range(n):
                call()
            t1 = time.perf_counter_ns()
            if keep:
                samples.append((t1 - t0) / n)
            if t1 >= end:
                break
    return n


def _percentile(sorted_samples: list[float], q: float) -> float:
    return sorted_samples[min(len(sorted_samples) - 1, int(q * len(sorted_samples)))]


def run_row(name: str, threads: int, warmup_ns: int, measure_ns: int) -> dict:
    """Runs one method on `threads` threads at once; one result row."""
    factory = METHODS[name][1]
    per_thread: list[list[float]] = [[] for _ in range(threads)]
    batches = [0] * threads
    start = threading.Barrier(threads)

    def worker(i: int) -> None:
        call = factory(threading.get_native_id())
        start.wait()
        batches[i] = _measure(call, warmup_ns, measure_ns, per_thread[i])

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    s = sorted(x for samples in per_thread for x in samples)
    mean = sum(s) / len(s)
    sd = math.sqrt(sum((x - mean) ** 2 for x in s) / max(1, len(s) - 1))
    return {
        "method": name, "description": METHODS[name][0], "threads": threads, "batch": max(batches),
        "samples": len(s),
        "mean_ns": mean,
        # Half-width of a 99.9% confidence interval of the mean, as JMH prints.
        "error_ns": 3.29 * sd / math.sqrt(len(s)),
        "p0_ns": s[0], "p50_ns": _percentile(s, 0.5), "p90_ns": _percentile(s, 0.9),
        "p99_ns": _percentile(s, 0.99), "p999_ns": _percentile(s, 0.999),
        "p9999_ns": _percentile(s, 0.9999), "max_ns": s[-1],
    }


def machine() -> dict:
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                   platform.processor())
    return {
        "cpu": cpu,
        "kernel": " ".join(platform.uname()[i] for i in (0, 2, 4)),
        "cpus": os.cpu_count(), "clk_tck": os.sysconf("SC_CLK_TCK"),
        "python": platform.python_version(), "psutil": psutil.__version__,
        "threadtime": threadtime.__version__,
    }


def floors(rows: list[dict]) -> list[dict]:
    """The issue's floors, one thread. Judged on p50, as the ratio column of
    `threadtime bench` is: on a shared machine the mean mostly measures how
    often the thread was preempted inside a batch. The mean ratio is kept
    beside it."""
    by = {r["method"]: r for r in rows if r["threads"] == 1}
    checks = []

    def check(what: str, num: str, den: str, bar: float, at_most: bool) -> None:
        if num in by and den in by:
            p50 = by[num]["p50_ns"] / by[den]["p50_ns"]
            mean = by[num]["mean_ns"] / by[den]["mean_ns"]
            checks.append({"check": what, "p50_ratio": p50, "mean_ratio": mean, "bar": bar,
                           "met": p50 <= bar if at_most else p50 >= bar})

    # User time; times() reads more (the whole split) and is not held to it.
    check("tt_user_raw_ns / thread_time_ns <= 1", "tt_user_raw_ns", "thread_time_ns", 1.0, True)
    # The own-thread total through the fast clock: at most a tenth of a system call's.
    check("tt_total_ns / thread_time_ns <= 0.1", "tt_total_ns", "thread_time_ns", 0.1, True)
    for own in ("tt_times", "tt_thread_times"):
        check(f"psutil_threads / {own} >= 20", "psutil_threads", own, 20.0, False)
    return checks


def print_table(rows: list[dict], out=sys.stdout) -> None:
    m = machine()
    print(f"threadtime {m['threadtime']} Python bench: {m['cpu']} ({m['cpus']} CPUs), {m['kernel']}, "
          f"Python {m['python']}, psutil {m['psutil']}", file=out)
    print(f"{'method':<24}{'thr':>4}{'samples':>9}{'mean ns':>10}{'±':>9}{'p50':>9}{'p99':>9}"
          f"{'p99.9':>10}{'max':>11}{'vs /proc':>10}", file=out)
    for r in rows:
        print(f"{r['method']:<24}{r['threads']:>4}{r['samples']:>9}{r['mean_ns']:>10.1f}{r['error_ns']:>9.1f}"
              f"{r['p50_ns']:>9.1f}{r['p99_ns']:>9.1f}{r['p999_ns']:>10.1f}{r['max_ns']:>11.1f}"
              f"{1 / r['ratio_to_baseline']:>9.1f}x", file=out)
    for f in floors(rows):
        print(f"floor {f['check']}: p50 ratio {f['p50_ratio']:.2f} ({'met' if f['met'] else 'NOT MET'}), "
              f"mean ratio {f['mean_ratio']:.2f}", file=out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--time", type=float, default=1.0, help="measuring seconds per row (default 1)")
    p.add_argument("--warmup", type=float, default=0.3, help="warm-up seconds per row (default 0.3)")
    p.add_argument("--threads", default="1", help="thread counts, e.g. 1,2 (default 1)")
    p.add_argument("--methods", help=f"comma-separated subset (the baseline {BASELINE} is always run)")
    p.add_argument("--rounds", type=int, default=1,
                   help="run every method this many times, interleaved; rows are the median round (default 1)")
    p.add_argument("--json", action="store_true", help="JSON in the shape of `threadtime bench --json`")
    p.add_argument("--list", action="store_true", help="list the methods")
    args = p.parse_args(argv)
    if args.list:
        for name, (description, _) in METHODS.items():
            print(f"{name:<24}{description}")
        return 0
    names = list(METHODS) if not args.methods else [BASELINE] + [
        n for n in args.methods.split(",") if n != BASELINE]
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        p.error(f"unknown methods {unknown} (see --list)")
    counts = [int(c) for c in args.threads.split(",")]
    runs: dict[tuple[str, int], list[dict]] = {}
    threadtime.start_log()
    for r in range(args.rounds):
        for threads in counts:
            for name in names:
                print(f"round {r + 1}/{args.rounds}: {name}, {threads} thread(s)", file=sys.stderr)
                row = run_row(name, threads, int(args.warmup * 1e9), int(args.time * 1e9))
                runs.setdefault((name, threads), []).append(row)
    threadtime.stop_log()
    threadtime.set_fast_clock(True)
    rows = []
    for per_round in runs.values():
        # The round with the median p50 (the lower one of an even count).
        ranked = sorted(per_round, key=lambda row: row["p50_ns"])
        row = dict(ranked[(len(ranked) - 1) // 2])
        row["rounds"] = len(per_round)
        row["p50_rounds_ns"] = [x["p50_ns"] for x in per_round]
        rows.append(row)
    for r in rows:
        base = next(b for b in rows if b["method"] == BASELINE and b["threads"] == r["threads"])
        r["ratio_to_baseline"] = r["p50_ns"] / base["p50_ns"]
    if args.json:
        json.dump({"machine": machine(),
                   "sampling": {"mode": "sample_time", "timer": "time.perf_counter_ns",
                                "min_batch_ns": BATCH_MIN_NS, "baseline": BASELINE},
                   "results": rows,
                   "floors": floors(rows)},
                  sys.stdout, indent=1)
        print()
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
