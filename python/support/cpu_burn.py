"""A burn whose truth is the kernel's clock, for the tests (python/tests)
and the benchmarks (python/bench), which both put this directory on their
path: the tests through pytest's pythonpath (python/pyproject.toml), the
benchmarks by hand. Not part of the package."""
import time


def burn(ns: int) -> int:
    """Spins until the calling thread's kernel clock (time.thread_time_ns)
    has advanced ns; answers what that clock says the spin used, read
    around it. No await inside: in a task, it is all one step."""
    t0 = now = time.thread_time_ns()
    while now - t0 < ns:
        for _ in range(200):
            pass
        now = time.thread_time_ns()
    return now - t0
