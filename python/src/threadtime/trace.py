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

import errno
import os
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ._core import Event, Events, _trace_columns, _trace_open

if TYPE_CHECKING:
    import pandas

KINDS = ("instant", "text", "value", "begin", "end", "begin_cpu", "end_cpu", "literal", "mount", "unmount")


class TraceError(OSError):
    """The file is not a trace, or is damaged; ``strerror`` is the reader's
    text, the one ``threadtime dump`` prints; ``errno`` is EINVAL."""


class TraceDamagedWarning(UserWarning):
    """Part of the file is damaged or cut off; what is intact was read."""


@dataclass(frozen=True)
class Interval:
    """A begin event and its end on one thread (ids matched innermost first)."""

    id: int
    start_ns: int
    end_ns: int
    text: str | None
    cpu_user_ns: int | None  # CPU used between begin_cpu and end_cpu
    cpu_system_ns: int | None

    @property
    def wall_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def cpu_ns(self) -> int | None:
        if self.cpu_user_ns is None or self.cpu_system_ns is None:
            return None
        return self.cpu_user_ns + self.cpu_system_ns


@dataclass(frozen=True)
class TraceThread:
    """One thread's section of a trace."""

    tid: int
    name: str
    state: str  # "live" or "exited" (when the file was written)
    overwritten: int  # records lost to the ring wrapping
    incomplete: int  # records present but never committed, or cut off
    events: Events = field(repr=False)  # a sequence of Event, oldest first

    def intervals(self) -> list[Interval]:
        """Begin/end pairs, innermost first as ``threadtime dump --format
        chrome`` pairs them; a begin without an end is left out."""
        return pair_intervals(self.events)


def pair_intervals(events: Iterable[Event]) -> list[Interval]:
    """The intervals of one thread's events, by start time."""
    open_: list[Event] = []
    done: list[Interval] = []
    for ev in events:
        if ev.kind in ("begin", "begin_cpu"):
            open_.append(ev)
        elif ev.kind in ("end", "end_cpu"):
            for k in range(len(open_) - 1, -1, -1):
                if open_[k].id == ev.id:
                    b = open_.pop(k)
                    cpu = b.cpu_user_ns is not None and ev.cpu_user_ns is not None
                    done.append(Interval(
                        ev.id, b.t_ns, ev.t_ns, b.text,
                        ev.cpu_user_ns - b.cpu_user_ns if cpu else None,  # type: ignore[operator]
                        ev.cpu_system_ns - b.cpu_system_ns if cpu else None,  # type: ignore[operator]
                    ))
                    break
    done.sort(key=lambda i: i.start_ns)
    return done


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
    names: dict[int, str]  # the trace's event names by id (format 1.1)
    damaged: str | None  # what is missing, in the reader's words; None if intact
    threads: list[TraceThread]
    _data: Any = field(repr=False, compare=False)

    def __iter__(self) -> Iterator[TraceThread]:
        return iter(self.threads)

    def __len__(self) -> int:
        return len(self.threads)

    @property
    def events(self) -> int:
        """Events in all threads."""
        return sum(len(t.events) for t in self.threads)

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
    (fmt, pid, source, hz, start_mono, start_real, end_mono, dropped, recycled, crash_safe, names) = header
    return Trace(
        path=shown, format=fmt, pid=pid, source=source, counter_hz=hz, start_mono_ns=start_mono,
        start_realtime_ns=start_real, end_mono_ns=end_mono, threads_dropped=dropped,
        rings_recycled=recycled, crash_safe=crash_safe, names=names, damaged=error,
        threads=[TraceThread(*t) for t in threads], _data=data,
    )
