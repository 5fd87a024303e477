"""Trace files read back in Python, by the core's own reader.

``read_trace(path)`` parses a file written by ``dump()`` (or by
``tt_log_dump``, Java's ``EventLog.dump``) or left by a crash-safe log, with
the C code behind ``threadtime dump``: the same checks, the same messages for
a damaged file. Each thread's events are decoded when asked for, so opening a
file of millions of events is quick and small; ``Trace.to_pandas()`` turns
them all into a DataFrame (pandas is an optional extra:
``pip install threadtime[pandas]``).
"""
from __future__ import annotations

import collections.abc
import errno
import functools
import os
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ._core import _KINDS, Event, Events, _pair_events, _trace_columns, _trace_intervals, _trace_open

if TYPE_CHECKING:
    import pandas

KINDS: tuple[str, ...] = _KINDS  # the core's kind names, by kind code - 1

# Events has len, indexing (negative too, and slices), index and count in C;
# iteration, `in` and reversed() come from those. Registered, it is what
# isinstance(x, Sequence) and typed code expect.
collections.abc.Sequence.register(Events)


class TraceError(OSError):
    """The file is not a trace, or is damaged; ``strerror`` is the reader's
    text, the one ``threadtime dump`` prints; ``errno`` is EINVAL."""


class TraceDamagedWarning(UserWarning):
    """Part of the file is damaged or cut off; what is intact was read."""


@dataclass(frozen=True)
class Interval:
    """A begin event and its end, paired by the rule of docs/trace-format.md
    ("Ownership and pairing"), the one ``threadtime dump`` follows: on one
    track (a thread's own events, or one virtual thread's events from every
    carrier in time order), an end closes the latest open begin of its id."""

    id: int
    start_ns: int
    end_ns: int
    text: str | None
    cpu_user_ns: int | None  # CPU of the interval's own thread, between begin_cpu and end_cpu (see cpu_ns)
    cpu_system_ns: int | None
    vthread: int | None = None  # the virtual thread whose track it is on, else None
    end_tid: int | None = None  # the OS thread that recorded the end (another carrier for a virtual thread)
    thrown: bool = False  # the probed call exited by an exception
    # The CPU its caller measured on its own account (an 'end_cpu_total': a
    # probe on a virtual thread charged in exact mode), a total with no
    # user/system split (cpu_user_ns and cpu_system_ns are None then).
    cpu_total_ns: int | None = None
    mounted_ns: int | None = None  # an 'end_mounted': the time the virtual thread was mounted (not CPU)
    # The thread's wait for a CPU inside a CPU pair, where the log recorded
    # it (THREADTIME_CPU_WAIT=1): its run-queue wait at the end minus at the
    # begin. Only Trace and TraceThread intervals have it; pair_intervals()
    # gives None.
    run_wait_ns: int | None = None

    @property
    def wall_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def cpu_ns(self) -> int | None:
        """The interval's CPU, or None: user + system of a CPU pair whose
        begin and end lie on one OS thread with no mount or unmount marker
        between them (else it would hold other threads' work), or
        ``cpu_total_ns``, which is its own thread's wherever it ran."""
        return _cpu_ns(self.cpu_user_ns, self.cpu_system_ns, self.cpu_total_ns)


def _cpu_ns(user: int | None, system: int | None, total: int | None) -> int | None:
    """Interval.cpu_ns from the parts, for code that pairs many events
    without making an Interval of each (~6 us apiece)."""
    if total is not None:
        return total
    if user is None or system is None:
        return None
    return user + system


