"""fork(): what the child inherits must not answer with the parent's
figures (issue 29, item 9)."""
import errno
import os
import threading
import time

import pytest

import threadtime
from conftest import burn_cpu_ns


def in_child(body) -> str:
    """Runs body() in a forked child; its return value (a str) or its
    exception's repr comes back through a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            out = body()
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = f"raised {e!r}"
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    os.waitpid(pid, 0)
    return out


def test_a_thread_clock_from_before_fork_refuses_every_read_alike():
    mine = threadtime.ThreadClock()
    started, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=lambda: (started.set(), stop.wait()))
    t.start()
    started.wait()
    other = threadtime.ThreadClock(t.native_id)
    try:
        burn_cpu_ns(20_000_000)
        mine.times()
        other.times()

        def body() -> str:
            answers = []
            for clock in (mine, other):
                for read in (clock.times, clock.total_ns, clock.user_raw_ns):
                    try:
                        answers.append(f"answered {read()}")
                    except OSError as e:
                        answers.append(f"{e.errno} {'fork' in str(e)}")
            return ";".join(answers)

        assert in_child(body).split(";") == [f"{errno.EINVAL} True"] * 6
        assert mine.times().total_ns > 0  # the parent's handles still answer
        assert other.total_ns() >= 0
    finally:
        stop.set()
        t.join()


def test_thread_times_in_the_child_reads_the_childs_thread():
    burn_cpu_ns(100_000_000)
    parent = threadtime.thread_times(threading.get_native_id())

    def body() -> str:
        me = threadtime.thread_times(threading.get_native_id())
        kernel = time.thread_time_ns()  # the kernel's own clock, read after
        return f"{me.total_ns} {kernel}"

    child, kernel = map(int, in_child(body).split())
    assert child <= kernel < parent.total_ns
