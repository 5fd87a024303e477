"""The core's invariants, seen from Python: the calling thread and processes."""
import errno
import importlib.metadata
import os
import re
import subprocess
import sys
import threading
import time

import pytest

import threadtime
from conftest import assert_not_before, assert_raw_clocks_are_the_kernels, assert_split, burn_cpu_ns, core_header

READS = 2000


def test_version_is_the_core_version():
    assert threadtime.__version__ == importlib.metadata.version("threadtime")
    (core,) = re.findall(r'#define TT_VERSION_STRING "([^"]+)"', core_header("common.h"))
    assert threadtime.__version__ == core


def test_total_never_decreases():
    prev = threadtime.total_ns()
    for _ in range(READS):
        now = threadtime.total_ns()
        assert now >= prev
        prev = now


def test_total_advances_with_work():
    before = threadtime.total_ns()
    burn_cpu_ns(5_000_000)
    assert threadtime.total_ns() >= before + 5_000_000


def test_raw_clocks_are_the_kernels_tick_clocks_before_and_after_work():
    nid = threading.get_native_id()
    for _ in range(2):
        assert_raw_clocks_are_the_kernels(0, threadtime.user_raw_ns, threadtime.system_raw_ns)
        # The same thread by its id, through the tid encoding.
        assert_raw_clocks_are_the_kernels(nid, lambda: threadtime.thread_user_raw_ns(nid),
                                          lambda: threadtime.thread_system_raw_ns(nid))
        burn_cpu_ns(20_000_000)


def _check_split_sequence(read) -> None:
    prev = read()
    assert_split(prev)
    for i in range(READS):
        if i % 100 == 0:
            os.stat("/")  # a little kernel time, so system_ns moves too
        now = read()
        assert_split(now)
        assert_not_before(now, prev)
        prev = now


@pytest.mark.parametrize("method", ["auto", "clockid", "getrusage", "procfs"])
def test_times_is_a_consistent_monotonic_split(method, method_restored):
    method_restored(method)
    assert threadtime.method() == ("clockid" if method == "auto" else method)
    _check_split_sequence(threadtime.times)


def test_times_total_is_covered_by_a_later_precise_read():
    for _ in range(READS):
        split = threadtime.times()
        assert split.total_ns <= threadtime.total_ns()


def test_times_total_keeps_up_with_the_kernels_clock():
    # 50 bursts of ~3 ms that read no CPU clock (time.monotonic_ns is the
    # vDSO), so only ticks and switches bring the kernel's booking of this
    # thread up to date; getrusage alone lags by up to a tick (4 ms at
    # HZ=250). The truth is time.thread_time_ns() read around each read.
    bound = threadtime.FAST_BOUND_NS
    sample_to_truth = 250_000  # the rest of the call, Python's included
    threadtime.times()  # the fast clock's start is paid here
    for _ in range(50):
        before = time.thread_time_ns()
        a = threadtime.times()
        c0 = time.thread_time_ns()
        end = time.monotonic_ns() + 3_000_000
        while time.monotonic_ns() < end:
            pass
        b = threadtime.times()
        c1 = time.thread_time_ns()
        assert before <= a.total_ns <= c0 + bound
        assert b.total_ns <= c1 + bound
        assert b.total_ns - a.total_ns >= c1 - c0 - bound - sample_to_truth, (a, b, c0, c1)


def test_times_is_a_named_tuple():
    t = threadtime.times()
    assert isinstance(t, tuple) and len(t) == 3
    user, system, total = t
    assert (user, system, total) == (t.user_ns, t.system_ns, t.total_ns)
    assert type(t) is threadtime.Times


def test_unknown_method_is_refused(method_restored):
    with pytest.raises(ValueError, match="unknown method"):
        threadtime.set_method("rdtsc")
    assert threadtime.method() == "clockid"


def test_process_covers_the_calling_thread():
    own = threadtime.times()
    proc = threadtime.process_times()
    assert_split(proc)
    assert proc.total_ns >= own.total_ns
    # total_ns() reads the fast clock: it may run ahead of a later real read
    # of the same thread's clock by FAST_BOUND_NS (steal and interrupt time
    # on a loaded host), and so ahead of the process clock read after it.
    own_total = threadtime.total_ns()
    assert threadtime.process_total_ns() + threadtime.FAST_BOUND_NS >= own_total
    assert threadtime.process_total_ns(os.getpid()) + threadtime.FAST_BOUND_NS >= own_total
    own_real = threadtime.thread_total_ns(0)
    assert threadtime.process_total_ns() >= own_real


def test_process_raw_user_is_within_raw_prof():
    for _ in range(READS // 10):
        user = threadtime.process_user_raw_ns()
        assert threadtime.process_prof_raw_ns() >= user >= 0


@pytest.fixture
def spinning_child():
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield child
    child.kill()
    child.wait()


def test_another_process(spinning_child):
    pid = spinning_child.pid
    first = threadtime.process_total_ns(pid)
    # The child burns CPU; wait (in CPU terms, on the child's clock) until it
    # has used some, which proves the clock names the child.
    while threadtime.process_total_ns(pid) <= first:
        pass
    assert_split(threadtime.process_times(pid))
    assert threadtime.process_user_raw_ns(pid) >= 0
    stat = threadtime.procfs_read(pid)
    assert stat.state in "RSD"
    assert stat.name.startswith("python")
    # Thread clocks only name threads of this process.
    with pytest.raises(OSError) as info:
        threadtime.thread_total_ns(pid)
    assert info.value.errno == errno.EINVAL


def test_exited_process_is_not_found(spinning_child):
    pid = spinning_child.pid
    spinning_child.kill()
    spinning_child.wait()
    with pytest.raises(ProcessLookupError):
        threadtime.process_total_ns(pid)
    with pytest.raises(ProcessLookupError):
        threadtime.process_times(pid)


def test_procfs_read_of_this_process_and_thread():
    whole = threadtime.procfs_read()
    assert whole.state == "R"
    assert whole.user_ns >= 0 and whole.system_ns >= 0
    own = threadtime.procfs_read(0, threading.get_native_id())
    # /proc reports the kernel's split, scaled to the runtime and cut to ticks.
    assert own.user_ns + own.system_ns <= threadtime.total_ns()
    with open("/proc/self/comm", "rb") as f:
        assert whole.name == f.read().rstrip(b"\n").decode("utf-8", "surrogateescape")


def test_procfs_read_takes_keywords_as_documented():
    """procfs_read(pid=0, tid=0), as the README writes it: the same thread
    and process as by position (the kernel's own name for them)."""
    tid = threading.get_native_id()
    with open(f"/proc/self/task/{tid}/comm", "rb") as f:
        comm = f.read().rstrip(b"\n").decode("utf-8", "surrogateescape")
    assert threadtime.procfs_read(pid=0, tid=tid).name == comm
    assert threadtime.procfs_read(tid=tid).name == comm
    assert threadtime.procfs_read(pid=os.getpid()).state == "R"
    with pytest.raises(TypeError, match="procfs_read"):
        threadtime.procfs_read(thread=tid)