@dataclass(frozen=True)
class TraceThread:
    """One thread's section of a trace."""

    tid: int
    name: str  # the whole name it gave itself (format 1.2), else the kernel's (15 bytes at most)
    state: str  # "live" or "exited" (when the file was written)
    overwritten: int  # records lost to the ring wrapping
    incomplete: int  # records present but never committed, or cut off (damaged ones included)
    events: Events = field(repr=False)  # a sequence of Event, oldest first
    damaged: int = 0  # records between intact ones that did not decode, dropped (see Trace.damaged)
    _pairs: Callable[[], list[Interval]] | None = field(default=None, repr=False, compare=False)

    def intervals(self) -> list[Interval]:
        """The pairs whose begin this thread recorded, by start time: the
        pairs ``threadtime dump`` draws (Chrome) and counts (--summary),
        including those of virtual threads that began on this carrier and
        ended on another. A begin without an end is left out."""
        if self._pairs is None:
            return pair_intervals(self.events)
        return self._pairs()


def pair_intervals(events: Iterable[Event]) -> list[Interval]:
    """The intervals of events you picked, by start time, paired by the
    core's rule as one track: an end closes the latest open begin of its id.
    Unlike ``TraceThread.intervals()`` it sees no carriers, so give it the
    events of one thread (or of one virtual thread, in time order); CPU is
    given only when no mount or unmount event lies between begin and end."""
    return sorted((Interval(id_, start, end, None, user, system, vthread, None, thrown, total, mounted)
                   for (start, end, id_, user, system, vthread, thrown, total, mounted) in _pair_events(events)),
                  key=lambda i: i.start_ns)


@dataclass(frozen=True)
class Trace:
    """A parsed trace file. Times are ns of CLOCK_MONOTONIC_RAW; event times
    (``Event.t_ns``) count from ``start_mono_ns``."""

    path: str
    format: str
    pid: int
    source: str  # "tsc", "cntvct" or "monotonic_raw": what stamped the events
    counter_hz: float
    start_mono_ns: int
    start_realtime_ns: int
    end_mono_ns: int | None  # when dumped or stopped; None for a live crash-safe file
    threads_dropped: int  # threads that found no ring
    rings_recycled: int  # exited threads' rings reused before the dump
    crash_safe: bool  # the file is a crash-safe log's rings, not a dump
    names: dict[int, str]  # the trace's event names by id (format 1.1); {} for a 1.0 file
    vthread_names: dict[int, str]  # virtual threads' names by id (format 1.2: tt_log_vthread_name, the Java agent)
    damaged: str | None  # what is missing or was dropped, in the reader's words; None if intact
    threads: list[TraceThread]
    _data: Any = field(repr=False, compare=False)

    def __iter__(self) -> Iterator[TraceThread]:
        return iter(self.threads)

    def __len__(self) -> int:
        return len(self.threads)

    @property
    def events(self) -> int:
        """The number of events in all threads (an int; the events
        themselves are in each ``TraceThread.events``)."""
        return sum(len(t.events) for t in self.threads)

    def intervals(self) -> list[Interval]:
        """Every begin/end pair of the trace, by start time: what
        ``threadtime dump --summary`` counts and ``--format chrome`` draws."""
        return sorted((i for t in self.threads for i in t.intervals()), key=lambda i: i.start_ns)

    def to_pandas(self) -> pandas.DataFrame:
        """Every event as one row: tid, thread, vthread, seq, t_ns, kind,
        id, name, value, text, cpu_user_ns, cpu_system_ns, thrown. thread,
        kind, name and text are categorical (they repeat); vthread is the
        virtual thread an event belongs to (a mount marker's, on the carrier
        that recorded it). Missing values are <NA> (nullable integer columns)
        or NaN (name, text). Needs pandas."""
        try:
            import numpy as np
            import pandas as pd
        except ImportError as e:
            raise ImportError("Trace.to_pandas() needs pandas: pip install 'threadtime[pandas]'") from e
        cols = _trace_columns(self._data)
        thread = np.frombuffer(cols["thread"], dtype=np.uint32).astype(np.int32)
        tids = np.array([t.tid for t in self.threads], dtype=np.uint32)
        # One category per thread, labelled with its name; with the tid too
        # where names repeat (a pool's threads often share one).
        names = [t.name for t in self.threads]
        labels = [n if names.count(n) == 1 else f"{n} ({t.tid})" for n, t in zip(names, self.threads)]
        kind = np.frombuffer(cols["kind"], dtype=np.uint8).astype(np.int8) - 1

        def nullable(values: str, present: str, dtype: str) -> Any:
            mask = np.frombuffer(cols[present], dtype=np.uint8) == 0
            return pd.arrays.IntegerArray(np.frombuffer(cols[values], dtype=np.uint64).astype(dtype, copy=False),
                                          mask)

        return pd.DataFrame({
            "tid": tids[thread] if len(tids) else np.empty(0, np.uint32),
            "thread": pd.Categorical.from_codes(thread, categories=labels),
            "vthread": nullable("vthread", "has_vthread", "uint64"),
            "seq": np.frombuffer(cols["seq"], dtype=np.uint64),
            "t_ns": np.frombuffer(cols["t_ns"], dtype=np.int64),
            "kind": pd.Categorical.from_codes(kind, categories=KINDS),
            "id": np.frombuffer(cols["id"], dtype=np.uint32),
            "name": pd.Categorical.from_codes(np.frombuffer(cols["name"], dtype=np.int32),
                                              categories=pd.Index(cols["names"], dtype=object)),
            "value": nullable("value", "has_value", "uint64"),
            "text": pd.Categorical.from_codes(np.frombuffer(cols["text"], dtype=np.int32),
                                              categories=pd.Index(cols["texts"], dtype=object)),
            "cpu_user_ns": nullable("cpu_user_ns", "has_cpu", "uint64"),
            "cpu_system_ns": nullable("cpu_system_ns", "has_cpu", "uint64"),
            "thrown": np.frombuffer(cols["thrown"], dtype=np.uint8).astype(bool),
        }, copy=False)


