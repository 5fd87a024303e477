"""OpenTelemetry for threadtime: CPU time per span, and CPU time per thread
name as metrics (``pip install 'threadtime[otel]'``, the real
``opentelemetry-sdk``).

``ThreadTimeSpanProcessor`` adds to each span the CPU time spent between its
start and its end by what started it:

* a span started inside an asyncio task gets that task's own CPU time
  (``threadtime.asyncio.task_cpu_ns``: the task's steps only, never the
  steps of the tasks that ran on the loop between them), once
  ``threadtime.asyncio.install()`` accounts the loop's tasks;
* a span started on a thread outside any task gets the thread's CPU time.

Attributes, named as threadtime's Java module names them:

* ``threadtime.cpu.total_ns`` (int, ns): the CPU time, exact (the kernel's
  runtime of the thread, read through the fast clock);
* ``threadtime.cpu.user_ns``, ``threadtime.cpu.system_ns`` (int, ns): its
  split, on a thread: the difference of two ``times()`` readings, the
  consistent split (``user_ns + system_ns == total_ns``, neither negative)
  whose total is the exact clock and whose proportion is the kernel's. A
  span in a task gets no split: a task's steps are bracketed by the total
  clock alone, so nothing measured the task's user and system time, and
  none is invented.

A span that ends on another thread or in another task than the one it
started in gets none of them (its CPU was spent in two places); nor does a
span in a task the accounting does not know. ``unmeasured()`` counts both.

The attributes are set just before the span ends: the SDK's span processor
hooks see the span already read-only (its ``_on_ending`` too), so the
processor wraps the span's own ``end()`` when the span starts, and the
wrapper removes itself when it runs.

``register_metrics()`` adds observable counters to a meter: the process's
CPU time by thread name, the names grouped so that a pool's threads make
one series (``ThreadPoolExecutor-0_3`` counts as ``ThreadPoolExecutor-0``),
and the spans left unmeasured, by reason.
"""
from __future__ import annotations

import asyncio
import functools
import os
import re
import threading
from collections.abc import Callable
from typing import Final

try:
    from opentelemetry import metrics as _metrics_api
    from opentelemetry.context import Context
    from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
    from opentelemetry.sdk.trace import Span, SpanProcessor
except ImportError as _missing:  # pragma: no cover - depends on the environment
    raise ImportError("threadtime.otel needs the OpenTelemetry SDK: pip install 'threadtime[otel]'") from _missing

from . import Times, __version__, thread_times, times, total_ns
from ._core import _task_cpu_ns

__all__ = [
    "TOTAL",
    "USER",
    "SYSTEM",
    "SCOPE",
    "THREAD_CPU",
    "UNMEASURED",
    "ThreadTimeSpanProcessor",
    "group_thread_name",
    "register_metrics",
]

TOTAL: Final = "threadtime.cpu.total_ns"
USER: Final = "threadtime.cpu.user_ns"
SYSTEM: Final = "threadtime.cpu.system_ns"

SCOPE: Final = "threadtime.otel"
THREAD_CPU: Final = "threadtime.thread.cpu.time"
UNMEASURED: Final = "threadtime.span.unmeasured"

# Why a span got no CPU attribute (the values of the metric's "reason").
OTHER_THREAD: Final = "other_thread"
NO_CLOCK: Final = "no_clock"
REASONS: Final = (OTHER_THREAD, NO_CLOCK)


def _current_task() -> asyncio.Task[object] | None:
    """The asyncio task running on this thread, if any (no exception when no
    loop runs here, unlike asyncio.current_task())."""
    loop = asyncio._get_running_loop()
    return None if loop is None else asyncio.current_task(loop)


def _task_cpu(task: asyncio.Task[object]) -> int | None:
    """The task's own CPU time so far, its step in progress included, ns;
    None for a task threadtime.asyncio does not count (created before
    install(), or counted in the parent of this forked process)."""
    try:
        return _task_cpu_ns(task)
    except (LookupError, OSError):
        return None


class ThreadTimeSpanProcessor(SpanProcessor):
    """Sets each span's CPU time (see the module's doc) on the span itself,
    just before it ends. Add it to a TracerProvider like any processor:
    ``provider.add_span_processor(ThreadTimeSpanProcessor())``.

    split=False leaves out the user/system split on threads: two fast-clock
    reads per span instead of two ``times()`` (a ``getrusage()`` each).
    """

    def __init__(self, *, split: bool = True) -> None:
        self._split = split
        self._lock = threading.Lock()
        self._unmeasured = dict.fromkeys(REASONS, 0)
        self._end_hook = self._ending  # made once, not per span

    def unmeasured(self, reason: str) -> int:
        """Spans that got no CPU attribute for this reason (OTHER_THREAD or
        NO_CLOCK) since the processor was made."""
        if reason not in self._unmeasured:
            raise ValueError(f"unmeasured(): reason must be one of {', '.join(REASONS)}, not {reason!r}")
        return self._unmeasured[reason]

    def _count(self, reason: str) -> None:
        with self._lock:  # rare; a plain += could lose counts without the GIL
            self._unmeasured[reason] += 1

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        task = _current_task()
        if task is not None:
            owner: object = task
            start: int | Times | None = _task_cpu(task)
            if start is None:
                self._count(NO_CLOCK)
                return
        else:
            owner = threading.get_ident()
            # Last: the processor's own work stays outside the figure.
            start = times() if self._split else total_ns()
        # One partial (and its arguments' tuple) per span: a closure and its
        # cells, or bound methods, would be more objects for the cycle
        # collector to count. An end() already set on the span (another
        # hook) is kept and called; else the class's.
        span.end = functools.partial(self._end_hook, span, owner, start,  # type: ignore[method-assign]
                                     vars(span).get("end"))

    def _ending(self, span: Span, owner: object, start: int | Times, end: Callable[[int | None], None] | None,
                end_time: int | None = None) -> None:
        try:  # measured first, so that the SDK's end() stays outside the figure
            self._measure(span, owner, start)
        finally:
            # The end() there was before: the class's (no cycle left behind),
            # or the hook that runs next and then puts back its own.
            if end is None:
                del span.end
            else:
                span.end = end  # type: ignore[method-assign,assignment]
        if end is None:
            type(span).end(span, end_time)
        else:
            end(end_time)

    def _measure(self, span: Span, owner: object, start: int | Times) -> None:
        if not span.is_recording():  # ended already: end() again only warns
            return
        task = _current_task()
        if task is not None:
            now = _task_cpu(task) if task is owner else None
            if now is None:
                self._count(OTHER_THREAD if task is not owner else NO_CLOCK)
                return
            span.set_attribute(TOTAL, now - start)  # type: ignore[operator]
            return
        if owner != threading.get_ident():
            self._count(OTHER_THREAD)
            return
        if isinstance(start, Times):
            used = times() - start
            span.set_attributes({TOTAL: used.total_ns, USER: used.user_ns, SYSTEM: used.system_ns})
        else:
            span.set_attribute(TOTAL, total_ns() - start)


