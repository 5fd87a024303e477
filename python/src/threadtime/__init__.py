"""threadtime: what each thread of this process costs, read cheaply.

Three kinds of answer, named so they are not confused:

* ``*_total_ns``: precise CPU time (the scheduler's runtime, ns);
* ``*_raw_ns``: raw tick-sampled clocks (user, or user + system): the cheapest
  read, but a tick is credited whole, so raw user time can exceed the total;
* ``times()`` / ``thread_times()`` / ``process_times()``: a consistent split,
  ``Times(user_ns, system_ns, total_ns)`` with ``user_ns + system_ns ==
  total_ns`` and each part monotonic, divided as /proc and getrusage divide
  it; the total is the precise one at the call (they lag up to a tick).

``sched()``: the calling thread's scheduler accounts, ``Sched(on_cpu_ns,
run_wait_ns, timeslices, voluntary_switches, involuntary_switches)``;
``run_wait_ns`` is time runnable but waiting for a CPU; ``thread_sched(tid)``
the same for another thread of the process. ``cgroup_cpu()``: the CPU
throttling of the process's cgroup. ``delays(native_id=0)``:
a thread's delay-accounting figures (block I/O, swap-in, reclaim, thrashing,
IRQ, ...) from the kernel's taskstats, where ``delay_accounting()`` says "on"
and the caller has CAP_NET_ADMIN.

``total_ns()`` of the calling thread reads the core's fast clock (no system
call while the thread keeps its CPU); ``fast_clock()`` says what answers,
``set_fast_clock(False)`` turns it off.

The event log: ``start_log()``, ``event(id[, text or value])``, ``with
interval(id):`` (or ``@interval(id)``), ``event_name(id, name)``,
``dump(path)``, ``stop_log()``, or ``with recording(path):`` for start, stop
and dump; an id is an int or a str name. Each event costs about one
cycle-counter read in C plus the Python call.

Trace files: ``read_trace(path)`` parses one with the core's reader, and
``Trace.to_pandas()`` gives its events as a DataFrame (pandas optional).

Errors are ``OSError`` subclasses carrying the errno and the core's text,
e.g. ``ProcessLookupError`` for a thread that has exited, ``LogRunningError``
for a second ``start_log()``; bad arguments raise ``TypeError`` or
``ValueError`` naming the argument and its range.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal, ParamSpec, TypeVar

try:
    from . import _core  # noqa: F401 - the C extension, which every name below comes from
except ImportError as e:
    raise ImportError(
        f"threadtime's C extension (threadtime._core) did not load: {e}. Reinstall threadtime "
        "(pip install --force-reinstall threadtime), or build it from a checkout with `make python-install`; "
        "it needs Linux and CPython 3.10+",
        name="threadtime._core") from e
from ._core import (
    FAST_BOUND_NS,
    CgroupCpu,
    Delays,
    LogInfo,
    LogRunningError,
    ProcStat,
    Sched,
    ThreadClock,
    Times,
    __version__,
    delay_accounting,
    delays,
    dump,
    event,
    cgroup_cpu,
    event_name,
    fast_clock,
    interval,
    log_info,
    log_thread_name,
    method,
    process_prof_raw_ns,
    process_times,
    process_total_ns,
    process_user_raw_ns,
    procfs_read,
    set_fast_clock,
    sched,
    set_method,
    thread_sched,
    start_log,
    stop_log,
    system_raw_ns,
    thread_system_raw_ns,
    thread_times,
    thread_total_ns,
    thread_user_raw_ns,
    times,
    total_ns,
    user_raw_ns,
    Event,
    Events,
)
from .trace import Interval, Trace, TraceDamagedWarning, TraceError, TraceThread, read_trace

__all__ = [
    "Delays",
    "delay_accounting",
    "delays",
    "Event",
    "Events",
    "Interval",
    "Trace",
    "TraceDamagedWarning",
    "TraceError",
    "TraceThread",
    "read_trace",
    "FAST_BOUND_NS",
    "CgroupCpu",
    "LogInfo",
    "LogRunningError",
    "ProcStat",
    "Sched",
    "ThreadClock",
    "Times",
    "__version__",
    "cgroup_cpu",
    "dump",
    "event",
    "event_name",
    "fast_clock",
    "interval",
    "log_info",
    "log_thread_name",
    "method",
    "process_prof_raw_ns",
    "process_times",
    "process_total_ns",
    "process_user_raw_ns",
    "procfs_read",
    "recording",
    "sched",
    "set_fast_clock",
    "set_method",
    "start_log",
    "stop_log",
    "system_raw_ns",
    "thread_system_raw_ns",
    "thread_sched",
    "thread_times",
    "thread_total_ns",
    "thread_user_raw_ns",
    "times",
    "total_ns",
    "user_raw_ns",
]


# Conveniences written in Python, set on the extension's types (heap types,
# so their slots follow): Times arithmetic and dict, interval as a decorator.


def _times_sub(self: Times, other: Times) -> Times:
    """The CPU time between two readings, field by field (a later reading
    minus an earlier one of the same thread or process)."""
    if not isinstance(other, Times):
        return NotImplemented
    return Times((self.user_ns - other.user_ns, self.system_ns - other.system_ns, self.total_ns - other.total_ns))


def _times_asdict(self: Times) -> dict[str, int]:
    """{'user_ns': ..., 'system_ns': ..., 'total_ns': ...}, as a namedtuple's."""
    return {"user_ns": self.user_ns, "system_ns": self.system_ns, "total_ns": self.total_ns}


Times.__sub__ = _times_sub  # type: ignore[method-assign]
Times._asdict = _times_asdict  # type: ignore[method-assign]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _interval_call(self: interval, func: Callable[_P, _R], /) -> Callable[_P, _R]:
    """As a decorator: every call of func is the interval."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self:
            return func(*args, **kwargs)

    return wrapper


interval.__call__ = _interval_call  # type: ignore[method-assign]


class recording:
    """``with recording(path, **start_log_options):`` starts the event log on
    entry; on exit, however the block ends, stops it and, if path is not None,
    dumps the trace there. The options are start_log()'s."""

    def __init__(self, path: str | os.PathLike[str] | bytes | None = None, *, ring_records: int = 0,
                 crash_file: str | os.PathLike[str] | bytes | None = None,
                 exit_dump_path: str | os.PathLike[str] | bytes | None = None, cpu_on_intervals: bool = False,
                 max_threads: int = 0, clock: Literal["auto", "counter", "monotonic"] = "auto") -> None:
        self.path = path
        self._options: dict[str, Any] = {
            "ring_records": ring_records, "crash_file": crash_file, "exit_dump_path": exit_dump_path,
            "cpu_on_intervals": cpu_on_intervals, "max_threads": max_threads, "clock": clock,
        }

    def __enter__(self) -> recording:
        start_log(**self._options)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        stop_log()
        if self.path is not None:
            dump(self.path)
        return False
