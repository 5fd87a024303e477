"""What threadtime.asyncio adds per task step, over plain asyncio, in one run.

    python python/bench/bench_asyncio.py [--tasks 100000] [--awaits 10] [--rounds 5] [--json]

A run creates --tasks tasks on a fresh loop, each awaiting asyncio.sleep(0)
--awaits times, and gathers them all, so the tasks' steps interleave; each
task takes awaits + 1 steps. Each round runs, on asyncio's default loop and
on uvloop, the plain run and the counted one (threadtime.asyncio.install()
before the tasks are made), the order alternating between rounds.

The figure is the loop thread's CPU time (time.thread_time_ns around the
run: the loop runs on one thread, so that is what the run costs, whatever
else the host runs) per step, the median over the rounds; "added" is the
counted median less the plain one, the issue's floor being <= 150 ns per
step. Beside them, the floor of the bracket itself: two fast-clock reads
from Python (threadtime.total_ns(); in C the bracket makes the same two
reads without the calls).

--per-step measures one step alone, timed: each round runs T tasks x A
awaits and T x 2A (default 2,000 x 10 and 2,000 x 20, so a round is short
and a loaded host spoils fewer of them), on both loops, plain, counted
(CPU and run-queue wait, the default) and counted with
install(run_wait=False), in a rotating order; one more await of every task
costs (run(T x 2A) - run(T x A)) / (T x A) per step, so what a task costs
beyond its steps (creation, the factory, teardown) drops out. Medians over
the rounds (default 15). It never runs in the tests.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time

import uvloop

import threadtime
import threadtime.asyncio

FLOOR_NS = 150
LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


async def one_task(awaits: int) -> None:
    for _ in range(awaits):
        await asyncio.sleep(0)


async def many(tasks: int, awaits: int) -> None:
    await asyncio.gather(*[asyncio.create_task(one_task(awaits)) for _ in range(tasks)])


def run_ns(loop_name: str, counted: bool, tasks: int, awaits: int, run_wait: bool = True) -> int:
    """Thread CPU time of one run, ns."""
    loop = LOOPS[loop_name]()
    try:
        if counted:
            threadtime.asyncio.install(loop, run_wait=run_wait)
        gc.collect()
        t0 = time.thread_time_ns()
        loop.run_until_complete(many(tasks, awaits))
        return time.thread_time_ns() - t0
    finally:
        loop.close()


def two_reads_ns(n: int = 200_000) -> float:
    """Two threadtime.total_ns() calls from Python, per pair."""
    read = threadtime.total_ns
    t0 = time.perf_counter_ns()
    for _ in range(n):
        read()
        read()
    return (time.perf_counter_ns() - t0) / n


# (counted, run_wait) of the --per-step variants.
VARIANTS = {"plain": (False, True), "counted": (True, True), "counted, no wait": (True, False)}


def per_step(tasks: int, awaits: int, rounds: int) -> None:
    threadtime.total_ns()  # the fast clock calibrates at its first read
    jobs = [(lp, v) for lp in LOOPS for v in VARIANTS]
    steps: dict[tuple[str, str], list[float]] = {job: [] for job in jobs}
    for r in range(rounds):
        for lp, v in jobs[r % len(jobs):] + jobs[:r % len(jobs)]:
            counted, run_wait = VARIANTS[v]
            one = run_ns(lp, counted, tasks, awaits, run_wait)
            two = run_ns(lp, counted, tasks, 2 * awaits, run_wait)
            steps[lp, v].append((two - one) / (tasks * awaits))
    print(f"thread CPU per task step, ns: ({tasks} x {2 * awaits} - {tasks} x {awaits}) / {tasks * awaits}, "
          f"medians of {rounds} rounds; Python {sys.version.split()[0]}, uvloop {uvloop.__version__}, "
          f"fast clock {threadtime.fast_clock()}")
    print(f"{'loop':<8} {'variant':<17} {'median':>7} {'added':>7} {'min':>7} {'max':>7}")
    for lp in LOOPS:
        plain = statistics.median(steps[lp, "plain"])
        for v in VARIANTS:
            m = statistics.median(steps[lp, v])
            added = "" if v == "plain" else f"{m - plain:+7.0f}"
            print(f"{lp:<8} {v:<17} {m:7.0f} {added:>7} {min(steps[lp, v]):7.0f} {max(steps[lp, v]):7.0f}")
    print(f"floor: added <= {FLOOR_NS} ns per step; two threadtime.total_ns() calls from Python: "
          f"{two_reads_ns():.0f} ns")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=None, help="100,000 (2,000 with --per-step)")
    ap.add_argument("--awaits", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=None, help="5 (15 with --per-step)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--per-step", action="store_true", help="one step alone, from two sizes (see above)")
    args = ap.parse_args()
    if args.per_step:
        per_step(args.tasks or 2000, args.awaits, args.rounds or 15)
        return
    args.tasks = args.tasks or 100_000
    args.rounds = args.rounds or 5
    steps = args.tasks * (args.awaits + 1)
    threadtime.total_ns()  # the fast clock calibrates at its first read
    runs: dict[tuple[str, bool], list[float]] = {(lp, c): [] for lp in LOOPS for c in (False, True)}
    floors: list[float] = []
    for r in range(args.rounds):
        for loop_name in LOOPS:
            for counted in ((False, True) if r % 2 == 0 else (True, False)):
                runs[loop_name, counted].append(run_ns(loop_name, counted, args.tasks, args.awaits) / steps)
        floors.append(two_reads_ns())
    figures = {
        loop_name: {
            "plain_ns_per_step": statistics.median(runs[loop_name, False]),
            "counted_ns_per_step": statistics.median(runs[loop_name, True]),
            "added_ns_per_step": statistics.median(runs[loop_name, True]) - statistics.median(runs[loop_name, False]),
            "plain_runs": runs[loop_name, False],
            "counted_runs": runs[loop_name, True],
        }
        for loop_name in LOOPS
    }
    report = {
        "tasks": args.tasks, "awaits": args.awaits, "steps": steps, "rounds": args.rounds,
        "python": sys.version.split()[0], "uvloop": uvloop.__version__, "fast_clock": threadtime.fast_clock(),
        "two_total_ns_calls_ns": statistics.median(floors), "loops": figures,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.tasks} tasks x {args.awaits} awaits ({steps} steps) per run, {args.rounds} rounds, "
          f"Python {report['python']}, uvloop {report['uvloop']}, fast clock {report['fast_clock']}")
    print("thread CPU per task step, ns, median of the rounds")
    print(f"{'loop':<8} {'plain':>8} {'counted':>8} {'added':>8}  floor <= {FLOOR_NS}")
    for loop_name, f in figures.items():
        added = f["added_ns_per_step"]
        print(f"{loop_name:<8} {f['plain_ns_per_step']:8.0f} {f['counted_ns_per_step']:8.0f} {added:8.0f}  "
              f"{'ok' if added <= FLOOR_NS else 'ABOVE'}")
    print(f"two threadtime.total_ns() calls from Python: {report['two_total_ns_calls_ns']:.0f} ns")


if __name__ == "__main__":
    main()