def read_trace(path: str | os.PathLike[str] | bytes, *, strict: bool = False) -> Trace:
    """Reads a trace file with the core's reader.

    A file that is not a trace, or whose header is unusable, raises
    ``TraceError`` (an ``OSError`` with errno EINVAL and the reader's text).
    A file damaged further in (cut off, a broken section) gives what is
    intact, with ``Trace.damaged`` saying what is not, and a
    ``TraceDamagedWarning``; ``strict=True`` raises ``TraceError`` instead.
    Files that cannot be read raise the ``OSError`` the system gives
    (``FileNotFoundError``, ``PermissionError``, ...).
    """
    error, header, threads, data = _trace_open(path)
    shown = os.fsdecode(path)
    if header is None or (error is not None and strict):
        raise TraceError(errno.EINVAL, error, shown)
    if error is not None:
        warnings.warn(f"{shown} is damaged; the intact part was read: {error}", TraceDamagedWarning, stacklevel=2)
    (fmt, pid, source, hz, start_mono, start_real, end_mono, dropped, recycled, crash_safe, names,
     vthread_names) = header
    tids = [t[0] for t in threads]
    cache: list[list[list[Interval]]] = []

    def pairs(i: int) -> list[Interval]:
        # The model pairs the whole trace at once (a virtual thread's
        # pairs span carriers); done on the first call, kept for the rest.
        if not cache:
            cache.append([
                sorted((Interval(id_, start, end, text, user, system, vthread, tids[end_thread], thrown, total,
                                 mounted, wait)
                        for (end_thread, vthread, id_, start, end, text, user, system, thrown, total, mounted, wait)
                        in per_thread),
                       key=lambda i: i.start_ns)
                for per_thread in _trace_intervals(data)
            ])
        return list(cache[0][i])

    made = [TraceThread(tid, name, state, over, incomplete, events, damaged, functools.partial(pairs, i))
            for i, (tid, name, state, over, incomplete, events, damaged) in enumerate(threads)]
    return Trace(
        path=shown, format=fmt, pid=pid, source=source, counter_hz=hz, start_mono_ns=start_mono,
        start_realtime_ns=start_real, end_mono_ns=end_mono, threads_dropped=dropped,
        rings_recycled=recycled, crash_safe=crash_safe, names=names, vthread_names=vthread_names, damaged=error,
        threads=made, _data=data,
    )
