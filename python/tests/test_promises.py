"""Promises the README makes that once did not hold, for Python: the
behaviour, and the README's words for it, so the two cannot drift apart
again. The README checks skip where the suite runs without the source tree
(the installed-wheel run)."""
import threading
from pathlib import Path

import pytest

import threadtime

README = Path(__file__).resolve().parents[1] / "README.md"


def readme() -> str:
    if not README.is_file():
        pytest.skip("no python/README.md here (the suite runs from an installed wheel)")
    return " ".join(README.read_text().split())


def test_event_and_interval_are_silent_no_ops_while_the_log_is_stopped(tmp_path):
    threadtime.start_log(ring_records=64)
    threadtime.stop_log()
    threadtime.event(1)  # nothing raised, nothing recorded
    threadtime.event(2, "x")
    with threadtime.interval(3, cpu=True):
        pass
    threadtime.dump(tmp_path / "t.trace")
    assert threadtime.read_trace(tmp_path / "t.trace").events == 0
    text = readme()
    assert "`event()` and `interval()` record nothing while the log is stopped" in text
    assert "Event-log calls made while the log is not running raise" not in text


def test_read_right_after_join_gives_the_final_figures_or_process_lookup_error():
    final = []

    def work():
        end = threadtime.total_ns() + 2_000_000
        while threadtime.total_ns() < end:
            pass
        final.append(threadtime.total_ns())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    try:
        after = threadtime.thread_total_ns(t.native_id)
    except ProcessLookupError:
        pass  # the OS thread had exited too
    else:
        # It was still exiting: its last figure (final[0] is the fast clock,
        # which may run ahead of a later real read by its bound).
        assert after + threadtime.FAST_BOUND_NS >= final[0]
    text = readme()
    assert "Before Python 3.13" not in text
    assert "on every CPython version" in text


def test_readme_bounds_thread_times_against_the_threads_own_getrusage():
    # thread_times() keeps its own monotonic split per handle; the thread's
    # getrusage() is the kernel's, with its own history. Both are scaled
    # from the same tick samples, and the README must say how far apart.
    text = readme()
    assert "the numbers `/proc` and `getrusage` report |" not in text
    assert "differ from the split the thread's own `getrusage` gives" in text
