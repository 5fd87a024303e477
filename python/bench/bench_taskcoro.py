"""TaskCoro alone: one step of a trivial coroutine, sent to directly and
through the TaskCoro that threadtime.asyncio wraps each task's coroutine in,
with the run-queue wait (the default) and without (run_wait=False).

    python python/bench/bench_taskcoro.py [--sends 20000] [--rounds 200]

No loop and no task: a Python loop calls send(None) on a coroutine that
suspends at once, on the coroutine itself ("direct") and on a TaskCoro
around another such coroutine ("TaskCoro"), whose send brackets the step
with two fast-clock reads. The floor row is two threadtime.total_ns() calls
per iteration: the same two reads, each behind a Python call of a C
function, which the bracket in C does not make. A round times each row over
--sends iterations by the thread's CPU clock, the rows in a rotating order;
many short rounds, so the minimum is a round the host left alone and the
median shows how often it did not. ns per iteration. It never runs in the
tests.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Generator

import threadtime
from threadtime._core import TaskCoro


class _Pause:
    def __await__(self) -> Generator[None, None, None]:
        while True:
            yield


async def _trivial() -> None:
    await _Pause()


def _sends(send: Callable[[None], object], n: int) -> int:
    t0 = time.thread_time_ns()
    for _ in range(n):
        send(None)
    return time.thread_time_ns() - t0


def _two_reads(n: int) -> int:
    read = threadtime.total_ns
    t0 = time.thread_time_ns()
    for _ in range(n):
        read()
        read()
    return time.thread_time_ns() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sends", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    threadtime.total_ns()  # the fast clock calibrates at its first read
    direct = _trivial()
    wrapped = TaskCoro(_trivial())
    no_wait = TaskCoro(_trivial(), run_wait=False)
    rows: dict[str, Callable[[int], int]] = {
        "direct coro.send": lambda n: _sends(direct.send, n),
        "TaskCoro.send": lambda n: _sends(wrapped.send, n),
        "no wait TaskCoro.send": lambda n: _sends(no_wait.send, n),
        "two total_ns() calls": _two_reads,
    }
    names = list(rows)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        for i in range(len(names)):
            name = names[(r + i) % len(names)]
            times[name].append(rows[name](args.sends) / args.sends)
    direct.close()
    wrapped.close()
    no_wait.close()
    print(f"{args.rounds} rounds x {args.sends} iterations, thread CPU ns per iteration; Python "
          f"{sys.version.split()[0]}, fast clock {threadtime.fast_clock()}")
    print(f"{'row':<26} {'min':>7} {'median':>7}")
    for name in names:
        print(f"{name:<26} {min(times[name]):7.1f} {statistics.median(times[name]):7.1f}")
    d = times["direct coro.send"]
    for name in ("TaskCoro.send", "no wait TaskCoro.send"):
        w = times[name]
        print(f"{name.replace('.send', '') + ' - direct':<26} {min(w) - min(d):7.1f} "
              f"{statistics.median(w) - statistics.median(d):7.1f}")


if __name__ == "__main__":
    main()
