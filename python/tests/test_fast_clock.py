"""total_ns() of the calling thread reads through the core's fast clock
(no system call while the kernel shows no switch): the same clock as the kernel's, within the core's stated bound;
fast_clock() says which mechanism answers, set_fast_clock() turns it off."""
import errno
import os
import re
import subprocess
import sys
import time

import pytest

import threadtime
from conftest import burn_cpu_ns, core_header

# How far a fast read may run ahead of a real read taken after it.
BOUND_NS = threadtime.FAST_BOUND_NS


def test_the_bound_is_the_cores():
    (core,) = re.findall(r"#define TT_FAST_BOUND_NS INT64_C\((\d+)\)", core_header("cpu.h"))
    assert BOUND_NS == int(core)


@pytest.fixture
def fast_clock_restored():
    yield
    if not threadtime.fast_clock().startswith("syscall: "):
        return
    try:
        threadtime.set_fast_clock(True)
    except OSError:
        pass  # unsupported here: it was off before too


def test_fast_clock_names_its_mechanism():
    name = threadtime.fast_clock()
    assert name.startswith(("rseq+", "syscall: ")), name


def test_total_ns_lies_between_kernel_reads(fast_clock_restored):
    for on in (True, False):
        try:
            threadtime.set_fast_clock(on)
        except OSError as e:  # on, where rseq cannot work: then it is off
            assert e.errno == errno.ENOTSUP and "cannot work here" in str(e)
        # Never below a real read taken before it (a read of the
        # same clock outside threadtime counts), never above one taken after
        # it plus the bound.
        last = 0
        for i in range(20_000):
            before = time.thread_time_ns()
            t = threadtime.total_ns()
            after = time.thread_time_ns()
            assert before <= t <= after + BOUND_NS, (threadtime.fast_clock(), before - t, t - after)
            assert t >= last  # monotonic
            last = t
            if i % 2_000 == 0:
                time.sleep(0.001)  # blocked time is never counted


def test_blocked_time_is_not_counted():
    threadtime.total_ns()
    for _ in range(5):
        k0 = time.thread_time_ns()
        t0 = threadtime.total_ns()
        time.sleep(0.02)
        t1 = threadtime.total_ns()
        k1 = time.thread_time_ns()
        assert t1 - t0 <= k1 - k0 + BOUND_NS


def test_set_fast_clock_switches_and_stays_monotonic(fast_clock_restored):
    a = threadtime.total_ns()
    unsupported = threadtime.fast_clock().startswith("syscall:")
    threadtime.set_fast_clock(False)
    # Where it cannot work at all (no rseq area: under qemu-user, say), the
    # name keeps saying why instead of "off".
    assert threadtime.fast_clock().startswith("syscall:" if unsupported else "syscall: off")
    burn_cpu_ns(1_000_000)
    b = threadtime.total_ns()
    assert b >= a
    with pytest.raises(TypeError, match="True or False"):
        threadtime.set_fast_clock(1)
    try:
        threadtime.set_fast_clock(True)
    except OSError:
        return  # cannot work here: fast_clock() keeps saying why
    assert not threadtime.fast_clock().startswith("syscall: off")
    assert threadtime.total_ns() >= b


def test_environment_turns_it_off():
    env = {**os.environ, "THREADTIME_FAST_CLOCK": "0"}
    out = subprocess.run([sys.executable, "-c", "import threadtime; threadtime.total_ns(); print(threadtime.fast_clock())"],
                         capture_output=True, text=True, check=True, env=env).stdout
    assert out == "syscall: off (THREADTIME_FAST_CLOCK=0)\n"
