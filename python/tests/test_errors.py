"""Errors: OSError subclasses with the errno and the core's text."""
import errno
import os

import pytest

import threadtime


def _unused_tid() -> int:
    # No task id can exceed pid_max, yet the kernel's clockid encoding still
    # holds this one, so the call reaches the kernel and is refused there.
    with open("/proc/sys/kernel/pid_max") as f:
        return int(f.read()) + 1


@pytest.mark.parametrize(
    "call",
    [threadtime.thread_total_ns, threadtime.thread_user_raw_ns,
     threadtime.thread_system_raw_ns, threadtime.thread_times,
     threadtime.process_total_ns, threadtime.process_user_raw_ns,
     threadtime.process_prof_raw_ns, threadtime.process_times,
     threadtime.ThreadClock],
)
def test_missing_id_is_process_lookup_error(call):
    with pytest.raises(ProcessLookupError) as info:
        call(_unused_tid())
    assert info.value.errno == errno.ESRCH
    assert info.value.strerror == "no such thread or process (it may have exited)"


def test_missing_id_through_procfs():
    with pytest.raises(ProcessLookupError):
        threadtime.procfs_read(_unused_tid())
    with pytest.raises(ProcessLookupError):
        threadtime.procfs_read(0, _unused_tid())


ID_CALLS = [threadtime.thread_total_ns, threadtime.thread_user_raw_ns, threadtime.thread_system_raw_ns,
            threadtime.thread_times, threadtime.process_total_ns, threadtime.process_user_raw_ns,
            threadtime.process_prof_raw_ns, threadtime.process_times, threadtime.procfs_read,
            threadtime.ThreadClock]


@pytest.mark.parametrize("call", ID_CALLS)
def test_negative_id_is_a_value_error(call):
    # A bad argument, as the Errors section says: refused before the core.
    with pytest.raises(ValueError, match="cannot be negative"):
        call(-5)


@pytest.mark.parametrize("call", ID_CALLS)
def test_bool_is_not_an_id(call):
    # True would otherwise name thread or process 1 (init, in most systems).
    with pytest.raises(TypeError, match="not a bool"):
        call(True)


def test_id_may_be_any_integer_type():
    class Index:
        def __index__(self):
            return 0

    assert threadtime.thread_total_ns(Index()) > 0


def test_set_method_names_the_choices():
    for bad in (None, 2, b"auto"):
        with pytest.raises(TypeError, match="'auto', 'clockid', 'getrusage' or 'procfs'"):
            threadtime.set_method(bad)
    with pytest.raises(ValueError, match="unknown method"):
        threadtime.set_method("rdtsc")


def test_thread_of_another_process_is_einval():
    with pytest.raises(OSError) as info:
        threadtime.thread_times(os.getppid())
    assert info.value.errno == errno.EINVAL


def test_argument_types():
    with pytest.raises(OverflowError):
        threadtime.thread_total_ns(2**40)
    with pytest.raises(TypeError):
        threadtime.thread_times("12")
    with pytest.raises(TypeError):
        threadtime.process_times(1, 2)
    with pytest.raises(TypeError):
        threadtime.procfs_read(1, 2, 3)
    with pytest.raises(TypeError):
        threadtime.set_method(2)
