"""What threadtime.asyncio adds per task step and per task, in instructions.

    python python/bench/bench_asyncio_count.py [--tasks 2000] [--awaits 10]

Counts instructions under valgrind's callgrind, which a loaded host cannot
change the way it changes times: the same run gives the same counts, give
or take a few hundred instructions of allocator state. One process (under
valgrind, started by this script) runs, on asyncio's default loop and on
uvloop, plain and counted (threadtime.asyncio.install() first), the
workload of bench_asyncio.py (its code) at three sizes: T tasks x A awaits, 2T x A and
T x 2A (a task takes awaits + 1 steps). Each run is called through
sys.call_tracing, the only thing the process calls it for, and callgrind
collects inside that call alone (--toggle-collect) and writes one count per
call (--dump-after), so start-up and imports are left out.

From the differences: per step = (T x 2A - T x A) / (T x A), the cost of
one more await of a task; per task = (2T x A - T x A) / T less A + 1 steps,
what a task costs beyond its steps (creation, the factory, teardown, the
collector's share). Counted less plain is what the accounting adds. The
floor rows, in the same process: one threadtime.total_ns() call from Python
(a Python call of a C function around one fast-clock read; the bracket in
C makes two reads without the calls), and a bare loop iteration, which is
in the total_ns() figure too. It never runs in the tests.
"""
from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile

import threadtime.asyncio
from bench_asyncio import LOOPS, many


def _run(loop_name: str, counted: bool, tasks: int, awaits: int) -> None:
    loop = LOOPS[loop_name]()
    try:
        if counted:
            threadtime.asyncio.install(loop)
        gc.collect()
        sys.call_tracing(loop.run_until_complete, (many(tasks, awaits),))
    finally:
        loop.close()


def _reads(n: int) -> None:
    read = threadtime.total_ns
    read()  # calibrated before the count

    def loop(n: int) -> None:
        for _ in range(n):
            read()
    sys.call_tracing(loop, (n,))

    def bare(n: int) -> None:
        for _ in range(n):
            pass
    sys.call_tracing(bare, (n,))


def _plan(tasks: int, awaits: int) -> list[tuple[str, bool, int, int]]:
    return [(lp, c, t, a) for lp in LOOPS for c in (False, True)
            for t, a in ((tasks, awaits), (2 * tasks, awaits), (tasks, 2 * awaits))]


def _child(tasks: int, awaits: int, reads: int) -> None:
    for job in _plan(tasks, awaits):
        _run(*job)
    _reads(reads)
    _reads(2 * reads)


def _counts(out_dir: str) -> list[int]:
    """The dumps' instruction counts, in the order they were written."""
    files = [f for f in os.listdir(out_dir) if re.fullmatch(r"cg\.out\.\d+", f)]
    files.sort(key=lambda f: int(f.rsplit(".", 1)[1]))
    counts = []
    for f in files:
        with open(os.path.join(out_dir, f)) as fh:
            m = re.search(r"^summary: (\d+)", fh.read(), re.M)
        if m is None:
            raise RuntimeError(f"{f}: no summary line")
        counts.append(int(m.group(1)))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--awaits", type=int, default=10)
    ap.add_argument("--reads", type=int, default=20_000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.tasks, args.awaits, args.reads)
        return
    if shutil.which("valgrind") is None:
        sys.exit("bench_asyncio_count.py: valgrind is not installed (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="tt-callgrind-") as out_dir:
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=_PyEval_CallTracing",
               "--dump-after=_PyEval_CallTracing", f"--callgrind-out-file={out_dir}/cg.out",
               sys.executable, os.path.abspath(__file__), "--child", f"--tasks={args.tasks}",
               f"--awaits={args.awaits}", f"--reads={args.reads}"]
        env = dict(os.environ, PYTHONHASHSEED="0")
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        counts = _counts(out_dir)
    plan = _plan(args.tasks, args.awaits)
    if len(counts) != len(plan) + 4:
        raise RuntimeError(f"expected {len(plan) + 4} callgrind dumps, found {len(counts)}")
    by = dict(zip(plan, counts))
    t, a = args.tasks, args.awaits
    print(f"instructions (callgrind), {t} tasks x {a} awaits, differences against {2 * t} x {a} and {t} x {2 * a}; "
          f"Python {sys.version.split()[0]}")
    print(f"{'loop':<8} {'':<8} {'per step':>9} {'per task':>9} {f'task + {a + 1} steps':>19}")
    for lp in LOOPS:
        row = {}
        for c in (False, True):
            base = by[lp, c, t, a]
            step = (by[lp, c, t, 2 * a] - base) / (t * a)
            task = (by[lp, c, 2 * t, a] - base) / t - (a + 1) * step
            row[c] = (step, task)
            print(f"{lp:<8} {'counted' if c else 'plain':<8} {step:9.0f} {task:9.0f} {task + (a + 1) * step:19.0f}")
        ds, dt = row[True][0] - row[False][0], row[True][1] - row[False][1]
        print(f"{lp:<8} {'added':<8} {ds:9.0f} {dt:9.0f} {dt + (a + 1) * ds:19.0f}"
              f"   = {ds + dt / (a + 1):.0f} per step at {a} awaits")
    r = args.reads
    call = (counts[-2] - counts[-4]) / r
    bare = (counts[-1] - counts[-3]) / r
    print(f"floor: one threadtime.total_ns() call from Python, loop iteration included: {call:.0f}; "
          f"a bare loop iteration: {bare:.0f}")


if __name__ == "__main__":
    main()
