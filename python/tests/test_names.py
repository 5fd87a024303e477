"""Hostile thread names: /proc's stat line puts the name in parentheses, and
a name may itself hold ")", spaces, digits and newlines. The clocks never
look at names; the /proc reader must find the name's real end."""
import threading

import pytest

import threadtime
from conftest import (COMM_MAX, assert_split, expected_name, set_native_name_prctl,
                      set_native_name_pthread)

HOSTILE = [
    b"a) b c",
    b") (",
    b"x) R 1 2 3 4 5",
    b"((((",
    b")",
    b"\n) S 9\n",
    b"0123456789abcdefXYZ",          # longer than the kernel keeps
    "é) ü".encode(),                  # UTF-8
    "éééééééé".encode(),              # cut by the kernel inside a character
    b"\xff\xfe) bad utf-8",
]


def _comm(native_id: int) -> str:
    with open(f"/proc/self/task/{native_id}/comm", "rb") as f:
        return f.read()[:-1].decode("utf-8", "surrogateescape")


def _check_named_thread(native_id: int, name: bytes) -> None:
    stat = threadtime.procfs_read(0, native_id)
    assert stat.name == expected_name(name) == _comm(native_id)
    assert stat.state in "RS"
    # A misparsed line would shift the fields and read some other number
    # (a pid, a flag word, a start time) as utime/stime.
    assert 0 <= stat.user_ns + stat.system_ns <= threadtime.thread_total_ns(native_id)
    assert_split(threadtime.thread_times(native_id))


@pytest.mark.parametrize("name", HOSTILE, ids=repr)
def test_hostile_native_names_via_prctl(name, burner):
    b = burner(native_name=name)
    _check_named_thread(b.native_id, name)


@pytest.mark.parametrize("name", [n for n in HOSTILE if len(n) <= COMM_MAX], ids=repr)
def test_hostile_native_names_via_pthread_setname_np(name, burner):
    b = burner(native_name=name, setter=set_native_name_pthread)
    _check_named_thread(b.native_id, name)


def test_python_thread_name_with_parenthesis(burner):
    # threading names are Python-side only (before 3.14); mirror it into the
    # kernel the way an application that wants it visible in /proc would.
    b = burner(thread_name="a) b c", native_name=b"a) b c")
    assert b.thread.name == "a) b c"
    _check_named_thread(b.native_id, b"a) b c")


@pytest.mark.parametrize("name", HOSTILE[:4], ids=repr)
def test_procfs_method_reads_named_threads(name, burner, method_restored):
    b = burner(native_name=name)
    method_restored("procfs")
    total = threadtime.thread_total_ns(b.native_id)
    split = threadtime.thread_times(b.native_id)
    assert_split(split)
    method_restored("clockid")
    assert total <= threadtime.thread_total_ns(b.native_id)
    assert split.total_ns <= threadtime.thread_total_ns(b.native_id)


def test_thread_reads_its_own_hostile_name():
    seen: list[str] = []

    def run():
        set_native_name_prctl(b"q) 1 (2")
        seen.append(threadtime.procfs_read(0, threading.get_native_id()).name)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == ["q) 1 (2"]
