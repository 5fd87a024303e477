"""OpenTelemetry for threadtime: CPU time and run-queue wait per span, and
CPU time per thread name as metrics (``pip install 'threadtime[otel]'``, the
real ``opentelemetry-sdk``).

``ThreadTimeSpanProcessor`` adds to each span what started it spent between
the span's start and its end:

* a span started inside an asyncio task gets that task's own figures
  (``threadtime.asyncio``: the task's steps only, never the steps of the
  tasks that ran on the loop between them), once
  ``threadtime.asyncio.install()`` accounts the loop's tasks;
* a span started on a thread outside any task gets the thread's figures.

Attributes (OpenTelemetry's semantic conventions name none of these, so
they are threadtime's; the CPU ones as threadtime's Java module names them):

* ``threadtime.cpu.total_ns`` (int, ns): the CPU time, exact (the kernel's
  runtime of the thread, read through the fast clock);
* ``threadtime.sched.run_wait_ns`` (int, ns): the time the thread was
  runnable but waiting for a CPU (a busy host, or the cgroup's CPU quota;
  schedstat's run_delay), during the task's steps for a span in a task;
  ``run_wait=False`` leaves it out;
* ``threadtime.cpu.user_ns``, ``threadtime.cpu.system_ns`` (int, ns), with
  ``split=True``, on a thread: the consistent split (``user_ns +
  system_ns == total_ns``, neither negative) whose total is the exact clock
  and whose proportion is the kernel's. A span in a task gets no split: a
  task's steps are bracketed by the total clock alone, so nothing measured
  the task's user and system time, and none is invented.

A span that ends on another thread or in another task than the one it
started in gets none of them (its time was spent in two places); nor does a
span in a task the accounting does not know. ``unmeasured()`` counts both.

The attributes are set just before the span ends: the SDK's span processor
hooks see the span already read-only (its ``_on_ending`` too), so the
processor puts a hook on the span's own ``end()`` when the span starts, and
the hook takes itself off when it runs. Both halves are in the C extension
(no Python frame per span); the span's own ``set_attribute`` sets the
figures, so the SDK's checks and limits apply to them.

``deferred=True`` takes the attributes off the thread that ends the span:
the hook only files the figures, under the span's context, and the
exporter the processor wraps (``processor.exporter(exporter)``) adds them
to the copy of each span it exports, on the exporting thread (a
BatchSpanProcessor's worker). The copy has the same attributes and limits
as the span the default mode exports; see ``ThreadTimeSpanProcessor``.

``register_metrics()`` adds observable counters to a meter: the process's
CPU time and run-queue wait by thread name, the names grouped so that a pool's threads make
one series (``ThreadPoolExecutor-0_3`` counts as ``ThreadPoolExecutor-0``),
and the spans left unmeasured, by reason.
"""
from __future__ import annotations

import asyncio
import copy
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Final

try:
    from opentelemetry import metrics as _metrics_api
    from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
    from opentelemetry.attributes import BoundedAttributes
    from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
except ImportError as _missing:  # pragma: no cover - depends on the environment
    raise ImportError("threadtime.otel needs the OpenTelemetry SDK: pip install 'threadtime[otel]'") from _missing

from . import __version__, cgroup_cpu, thread_sched, thread_times
from ._core import SpanClock

__all__ = [
    "TOTAL",
    "USER",
    "SYSTEM",
    "RUN_WAIT",
    "SCOPE",
    "THREAD_CPU",
    "THREAD_RUN_WAIT",
    "CGROUP_THROTTLED",
    "CGROUP_THROTTLED_PERIODS",
    "UNMEASURED",
    "ThreadTimeSpanProcessor",
    "group_thread_name",
    "register_metrics",
]

TOTAL: Final = "threadtime.cpu.total_ns"
USER: Final = "threadtime.cpu.user_ns"
SYSTEM: Final = "threadtime.cpu.system_ns"
RUN_WAIT: Final = "threadtime.sched.run_wait_ns"

SCOPE: Final = "threadtime.otel"
THREAD_CPU: Final = "threadtime.thread.cpu.time"
THREAD_RUN_WAIT: Final = "threadtime.thread.run_wait.time"
CGROUP_THROTTLED: Final = "threadtime.cgroup.cpu.throttled.time"
CGROUP_THROTTLED_PERIODS: Final = "threadtime.cgroup.cpu.throttled.periods"
UNMEASURED: Final = "threadtime.span.unmeasured"

# Why a span got no CPU attribute (the values of the metric's "reason").
OTHER_THREAD: Final = "other_thread"
NO_CLOCK: Final = "no_clock"
REASONS: Final = (OTHER_THREAD, NO_CLOCK)


