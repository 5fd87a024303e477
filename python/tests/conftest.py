"""Shared helpers: threads that burn CPU on demand and name themselves; the
CPython interpreters installed on this machine."""
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

import threadtime

# Linux keeps at most 15 bytes of a thread name (TASK_COMM_LEN - 1).
COMM_MAX = 15

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_PR_SET_NAME = 15


def core_header(name: str) -> str:
    """The text of the core's public header include/threadtime/NAME; skips
    the test where the suite runs from an installed wheel, without them."""
    header = Path(__file__).resolve().parents[2] / "include" / "threadtime" / name
    if not header.is_file():
        pytest.skip("no core headers here (the suite runs from an installed wheel)")
    return header.read_text()


def burn_cpu_ns(ns: int) -> None:
    """Spins in Python until the calling thread has used ns more CPU.

    It reads the clock (a system call) only every ~2,000 loop turns, some
    tens of µs, so the burn is user time, not a stream of system calls.
    """
    end = threadtime.total_ns() + ns
    while threadtime.total_ns() < end:
        for _ in range(2000):
            pass


def counter_points(reader, name: str, unit: str) -> list:
    """The data points of the monotonic counter name (checked to be in
    unit) in one collection of an OpenTelemetry metric reader, or in the
    collection given (what a reader's get_metrics_data() answered)."""
    points = []
    data = reader.get_metrics_data() if hasattr(reader, "get_metrics_data") else reader
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == name:
                    assert metric.unit == unit and metric.data.is_monotonic
                    points.extend(metric.data.data_points)
    return points


def kernel_raw_ns(tid: int = 0) -> tuple[int, int]:
    """The kernel's raw VIRT (user ticks) and PROF (user + system ticks)
    clocks of thread tid, read in that order through time.clock_gettime_ns
    and the kernel's CPU clock id encoding (pid 0: the calling thread).

    What threadtime's raw calls must answer, whether or not a tick has
    landed: under load the tick can miss a running thread for hundreds of ms,
    so no test expects a raw clock to move with work.
    """
    base = (~tid) << 3 | 4  # a thread's clock
    return time.clock_gettime_ns(base | 1), time.clock_gettime_ns(base | 0)


def assert_raw_clocks_are_the_kernels(tid: int, user_raw, system_raw, reads: int = 200) -> None:
    """user_raw() and system_raw(), read between two reads of the kernel's
    own clocks of thread tid (kernel_raw_ns), lie within them: user between
    the two VIRT reads, system between PROF less VIRT at its least and at its
    most (never below 0). Both are monotonic, so this holds however the
    thread is scheduled."""
    for _ in range(reads):
        v0, p0 = kernel_raw_ns(tid)
        user, system = user_raw(), system_raw()
        v1, p1 = kernel_raw_ns(tid)
        assert v0 <= user <= v1
        assert max(0, p0 - v1) <= system <= p1 - v0


def set_native_name_prctl(name: bytes) -> None:
    """Names the calling thread the way prctl(2) does: cut to 15 bytes."""
    if _libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


def set_native_name_pthread(name: bytes) -> None:
    """Names the calling thread through pthread_setname_np (<= 15 bytes)."""
    _libc.pthread_self.restype = ctypes.c_ulong
    rc = _libc.pthread_setname_np(ctypes.c_ulong(_libc.pthread_self()), ctypes.c_char_p(name))
    if rc != 0:
        raise OSError(rc, "pthread_setname_np")


def expected_name(name: bytes) -> str:
    """What the kernel keeps of a name, decoded as threadtime decodes it."""
    return name[:COMM_MAX].decode("utf-8", "surrogateescape")


class Burner:
    """A thread that burns CPU until stopped, optionally naming itself.

    ``native_id`` is valid once the constructor returns; the thread keeps
    running (and accumulating CPU time) until ``stop()``.
    """

    def __init__(self, native_name: bytes | None = None, thread_name: str | None = None,
                 setter=set_native_name_prctl):
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._native_name = native_name
        self._setter = setter
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self.thread.start()
        self._ready.wait()
        if self.error is not None:
            raise self.error
        self.native_id = self.thread.native_id

    def _run(self) -> None:
        try:
            if self._native_name is not None:
                self._setter(self._native_name)
        except BaseException as e:  # handed to the constructor
            self.error = e
        self._ready.set()
        while not self._stop.is_set():
            burn_cpu_ns(1_000_000)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join()


@pytest.fixture
def burner():
    made = []

    def make(**kwargs) -> Burner:
        b = Burner(**kwargs)
        made.append(b)
        return b

    yield make
    for b in made:
        b.stop()


@pytest.fixture
def method_restored():
    """Lets a test switch the read method; puts back automatic detection."""
    yield threadtime.set_method
    threadtime.set_method("auto")


def assert_split(t: threadtime.Times) -> None:
    assert t.user_ns >= 0 and t.system_ns >= 0
    assert t.user_ns + t.system_ns == t.total_ns


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


def assert_not_before(later: threadtime.Times, earlier: threadtime.Times) -> None:
    assert later.user_ns >= earlier.user_ns
    assert later.system_ns >= earlier.system_ns
    assert later.total_ns >= earlier.total_ns


def wait_gone(t: threading.Thread) -> None:
    """Joins t and waits until the kernel has let its thread go.

    join() returns when the thread has finished with the interpreter, a
    moment before the OS thread itself exits (on 3.11 and 3.13 alike); until
    then its clocks still answer.
    """
    t.join()
    wait_until(lambda: not os.path.exists(f"/proc/self/task/{t.native_id}"), "the thread to exit")


def wait_until(condition, what: str, seconds: float = 60) -> None:
    """Polls condition every ms until it holds; fails after seconds, saying
    what it waited for (a bound for a hung state, not a timing expectation)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.001)


def probe(python: str) -> tuple[str, int, int, bool] | None:
    """(implementation, major, minor, free-threaded) of an interpreter, or
    None if it does not run (a pyenv shim for a version not selected)."""
    out = subprocess.run([python, "-c", "import sys, sysconfig; print(sys.implementation.name, "
                          "*sys.version_info[:2], sysconfig.get_config_var('Py_GIL_DISABLED') or 0)"],
                         capture_output=True, text=True)
    if out.returncode != 0 or len(out.stdout.split()) != 4:
        return None
    impl, major, minor, ft = out.stdout.split()
    return impl, int(major), int(minor), ft == "1"


def candidates() -> list[str]:
    """python3 and python3.N on PATH, and every pyenv-installed version."""
    names = ["python3"] + [f"python3.{n}" for n in range(10, 20)] + [f"python3.{n}t" for n in range(13, 20)]
    found = [p for p in map(shutil.which, names) if p]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    return found + sorted(str(p) for p in pyenv.glob("*/bin/python3"))


def interpreters(free_threaded: bool = False) -> list[str]:
    """One interpreter per CPython version 3.10 or newer on this machine."""
    by_version: dict[tuple[int, int], str] = {}
    for path in candidates():
        info = probe(path)
        if info and info[0] == "cpython" and info[1:3] >= (3, 10) and info[3] == free_threaded:
            by_version.setdefault(info[1:3], path)
    return [by_version[v] for v in sorted(by_version)]
