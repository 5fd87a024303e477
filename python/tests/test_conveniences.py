"""What a Python user reaches for: threads by
threading.Thread, Times arithmetic, interval as a decorator, a `with` block
for the log, event names as strings, and errors that say what was wrong."""
import errno
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import threadtime
from conftest import burn_cpu_ns


def own_events(path: Path) -> tuple[threadtime.Trace, list[threadtime.Event]]:
    """The trace at path and the calling thread's events in it."""
    trace = threadtime.read_trace(path)
    (me,) = [t for t in trace.threads if t.tid == threading.get_native_id()]
    return trace, list(me.events)


# ---- threads named by threading.Thread ----

def test_thread_times_and_thread_clock_take_a_thread():
    started, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=lambda: (started.set(), stop.wait()))
    with pytest.raises(ValueError, match="has not started"):
        threadtime.thread_times(t)
    t.start()
    started.wait()
    try:
        clock = threadtime.ThreadClock(native_id=t)
        assert clock.native_id == t.native_id
        a = threadtime.thread_times(t)
        b = threadtime.thread_times(t.native_id)  # the same cached handle
        assert a.total_ns <= b.total_ns
        assert clock.times().total_ns >= 0
    finally:
        stop.set()
        t.join()


def test_a_thread_argument_must_name_a_thread():
    with pytest.raises(TypeError, match="native id .int. or a threading.Thread"):
        threadtime.thread_times(object())
    with pytest.raises(TypeError, match="not a bool"):
        threadtime.ThreadClock(native_id=True)


# ---- Times ----

def test_times_subtract_field_by_field_and_give_a_dict():
    a = threadtime.times()
    burn_cpu_ns(5_000_000)
    b = threadtime.times()
    d = b - a
    assert isinstance(d, threadtime.Times)
    assert d == (b.user_ns - a.user_ns, b.system_ns - a.system_ns, b.total_ns - a.total_ns)
    assert d.user_ns + d.system_ns == d.total_ns
    assert b._asdict() == {"user_ns": b.user_ns, "system_ns": b.system_ns, "total_ns": b.total_ns}
    with pytest.raises(TypeError):
        b - (1, 2, 3)


# ---- interval as a decorator, the `with` block, names ----

def test_interval_decorates_a_function(tmp_path):
    @threadtime.interval(41)
    def work(x: int, *, y: int) -> int:
        """doc"""
        return x + y

    @threadtime.interval(42)
    def fails() -> None:
        raise KeyError("x")

    assert work.__name__ == "work" and work.__doc__ == "doc"
    with threadtime.recording(tmp_path / "d.trace"):
        assert work(1, y=2) == 3
        assert work(3, y=4) == 7
        with pytest.raises(KeyError):
            fails()
    _, events = own_events(tmp_path / "d.trace")
    assert [(e.kind, e.id) for e in events] == [("begin", 41), ("end", 41)] * 2 + [("begin", 42), ("end", 42)]


def test_recording_starts_stops_and_dumps_even_on_an_error(tmp_path):
    path = tmp_path / "r.trace"
    with pytest.raises(RuntimeError):
        with threadtime.recording(path, ring_records=64) as rec:
            assert threadtime.log_info().running and threadtime.log_info().ring_records == 64
            threadtime.event(5)
            raise RuntimeError("the block failed")
    assert rec.path == path
    assert not threadtime.log_info().running
    _, events = own_events(path)
    assert [e.id for e in events] == [5]
    with threadtime.recording():  # no path: nothing written
        pass
    assert not threadtime.log_info().running


def test_string_names_get_one_id_each_named_in_the_trace(tmp_path):
    threadtime.event_name(77, "named by hand")
    with threadtime.recording(tmp_path / "n.trace"):
        threadtime.event("parse")
        threadtime.event("parse", 3)
        threadtime.event("sleep \u00e9")
        threadtime.event("named by hand")
        with threadtime.interval("parse"):
            pass
    trace, events = own_events(tmp_path / "n.trace")
    parse, sleep, by_hand = events[0].id, events[2].id, events[3].id
    assert [e.id for e in events] == [parse, parse, sleep, by_hand, parse, parse]
    assert parse != sleep and by_hand == 77
    assert trace.names[parse] == "parse" and trace.names[sleep] == "sleep \u00e9"
    assert events[1].value == 3


def test_a_renamed_id_loses_its_old_name():
    threadtime.event_name(78, "old name")
    threadtime.event_name(78, "new name")
    threadtime.event("old name")  # a name of its own now, not 78
    iv = threadtime.interval("old name")
    assert iv.id != 78
    assert threadtime.interval("new name").id == 78


def test_log_info_before_any_start_says_not_running():
    code = ("import threadtime; i = threadtime.log_info(); "
            "print(i.running, i.clock, i.counter_hz, i.ring_records, i.max_threads, i.crash_safe)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "auto", "0.0", "0", "0", "False"]


def test_stop_log_without_a_log_does_nothing():
    code = "import threadtime; threadtime.stop_log(); threadtime.stop_log(); print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "ok\n"


# ---- what a record cannot hold is refused; what it can is kept ----

def test_event_bytes_are_kept_or_refused(tmp_path):
    with pytest.raises(ValueError, match="NUL"):
        threadtime.event(12, b"\x00\xffbytes")
    with pytest.raises(ValueError, match="NUL"):
        threadtime.event(12, "a\x00b")
    with threadtime.recording(tmp_path / "b.trace"):
        threadtime.event(12, b"\xffbytes")
        threadtime.event(13, "caf\u00e9")
    _, events = own_events(tmp_path / "b.trace")
    assert [e.text for e in events] == ["\udcffbytes", "caf\u00e9"]
    assert events[0].text.encode("utf-8", "surrogateescape") == b"\xffbytes"


# ---- errors that say what was wrong ----

def test_crash_file_error_names_the_file():
    with pytest.raises(FileNotFoundError) as info:
        threadtime.start_log(crash_file="/no/dir/x")
    assert info.value.filename == "/no/dir/x"
    assert info.value.errno == errno.ENOENT
    assert not threadtime.log_info().running


def test_a_bad_environment_value_is_named():
    code = ("import threadtime\n"
            "try:\n    threadtime.start_log()\nexcept ValueError as e:\n    print(e)\n")
    env = {**os.environ, "THREADTIME_RING": "lots"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert "THREADTIME_RING" in out and "out of range" in out


def test_log_thread_name_wants_a_str():
    with pytest.raises(TypeError, match="takes a str, not <class 'int'>"):
        threadtime.log_thread_name(123)
    with pytest.raises(ValueError, match="NUL"):
        threadtime.log_thread_name("a\0b")


def test_dump_over_a_file_whose_directory_refuses_says_so(tmp_path):
    with threadtime.recording():
        pass
    with pytest.raises(OSError, match="temporary file in '/proc'") as info:
        threadtime.dump("/proc/version")
    assert info.value.filename == "/proc/version"