class ThreadTimeSpanProcessor(SpanProcessor):
    """Sets each span's CPU time and run-queue wait (see the module's doc)
    on the span itself, just before it ends. Add it to a TracerProvider
    like any processor: ``provider.add_span_processor(ThreadTimeSpanProcessor())``.

    split=True adds the user/system split on threads (one ``tt_self_times``
    per end instead of a fast-clock read, and two more attributes).
    run_wait=False leaves out the run-queue wait.

    deferred=True sets the attributes on the exporting thread instead of
    the one that ends the span, which then spends only the clock reads and
    one table entry per span (docs/python-async.md has the figures). The
    spans must then reach their exporter through ``exporter()``::

        spans = ThreadTimeSpanProcessor(deferred=True)
        provider.add_span_processor(spans)
        provider.add_span_processor(BatchSpanProcessor(spans.exporter(OTLPSpanExporter())))

    A span is exported as a copy (ReadableSpan) with the attributes added
    as its own ``set_attribute`` would have added them. The figures wait
    in a table of the newest 2 * ``pending`` spans ended: those of a span
    that is never exported (a full queue dropped it, or another
    processor's exporter got it) are dropped once 2 * ``pending`` more
    spans ended, so ``pending`` must exceed the spans that can be queued
    for export at once (a BatchSpanProcessor's max_queue_size, 2048 by
    default, plus a batch).
    """

    def __init__(self, *, split: bool = False, run_wait: bool = True, deferred: bool = False,
                 pending: int = 16384) -> None:
        if deferred and pending < 1:
            raise ValueError(f"ThreadTimeSpanProcessor: pending must be at least 1, not {pending}")
        self._clock = SpanClock(TOTAL, USER, SYSTEM, RUN_WAIT, asyncio._get_running_loop, asyncio.current_task,
                                split, run_wait, pending=pending if deferred else 0)
        self._deferred = deferred
        # The SDK calls the hooks on the instance: C methods answer them,
        # with no Python frame per span.
        self.on_start = self._clock.on_start  # type: ignore[method-assign]
        self.on_end = self._clock.ignore  # type: ignore[method-assign]
        self._on_ending = self._clock.ignore  # type: ignore[method-assign]

    def unmeasured(self, reason: str) -> int:
        """Spans that got no attribute for this reason (OTHER_THREAD or
        NO_CLOCK) since the processor was made."""
        if reason not in REASONS:
            raise ValueError(f"unmeasured(): reason must be one of {', '.join(REASONS)}, not {reason!r}")
        return self._clock.unmeasured()[REASONS.index(reason)]

    def exporter(self, exporter: SpanExporter) -> SpanExporter:
        """With deferred=True: an exporter that hands ``exporter`` each span
        with the figures this processor filed for it."""
        if not self._deferred:
            raise ValueError("exporter(): the processor sets the attributes itself; make it with deferred=True")
        return _FiguresExporter(self._clock, exporter)

    def pending(self) -> int:
        """With deferred=True: the spans whose figures wait for their export
        (0 otherwise)."""
        return self._clock.pending() if self._deferred else 0


class _FiguresExporter(SpanExporter):
    """Adds the figures a deferred processor filed to each span it hands on."""

    def __init__(self, clock: SpanClock, exporter: SpanExporter) -> None:
        self._take = clock.take
        self._exporter = exporter

    def _with_figures(self, span: ReadableSpan) -> ReadableSpan:
        figures = self._take(span.context)
        if figures is None:  # not measured, or the processor's table dropped it
            return span
        total, user, system, wait = figures
        added = [(TOTAL, total)]
        if user >= 0:
            added += [(USER, user), (SYSTEM, system)]
        if wait >= 0:
            added.append((RUN_WAIT, wait))
        # The span's own limits, as its set_attribute would have applied
        # them: past maxlen the oldest attribute goes and counts as dropped.
        # The SDK names no public way to a span's limits, nor a constructor
        # that keeps its events' and links' dropped counts: the copy is the
        # span's own (a shallow one) with its attributes replaced.
        limits = span._attributes
        maxlen = max_value_len = None
        if isinstance(limits, BoundedAttributes):
            maxlen, max_value_len = limits.maxlen, limits.max_value_len
        attributes = BoundedAttributes(maxlen, dict([*(span.attributes or {}).items(), *added]), True, max_value_len)
        attributes.dropped += span.dropped_attributes
        exported = copy.copy(span)
        exported._attributes = attributes
        return exported

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self._exporter.export([self._with_figures(s) for s in spans])

    def shutdown(self) -> None:
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._exporter.force_flush(timeout_millis)


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
    """The process's figures by group of thread names, for an observable
    counter: every thread of the process (/proc/self/task), named as
    threading names it (else as the kernel does), its figures read by
    read(tid) (a tuple of counts since the thread started). Each collection
    adds to a thread's group what the thread used since the last one, so a
    thread renamed into another group leaves what it used before in the
    old group and counts once; a thread that exits keeps the figures its
    group last saw of it, so a series never goes back; what it used after
    that last collection is not counted."""

    def __init__(self, group: Callable[[str], str], read: Callable[[int], tuple[int, ...]], size: int) -> None:
        self._group = group
        self._read = read
        self._size = size
        self._lock = threading.Lock()
        self._live: dict[int, tuple[str, tuple[int, ...]]] = {}  # tid -> (group, figures)
        self._totals: dict[str, list[int]] = {}  # group -> figures counted so far

    @staticmethod
    def _kernel_name(tid: int) -> str | None:
        try:
            with open(f"/proc/self/task/{tid}/comm", "rb") as f:
                return f.read().rstrip(b"\n").decode("utf-8", "replace")
        except OSError:  # exited meanwhile
            return None

    def _sample(self) -> dict[int, tuple[str, tuple[int, ...]]]:
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
        live = {}
        for entry in os.listdir("/proc/self/task"):
            tid = int(entry)
            try:
                figures = self._read(tid)
            except OSError:  # exited since the listing
                continue
            name = names.get(tid) or self._kernel_name(tid)
            if name is not None:
                live[tid] = (self._group(name), figures)
        return live

    def sums(self) -> dict[str, list[int]]:
        """{group: figures}, each never below what it was last time."""
        with self._lock:
            live = self._sample()
            for tid, (group, figures) in live.items():
                total = self._totals.setdefault(group, [0] * self._size)
                before = self._live.get(tid)
                # The same thread: what it used since, in the group it is in
                # now. New, or its id reused by a thread with less: all of it.
                if before is not None and all(n >= f for n, f in zip(figures, before[1])):
                    since = [n - f for n, f in zip(figures, before[1])]
                else:
                    since = list(figures)
                for i, f in enumerate(since):
                    total[i] += f
            self._live = live
            return {group: list(figures) for group, figures in sorted(self._totals.items())}


