"""threadtime: what each thread of this process costs, read cheaply.

Three kinds of answer, named so they are not confused:

* ``*_total_ns``: precise CPU time (the scheduler's runtime, ns);
* ``*_raw_ns``: raw tick-sampled clocks (user, or user + system): the cheapest
  read, but a tick is credited whole, so raw user time can exceed the total;
* ``times()`` / ``thread_times()`` / ``process_times()``: a consistent split,
  ``Times(user_ns, system_ns, total_ns)`` with ``user_ns + system_ns ==
  total_ns`` and each part monotonic, as /proc and getrusage report it.

The event log: ``start_log()``, ``event(id[, text or value])``, ``with
interval(id):``, ``event_name(id, name)``, ``dump(path)``, ``stop_log()``;
each event costs about one cycle-counter read in C plus the Python call.

Trace files: ``read_trace(path)`` parses one with the core's reader, and
``Trace.to_pandas()`` gives its events as a DataFrame (pandas optional).

Errors are ``OSError`` subclasses carrying the errno and the core's text,
e.g. ``ProcessLookupError`` for a thread that has exited.
"""
from ._core import (
    LogInfo,
    ProcStat,
    ThreadClock,
    Times,
    __version__,
    dump,
    event,
    event_name,
    interval,
    log_info,
    log_thread_name,
    method,
    process_prof_raw_ns,
    process_times,
    process_total_ns,
    process_user_raw_ns,
    procfs_read,
    set_method,
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
    "Event",
    "Events",
    "Interval",
    "Trace",
    "TraceDamagedWarning",
    "TraceError",
    "TraceThread",
    "read_trace",
    "LogInfo",
    "ProcStat",
    "ThreadClock",
    "Times",
    "__version__",
    "dump",
    "event",
    "event_name",
    "interval",
    "log_info",
    "log_thread_name",
    "method",
    "process_prof_raw_ns",
    "process_times",
    "process_total_ns",
    "process_user_raw_ns",
    "procfs_read",
    "set_method",
    "start_log",
    "stop_log",
    "system_raw_ns",
    "thread_system_raw_ns",
    "thread_times",
    "thread_total_ns",
    "thread_user_raw_ns",
    "times",
    "total_ns",
    "user_raw_ns",
]
