"""CPU time per asyncio task: each task is charged only its own steps.

Tasks share their loop's thread, so that thread's CPU clock charges every
task with its neighbours' work. Once ``install()`` has run on a loop, every
task created there is counted exactly: each step (one resumption of the
task's coroutine, up to its next ``await`` that suspends) is bracketed in C
by two reads of the calling thread's fast CPU clock, and the difference is
added to that task alone::

    import threadtime.asyncio

    async def main():
        threadtime.asyncio.install()          # this loop's tasks from now on
        task = asyncio.create_task(work())
        await task
        print(threadtime.asyncio.task_cpu_ns(task))

``install()`` composes with a task factory already set (the tasks are then
made by it) and with ``asyncio.eager_task_factory``; it works on asyncio's
own loops and on uvloop. Tasks are ``asyncio.Task`` subclasses whose
``get_coro()``, names, cancellation, results and tracebacks are those of a
plain task. See docs/python-async.md for how it works and what it costs.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from ._core import TaskCoro, TaskFactory, _task_cpu_ns, _task_run_wait_ns
from ._core import fast_clock
from ._core import total_ns as _warm_fast_clock

__all__ = ["CountedTask", "install", "lifespan", "uninstall", "task_cpu_ns", "task_run_wait_ns", "tasks_cpu_ns"]

# The coroutine protocol (send, throw, close, __await__) is what asyncio
# checks for a coroutine that is not a native one.
Coroutine.register(TaskCoro)


class CountedTask(asyncio.Task):  # type: ignore[type-arg]
    """A task whose coroutine's steps are counted (see ``task_cpu_ns``).

    The task steps a ``TaskCoro`` around the coroutine it was given;
    ``get_coro()`` answers that coroutine, as on a plain task.
    """

    __slots__ = ("_threadtime_coro",)

    def get_coro(self) -> Any:
        coro = super().get_coro()
        return coro.coro if isinstance(coro, TaskCoro) else coro

    # What asyncio's repr() and get_stack() read.
    @property
    def _coro(self) -> Any:
        return self.get_coro()


def _loop(loop: asyncio.AbstractEventLoop | None, what: str) -> asyncio.AbstractEventLoop:
    if loop is not None:
        return loop
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(f"threadtime.asyncio.{what}() without a loop: call it inside the loop "
                           f"(e.g. at the start of main() or in an app's startup hook), or pass loop=") from None


def install(loop: asyncio.AbstractEventLoop | None = None, *, run_wait: bool | None = None) -> None:
    """Counts the CPU of every task created on loop (default: the running
    loop) from now on, and with run_wait the time the loop's thread waited
    for a CPU during each task's steps (``task_run_wait_ns``). run_wait=None
    (the default) counts the wait where the fast clock answers from anchors
    (``fast_clock()`` names rseq), where it costs ~10 ns a step; elsewhere
    each step would read schedstat twice (~1-3 us), so there it is counted
    only with run_wait=True. The loop's
    task factory, if it had one, still makes the tasks (each gets a
    ``TaskCoro`` to step instead of the coroutine); with
    ``asyncio.eager_task_factory`` the tasks are ``CountedTask``s that start
    eagerly. Calling it again changes nothing."""
    loop = _loop(loop, "install")
    previous = loop.get_task_factory()
    if isinstance(previous, TaskFactory):
        return
    # The fast clock calibrates itself at its first read (~25 ms): here, not
    # inside the first step counted.
    _warm_fast_clock()
    if run_wait is None:
        run_wait = fast_clock().startswith("rseq")
    eager = previous is not None and previous is getattr(asyncio, "eager_task_factory", None)
    factory = TaskFactory(CountedTask, None if eager else previous, asyncio.iscoroutine, eager, run_wait)
    loop.set_task_factory(factory)


@contextlib.asynccontextmanager
async def lifespan(app: object) -> AsyncIterator[None]:
    """An ASGI lifespan (Starlette's, FastAPI's ``lifespan=``) that runs
    ``install()`` on the server's loop at start-up, so every request's task
    is counted: ``Starlette(routes=..., lifespan=threadtime.asyncio.lifespan)``.
    With a lifespan of your own, call ``install()`` at its start instead."""
    install()
    yield


def uninstall(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Gives loop (default: the running loop) back the task factory it had
    before ``install()``. Tasks created until now stay counted."""
    loop = _loop(loop, "uninstall")
    factory = loop.get_task_factory()
    if isinstance(factory, TaskFactory):
        loop.set_task_factory(asyncio.eager_task_factory if factory.eager  # type: ignore[attr-defined]
                              else factory.previous)


def _task_or_current(task: asyncio.Task[Any] | None, what: str) -> asyncio.Task[Any]:
    if task is not None:
        return task
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop
        task = None
    if task is None:
        raise RuntimeError(f"threadtime.asyncio.{what}() outside a task: pass the task")
    return task


def task_cpu_ns(task: asyncio.Task[Any] | None = None) -> int:
    """CPU time the task's own steps have used, in ns: for the current task
    by default, including its step in progress; for another task, its
    finished steps; for a finished task, its final figure.

    Raises ``LookupError`` for a task that is not counted (created before
    ``install()`` or on another loop), ``RuntimeError`` without a current
    task, and ``OSError`` (EINVAL) in a forked child for a task counted in
    the parent, or with the clock's errno if the thread's clock could not be
    read during one of the task's steps.
    """
    return _task_cpu_ns(_task_or_current(task, "task_cpu_ns"))


def task_run_wait_ns(task: asyncio.Task[Any] | None = None) -> int:
    """Time the task's thread was runnable but waiting for a CPU during the
    task's own steps, in ns (schedstat's run_delay: a busy host, or the
    cgroup's CPU quota); the current task by default, as ``task_cpu_ns``.
    The thread's waits between the task's steps (its neighbours' steps,
    the loop's own work) are not in it.

    Raises as ``task_cpu_ns`` does, ``LookupError`` also for a task counted
    without its wait (``install(run_wait=False)``, or the default where the
    fast clock is not on), and ``OSError`` (ENOTSUP) where the kernel keeps
    no schedstat.
    """
    return _task_run_wait_ns(_task_or_current(task, "task_run_wait_ns"))


def tasks_cpu_ns(loop: asyncio.AbstractEventLoop | None = None) -> dict[asyncio.Task[Any], int]:
    """Every counted task of loop (default: the running loop) that has not
    finished, and its CPU time so far, ns (as ``task_cpu_ns``)."""
    loop = _loop(loop, "tasks_cpu_ns")
    figures = {}
    for task in asyncio.all_tasks(loop):
        try:
            figures[task] = _task_cpu_ns(task)
        except LookupError:
            continue  # created before install()
    return figures

