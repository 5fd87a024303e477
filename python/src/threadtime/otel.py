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

The figures are read in C at the span's start and at its end, with no
Python frame per span. Where the SDK's ``Span.end()`` calls the
processors' ``_on_ending`` on the live span (SDK 1.40 and later), they go
straight into the span's attribute store there, under its attribute limit
(``path`` is "on_ending"): the SDK's own ``set_attribute`` would cost a
fresh span more than the whole processor. With any other SDK shape the
processor puts a hook on the span's own ``end()`` when the span starts,
which sets them through the span's ``set_attribute`` (``path`` is
"end_hook").

``register_metrics()`` adds observable counters to a meter: the process's
CPU time and run-queue wait by thread name, the names grouped so that a pool's threads make
one series (``ThreadPoolExecutor-0_3`` counts as ``ThreadPoolExecutor-0``),
the reads of a thread's wait that failed, and the spans left unmeasured, by
reason.
"""
from __future__ import annotations

import asyncio
import errno
import inspect
import logging
import os
import re
import threading
import types
from collections.abc import Callable
from typing import Final, Literal

try:
    from opentelemetry import metrics as _metrics_api
    from opentelemetry.metrics import CallbackOptions, MeterProvider, NoOpMeterProvider, Observation
    from opentelemetry.attributes import BoundedAttributes
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON
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
    "THREAD_RUN_WAIT_SKIPPED",
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
THREAD_RUN_WAIT_SKIPPED: Final = "threadtime.thread.run_wait.skipped"
CGROUP_THROTTLED: Final = "threadtime.cgroup.cpu.throttled.time"
CGROUP_THROTTLED_PERIODS: Final = "threadtime.cgroup.cpu.throttled.periods"
UNMEASURED: Final = "threadtime.span.unmeasured"

# Why a span got no CPU attribute (the values of the metric's "reason").
OTHER_THREAD: Final = "other_thread"
NO_CLOCK: Final = "no_clock"
REASONS: Final = (OTHER_THREAD, NO_CLOCK)


class _ShapeProbe(SpanProcessor):
    """Ends one span of a provider of its own and checks what the on_ending
    path relies on: the span has an instance dict; its ``_on_ending`` comes
    after the end time is set and the attributes are read-only, on the live
    span, whose ``_attributes`` is exactly BoundedAttributes over a plain
    dict with ``maxlen`` and ``dropped``; and an item put into that dict
    there is in the span the next on_end gets."""

    KEY = "threadtime.probe"

    def __init__(self) -> None:
        self.started = self.ending = self.ended = False

    def on_start(self, span: Span, parent_context: object = None) -> None:
        self.started = isinstance(getattr(span, "__dict__", None), dict)

    def _on_ending(self, span: Span) -> None:
        a = getattr(span, "_attributes", None)
        if (self.started and span._end_time is not None and type(a) is BoundedAttributes
                and type(getattr(a, "_dict", None)) is dict and getattr(a, "_immutable", None) is True
                and (a.maxlen is None or type(a.maxlen) is int) and type(a.dropped) is int):
            a._dict[self.KEY] = 1
            self.ending = True

    def on_end(self, span: ReadableSpan) -> None:
        self.ended = self.ending and (span.attributes or {}).get(self.KEY) == 1


def _sdk_has_on_ending() -> bool:
    """Whether this SDK has the shape the on_ending path relies on (tried
    on a span of a provider of its own, not registered anywhere)."""
    probe = _ShapeProbe()
    resource = Resource.get_empty()
    try:
        try:  # the SDK's metrics of its own spans (1.40+) do not count the probe
            provider = TracerProvider(sampler=ALWAYS_ON, resource=resource, shutdown_on_exit=False,
                                      meter_provider=NoOpMeterProvider())
        except TypeError:  # an SDK without them
            provider = TracerProvider(sampler=ALWAYS_ON, resource=resource, shutdown_on_exit=False)
        provider.add_span_processor(probe)
        provider.get_tracer(SCOPE).start_span("probe").end()
        provider.shutdown()
    except Exception:  # another SDK's constructor or span: the hook's path
        return False
    return probe.ended


def _nothing(*args: object, **kwargs: object) -> None:
    pass


def _acting_hook(then: SpanProcessor | None, name: str, *args: object,
                 **kwargs: object) -> Callable[..., object] | None:
    """then's hook `name` (bound), or None where then has none, or one that
    does nothing when called as the SDK calls it (args, kwargs):
    SpanProcessor's own, or a plain function whose whole body is ``pass``
    (the SDK's exporting processors' on_start and _on_ending) and that
    takes them."""
    hook = getattr(then, name, None)
    if hook is None:
        return None
    func = getattr(hook, "__func__", None)
    code = getattr(func, "__code__", None)
    if func is getattr(SpanProcessor, name, None) or (
            isinstance(func, types.FunctionType) and isinstance(code, types.CodeType)
            and code.co_code == _nothing.__code__.co_code and code.co_consts == _nothing.__code__.co_consts):
        try:
            inspect.signature(hook).bind(*args, **kwargs)
        except TypeError:  # the SDK's call would fail: so does this one's
            return hook  # type: ignore[no-any-return]
        return None
    return hook  # type: ignore[no-any-return]


class ThreadTimeSpanProcessor(SpanClock, SpanProcessor):
    """Sets each span's CPU time and run-queue wait (see the module's doc)
    on the span itself, as it ends. Add it to a TracerProvider like any
    processor, before or after the one that exports:
    ``provider.add_span_processor(ThreadTimeSpanProcessor())``; or, cheaper,
    in front of the exporting one, as the provider's only processor:
    ``provider.add_span_processor(ThreadTimeSpanProcessor(BatchSpanProcessor(exporter)))``
    (the SDK's price for a second processor, a few hundred ns a span, is not
    paid). The wrapped processor gets every call the SDK makes: its
    on_start before the span's start figures are read, its _on_ending and
    on_end with the figures on the span (its on_end is this processor's
    on_end attribute, which the SDK calls directly), shutdown and
    force_flush. Its on_start and _on_ending are not called where they do
    nothing (a body of ``pass``, as the SDK's own processors have). Its
    hooks are looked up once, when this processor is made: replace one
    (``mock.patch.object``, instrumentation) before wrapping it, not after.

    split=True adds the user/system split on threads (one ``tt_self_times``
    per end instead of a fast-clock read, and two more attributes).
    run_wait=False leaves out the run-queue wait.
    """

    _then: SpanProcessor | None = None  # a subclass whose __init__ never ran still shuts down
    _split: bool
    _run_wait: bool
    _path: Literal["on_ending", "end_hook"]

    def __init__(self, then: SpanProcessor | None = None, *, split: bool = False, run_wait: bool = True) -> None:
        direct = _sdk_has_on_ending()
        span, context = object(), object()  # stand-ins: only the hooks' signatures take them here
        # The SDK calls the hooks SpanClock defines in C: no Python frame
        # per span.
        super().__init__(TOTAL, USER, SYSTEM, RUN_WAIT, asyncio._get_running_loop, asyncio.current_task, split,
                         run_wait, attributes_type=BoundedAttributes if direct else None,
                         then_on_start=_acting_hook(then, "on_start", span, parent_context=context),
                         then_on_ending=_acting_hook(then, "_on_ending", span))
        on_end = _acting_hook(then, "on_end", span)
        if on_end is not None:
            self.on_end = on_end  # type: ignore[method-assign,assignment]
        self._then = then
        self._split, self._run_wait = split, run_wait
        self._path = "on_ending" if direct else "end_hook"

    @property
    def path(self) -> Literal["on_ending", "end_hook"]:
        """How the figures reach the span: "on_ending" (straight into its
        attributes from the SDK's ``_on_ending``) or "end_hook" (a hook on
        its ``end()`` and its ``set_attribute``), chosen by the SDK's shape
        when the processor was made."""
        return self._path

    @property
    def then(self) -> SpanProcessor | None:
        """The processor this one wraps, or None."""
        return self._then

    def shutdown(self) -> None:
        if self._then is not None:
            self._then.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True if self._then is None else self._then.force_flush(timeout_millis)

    def __repr__(self) -> str:
        then = "" if self._then is None else f"{self._then!r}, "
        return f"ThreadTimeSpanProcessor({then}split={self._split}, run_wait={self._run_wait}, path={self._path!r})"

    def unmeasured(self, reason: str) -> int:
        """Spans that got no attribute for this reason (OTHER_THREAD or
        NO_CLOCK) since the processor was made."""
        if reason not in REASONS:
            raise ValueError(f"unmeasured(): reason must be one of {', '.join(REASONS)}, not {reason!r}")
        return self._unmeasured_counts()[REASONS.index(reason)]


# "ThreadPoolExecutor-0_3" -> "ThreadPoolExecutor-0", "Thread-7 (work)" ->
# "Thread (work)", "asyncio_2" -> "asyncio": a number after the last - or _,
# with what threading appends after it (the target's name in parentheses).
_NUMBERED = re.compile(r"^(?P<base>.+?)[-_][0-9]+(?P<target> \(.*\))?$")


def group_thread_name(name: str) -> str:
    """The series a thread's CPU time is counted in: its name without the
    number that tells a pool's threads apart."""
    m = _NUMBERED.match(name)
    return name if m is None else m["base"] + (m["target"] or "")


# A read of a thread that has exited since /proc/self/task listed it: the
# kernel no longer knows the tid (ESRCH), or its directory there is gone
# (ENOENT). Any other error is a thread that could not be read.
_EXITED: Final = (errno.ESRCH, errno.ENOENT)

_log = logging.getLogger(__name__)


class _ThreadSampler:
    """The process's figures by group of thread names, for an observable
    counter: every thread of the process (/proc/self/task), named as
    threading names it (else as the kernel does), its figures read by
    read(tid) (a tuple of counts since the thread started). Each collection
    adds to a thread's group what the thread used since the last one, so a
    thread renamed into another group leaves what it used before in the
    old group and counts once; a thread that exits keeps the figures its
    group last saw of it, so a series never goes back; what it used after
    that last collection is not counted.

    A thread whose read fails otherwise than by its exit (EACCES, EIO: a
    file that did not parse) keeps, for that collection, the figures it had
    at the last one, so what it used meanwhile is added once it can be read
    again, neither lost nor counted twice; a listing of /proc/self/task
    that fails leaves every thread so. Each such failure is counted in
    skipped(); the sampler's first one is logged (WARNING, logger
    threadtime.otel), naming what it reads (what) and the counter that
    reports the count (counted_in; None: none does)."""

    def __init__(self, group: Callable[[str], str], read: Callable[[int], tuple[int, ...]], size: int,
                 what: str, counted_in: str | None = None) -> None:
        self._group = group
        self._read = read
        self._size = size
        self._what = what
        self._counted_in = counted_in
        self._lock = threading.Lock()
        self._live: dict[int, tuple[str, tuple[int, ...]]] = {}  # tid -> (group, figures)
        self._totals: dict[str, list[int]] = {}  # group -> figures counted so far
        self._skipped = 0

    @staticmethod
    def _kernel_name(tid: int) -> str:
        with open(f"/proc/self/task/{tid}/comm", "rb") as f:
            return f.read().rstrip(b"\n").decode("utf-8", "replace")

    def _skip(self, tid: int | None, error: OSError) -> None:
        """Counts a read that failed (tid None: the listing of every thread);
        logs the first."""
        self._skipped += 1
        if self._skipped == 1:
            counted = f" (counted in {self._counted_in})" if self._counted_in is not None else ""
            _log.warning("threadtime: could not read the %s of %s; kept at the last collection's figure, as at "
                         "any later such failure, which is not logged%s", self._what,
                         "every thread (/proc/self/task)" if tid is None else f"thread {tid}", counted,
                         exc_info=error)

    def _sample(self) -> dict[int, tuple[str, tuple[int, ...]]] | None:
        """Every thread's group and figures now (a thread that could not be
        read: those of the last collection); None if the threads could not
        be listed."""
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
        try:
            tids = [int(entry) for entry in os.listdir("/proc/self/task")]
        except OSError as e:
            self._skip(None, e)
            return None
        live = {}
        for tid in tids:
            try:
                figures = self._read(tid)
                name = names.get(tid) or self._kernel_name(tid)
            except OSError as e:
                if e.errno not in _EXITED:
                    if tid in self._live:
                        live[tid] = self._live[tid]
                    self._skip(tid, e)
                continue
            live[tid] = (self._group(name), figures)
        return live

    def sums(self) -> dict[str, list[int]]:
        """{group: figures}, each never below what it was last time."""
        with self._lock:
            live = self._sample()
            for tid, (group, figures) in (live or {}).items():
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
            if live is not None:
                self._live = live
            return {group: list(figures) for group, figures in sorted(self._totals.items())}

    def skipped(self) -> int:
        """The reads that failed otherwise than by a thread's exit since the
        sampler was made (a failed listing counts once)."""
        with self._lock:
            return self._skipped


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
    * THREAD_RUN_WAIT_SKIPPED ({read}), beside it: the reads of a thread's
      wait that failed otherwise than by the thread's exit (EACCES, EIO),
      the thread keeping the figure it had (the first failure is logged
      through ``logging``, logger ``threadtime.otel``); a CPU time read
      that fails so keeps its figure too and is logged, with no counter;
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
    cpu = _ThreadSampler(group, _cpu, 2, "CPU time")

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
        waits = _ThreadSampler(group, _run_wait, 1, "run-queue wait", THREAD_RUN_WAIT_SKIPPED)

        def run_wait(options: CallbackOptions) -> list[Observation]:
            return [Observation(w / 1e9, {"thread.name": name}) for name, (w,) in waits.sums().items()]

        meter.create_observable_counter(THREAD_RUN_WAIT, callbacks=[run_wait], unit="s",
                                        description="Time this process's threads waited for a CPU, by group of "
                                                    "thread names")
        # After the wait: the SDK calls the callbacks in the order they were
        # registered, so a collection's count includes its own failures.
        meter.create_observable_counter(THREAD_RUN_WAIT_SKIPPED,
                                        callbacks=[lambda options: [Observation(waits.skipped())]], unit="{read}",
                                        description="Reads of a thread's run-queue wait that failed, the thread "
                                                    "keeping the figure it had")
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
