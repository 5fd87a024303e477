#!/usr/bin/env python3
"""Draws docs/python-async.png: four tasks interleaved on one asyncio loop,
each task's own CPU (threadtime.asyncio) beside the loop thread's CPU and
the wall time while the task lived, by threadtime.chart_tasks.

Usage: python docs/python_async_chart.py OUT.png
"""
import asyncio
import sys
import time

import threadtime.asyncio
from threadtime.chart_tasks import TaskRow, tasks_figure


def burn(ms: float) -> None:
    end = time.thread_time_ns() + int(ms * 1e6)
    while time.thread_time_ns() < end:
        pass


async def lived(work):
    """Runs work() and answers the loop thread's CPU and the wall time
    from the task's first step to its last."""
    cpu0, wall0 = time.thread_time_ns(), time.monotonic_ns()
    await work()
    return time.thread_time_ns() - cpu0, time.monotonic_ns() - wall0


async def parse():      # CPU-heavy, in pieces
    for _ in range(4):
        burn(15)
        await asyncio.sleep(0)


async def render():     # some CPU, then waits on I/O
    for _ in range(3):
        burn(6)
        await asyncio.sleep(0.004)


async def fetch():      # waits on I/O, little CPU
    for _ in range(12):
        await asyncio.sleep(0.005)


async def heartbeat():  # wakes up often, does almost nothing
    for _ in range(40):
        await asyncio.sleep(0.001)


async def main() -> list[TaskRow]:
    threadtime.asyncio.install()
    works = (parse, render, fetch, heartbeat)
    tasks = [asyncio.create_task(lived(w), name=w.__name__) for w in works]
    lives = await asyncio.gather(*tasks)
    return [TaskRow(t.get_name(), threadtime.asyncio.task_cpu_ns(t), thread, wall)
            for t, (thread, wall) in zip(tasks, lives)]


if __name__ == "__main__":
    rows = asyncio.run(main())
    for r in rows:
        print(f"{r.name:<10} own {r.cpu_ns / 1e6:6.1f} ms  thread {r.thread_cpu_ns / 1e6:6.1f} ms  "
              f"wall {r.wall_ns / 1e6:6.1f} ms")
    tasks_figure(rows).savefig(sys.argv[1], dpi=110)