def _cpu(tid: int) -> tuple[int, int]:
    user, system, _ = thread_times(tid)
    return user, system


def _run_wait(tid: int) -> tuple[int]:
    return (thread_sched(tid).run_wait_ns,)


def register_metrics(meter_provider: MeterProvider | None = None, *, spans: ThreadTimeSpanProcessor | None = None,
                     group: Callable[[str], str] = group_thread_name) -> None:
    """Registers threadtime's observable counters with the meter provider
    (the global one by default), scope SCOPE:

    * THREAD_CPU (s; ``thread.name``, ``cpu.mode`` = user | system): the
      process's CPU time by group of thread names (``group``, by default
      group_thread_name), shaped like ``process.cpu.time``;
    * THREAD_RUN_WAIT (s; ``thread.name``): the time the process's threads
      were runnable but waiting for a CPU (schedstat's run_delay: a busy
      host, or the cgroup's CPU quota), by the same groups; left out where
      the kernel keeps no schedstat;
    * CGROUP_THROTTLED (s) and CGROUP_THROTTLED_PERIODS ({period}): the
      time the process's cgroup was held back by its CPU quota, and the
      quota periods in which it was (``cgroup_cpu()``: the whole group's,
      not this process's alone); left out where no CPU controller is
      visible;
    * UNMEASURED ({span}; ``reason``), when spans is given: the spans that
      processor left without a CPU attribute.
    """
    provider = meter_provider if meter_provider is not None else _metrics_api.get_meter_provider()
    meter = provider.get_meter(SCOPE, __version__)
    cpu = _ThreadSampler(group, _cpu, 2)

    def cpu_time(options: CallbackOptions) -> list[Observation]:
        out = []
        for name, (user, system) in cpu.sums().items():
            out.append(Observation(user / 1e9, {"thread.name": name, "cpu.mode": "user"}))
            out.append(Observation(system / 1e9, {"thread.name": name, "cpu.mode": "system"}))
        return out

    meter.create_observable_counter(THREAD_CPU, callbacks=[cpu_time], unit="s",
                                    description="CPU time of this process's threads, by group of thread names")
    try:
        thread_sched(0)
    except OSError:  # no schedstat in this kernel: no series rather than zeros
        pass
    else:
        waits = _ThreadSampler(group, _run_wait, 1)

        def run_wait(options: CallbackOptions) -> list[Observation]:
            return [Observation(w / 1e9, {"thread.name": name}) for name, (w,) in waits.sums().items()]

        meter.create_observable_counter(THREAD_RUN_WAIT, callbacks=[run_wait], unit="s",
                                        description="Time this process's threads waited for a CPU, by group of "
                                                    "thread names")
    try:
        cgroup_cpu()
    except OSError:  # no CPU controller visible: no series rather than zeros
        pass
    else:
        meter.create_observable_counter(
            CGROUP_THROTTLED, callbacks=[lambda options: [Observation(cgroup_cpu().throttled_ns / 1e9)]], unit="s",
            description="Time the process's cgroup was held back by its CPU quota")
        meter.create_observable_counter(
            CGROUP_THROTTLED_PERIODS, callbacks=[lambda options: [Observation(cgroup_cpu().throttled_periods)]],
            unit="{period}", description="Quota periods in which the process's cgroup ran out of CPU quota")
    if spans is not None:
        def unmeasured(options: CallbackOptions) -> list[Observation]:
            return [Observation(spans.unmeasured(r), {"reason": r}) for r in REASONS]

        meter.create_observable_counter(UNMEASURED, callbacks=[unmeasured], unit="{span}",
                                        description="Spans that got no threadtime CPU attribute, by reason")