# "ThreadPoolExecutor-0_3" -> "ThreadPoolExecutor-0", "Thread-7 (work)" ->
# "Thread (work)", "asyncio_2" -> "asyncio": a number after the last - or _,
# with what threading appends after it (the target's name in parentheses).
_NUMBERED = re.compile(r"^(?P<base>.+?)[-_][0-9]+(?P<target> \(.*\))?$")


def group_thread_name(name: str) -> str:
    """The series a thread's CPU time is counted in: its name without the
    number that tells a pool's threads apart."""
    m = _NUMBERED.match(name)
    return name if m is None else m["base"] + (m["target"] or "")


class _ThreadSampler:
    """The process's CPU time by group of thread names, for an observable
    counter: every thread of the process (/proc/self/task), named as
    threading names it (else as the kernel does). A thread that exits keeps
    the figure its group last saw of it, so a series never goes back; what
    it used after that last collection is not counted."""

    def __init__(self, group: Callable[[str], str]) -> None:
        self._group = group
        self._lock = threading.Lock()
        self._live: dict[int, tuple[str, int, int]] = {}  # tid -> (group, user, system)
        self._gone: dict[str, list[int]] = {}  # group -> [user, system] of exited threads
        self._reported: dict[str, tuple[int, int]] = {}

    @staticmethod
    def _kernel_name(tid: int) -> str | None:
        try:
            with open(f"/proc/self/task/{tid}/comm", "rb") as f:
                return f.read().rstrip(b"\n").decode("utf-8", "replace")
        except OSError:  # exited meanwhile
            return None

    def _sample(self) -> dict[int, tuple[str, int, int]]:
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
        live = {}
        for entry in os.listdir("/proc/self/task"):
            tid = int(entry)
            try:
                user, system, _ = thread_times(tid)
            except OSError:  # exited since the listing
                continue
            name = names.get(tid) or self._kernel_name(tid)
            if name is not None:
                live[tid] = (self._group(name), user, system)
        return live

    def observe(self, options: CallbackOptions) -> list[Observation]:
        with self._lock:
            live = self._sample()
            for tid, (group, user, system) in self._live.items():
                now = live.get(tid)
                # Gone, or its id reused by a thread with less CPU or another name.
                if now is None or now[0] != group or now[1] < user or now[2] < system:
                    gone = self._gone.setdefault(group, [0, 0])
                    gone[0] += user
                    gone[1] += system
            self._live = live
            sums = {group: list(figures) for group, figures in self._gone.items()}
            for group, user, system in live.values():
                figures = sums.setdefault(group, [0, 0])
                figures[0] += user
                figures[1] += system
            out = []
            for group, (user, system) in sorted(sums.items()):
                last = self._reported.get(group, (0, 0))
                user, system = max(user, last[0]), max(system, last[1])
                self._reported[group] = (user, system)
                out.append(Observation(user / 1e9, {"thread.name": group, "cpu.mode": "user"}))
                out.append(Observation(system / 1e9, {"thread.name": group, "cpu.mode": "system"}))
            return out


def register_metrics(meter_provider: MeterProvider | None = None, *, spans: ThreadTimeSpanProcessor | None = None,
                     group: Callable[[str], str] = group_thread_name) -> None:
    """Registers threadtime's observable counters with the meter provider
    (the global one by default), scope SCOPE:

    * THREAD_CPU (s; ``thread.name``, ``cpu.mode`` = user | system): the
      process's CPU time by group of thread names (``group``, by default
      group_thread_name), shaped like ``process.cpu.time``;
    * UNMEASURED ({span}; ``reason``), when spans is given: the spans that
      processor left without a CPU attribute.
    """
    provider = meter_provider if meter_provider is not None else _metrics_api.get_meter_provider()
    meter = provider.get_meter(SCOPE, __version__)
    sampler = _ThreadSampler(group)
    meter.create_observable_counter(THREAD_CPU, callbacks=[sampler.observe], unit="s",
                                    description="CPU time of this process's threads, by group of thread names")
    if spans is not None:
        def unmeasured(options: CallbackOptions) -> list[Observation]:
            return [Observation(spans.unmeasured(r), {"reason": r}) for r in REASONS]

        meter.create_observable_counter(UNMEASURED, callbacks=[unmeasured], unit="{span}",
                                        description="Spans that got no threadtime CPU attribute, by reason")
