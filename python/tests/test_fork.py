"""fork(): what the child inherits must not answer with the parent's
figures."""
import errno
import multiprocessing
import threading
import time

import pytest

import threadtime
from conftest import burn_cpu_ns, in_child


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
    # The split's total is the fast clock's: up to FAST_BOUND_NS above a later read.
    assert child <= kernel + threadtime.FAST_BOUND_NS
    assert kernel < parent.total_ns


def burn_task(ms: int) -> tuple[int, int, int, int, int]:
    """In a pool worker: times() and the calling thread's total around a
    burn of ms of CPU (measured by the kernel's own clock), and the kernel's
    clock around both."""
    k0 = time.thread_time_ns()
    a, ta = threadtime.times(), threadtime.total_ns()
    ka = time.thread_time_ns()  # ta <= ka + FAST_BOUND_NS: the same clock, read later
    while time.thread_time_ns() - ka < ms * 1_000_000:
        pass
    b, tb = threadtime.times(), threadtime.total_ns()
    k1 = time.thread_time_ns()
    return b.total_ns - a.total_ns, tb - ta, k1 - k0, b.total_ns - k1, tb - k1


def test_a_fork_pools_tasks_read_their_own_cpu_time():
    # The parent's thread has used more than any task will, so a figure
    # carried over from it would show.
    burn_cpu_ns(300_000_000)
    threadtime.times(), threadtime.total_ns()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map(burn_task, [50, 100, 150, 200])
    for ms, (times_ns, total_ns, kernel_ns, times_above, fast_above) in zip([50, 100, 150, 200], results):
        # Never the parent's figure (300 ms above): nothing above the
        # worker's own clock read after it beyond what the fast clock may
        # run ahead (times() takes its total from it too).
        assert times_above <= threadtime.FAST_BOUND_NS, (ms, times_above)
        assert fast_above <= threadtime.FAST_BOUND_NS, (ms, fast_above)
        # Not ~0: the whole burn shows in the total, and no more than the
        # kernel's clock saw around it plus the fast clock's bound.
        # (ta may run ahead of ka by the bound, so the burn may show that
        # much less.)
        bound = threadtime.FAST_BOUND_NS
        assert ms * 1_000_000 - bound <= total_ns <= kernel_ns + bound, (ms, total_ns, kernel_ns)
        assert times_ns >= ms * 1_000_000 - bound, (ms, times_ns)
