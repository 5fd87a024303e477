"""Other threads: threading, concurrent.futures, exited threads, concurrency."""
import concurrent.futures
import errno
import random
import threading

import pytest

import threadtime
from conftest import (assert_not_before, assert_raw_clocks_are_the_kernels, assert_split, burn_cpu_ns,
                      wait_gone, wait_until)

READS = 500


def test_threading_thread_by_native_id(burner):
    b = burner()
    prev = threadtime.thread_times(b.native_id)
    for _ in range(READS):
        now = threadtime.thread_times(b.native_id)
        assert_split(now)
        assert_not_before(now, prev)
        assert now.total_ns <= threadtime.thread_total_ns(b.native_id)
        prev = now
    assert threadtime.thread_system_raw_ns(b.native_id) >= 0


def test_other_thread_clocks(burner):
    b = burner()
    total = threadtime.thread_total_ns(b.native_id)
    assert_raw_clocks_are_the_kernels(b.native_id, lambda: threadtime.thread_user_raw_ns(b.native_id),
                                      lambda: threadtime.thread_system_raw_ns(b.native_id))
    # The burner spins, so its precise clock moves once it has run at all.
    wait_until(lambda: threadtime.thread_total_ns(b.native_id) > total, "the burner thread to run")


def test_own_native_id_reads_the_calling_thread():
    nid = threading.get_native_id()
    t = threadtime.thread_times(nid)
    assert_split(t)
    # total_ns() is the fast clock: at most FAST_BOUND_NS above a later real read.
    assert t.total_ns <= threadtime.total_ns() <= threadtime.thread_total_ns(nid) + threadtime.FAST_BOUND_NS
    assert threadtime.thread_times(0).total_ns >= t.total_ns


def _pool_task(n: int) -> tuple[int, threadtime.Times]:
    burn_cpu_ns(2_000_000 + n * 100_000)
    return threading.get_native_id(), threadtime.times()


def test_concurrent_futures_workers():
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_pool_task, range(16)))
        # The workers are still alive here: read each one's latest report
        # against what the pool thread itself saw before.
        latest: dict[int, threadtime.Times] = {}
        for nid, seen in results:
            if nid not in latest or seen.total_ns > latest[nid].total_ns:
                latest[nid] = seen
        assert 1 <= len(latest) <= 4
        for nid, seen in latest.items():
            now = threadtime.thread_times(nid)
            assert_split(now)
            assert now.total_ns >= seen.total_ns
            assert now.total_ns >= 2_000_000


def test_workers_read_each_other(burner):
    targets = [burner().native_id for _ in range(3)]

    def reader(_):
        seen = {}
        for _ in range(200):
            nid = random.choice(targets)
            now = threadtime.thread_times(nid)
            assert_split(now)
            if nid in seen:
                assert_not_before(now, seen[nid])
            seen[nid] = now
        return len(seen)

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        assert all(n >= 1 for n in pool.map(reader, range(12)))


def _run_to_exit(target) -> int:
    t = threading.Thread(target=target)
    t.start()
    wait_gone(t)
    return t.native_id


def test_exited_thread_is_not_found_and_forgotten():
    started = threading.Event()
    leave = threading.Event()
    t = threading.Thread(target=lambda: (started.set(), leave.wait()))
    t.start()
    started.wait()
    nid = t.native_id
    assert_split(threadtime.thread_times(nid))
    before = threadtime._core._cache_size()
    leave.set()
    wait_gone(t)
    with pytest.raises(ProcessLookupError) as info:
        threadtime.thread_times(nid)
    assert info.value.errno == errno.ESRCH
    assert info.value.strerror == "no such thread or process (it may have exited)"
    assert threadtime._core._cache_size() == before - 1
    with pytest.raises(ProcessLookupError):
        threadtime.thread_total_ns(nid)
    with pytest.raises(ProcessLookupError):
        threadtime.thread_user_raw_ns(nid)


def test_exited_thread_that_read_itself():
    nid = _run_to_exit(lambda: threadtime.thread_times(threading.get_native_id()))
    with pytest.raises(ProcessLookupError):
        threadtime.thread_times(nid)


def test_thread_clock_opened_by_the_thread_notices_its_exit():
    got: list[threadtime.ThreadClock] = []
    nid = _run_to_exit(lambda: got.append(threadtime.ThreadClock()))
    clock = got[0]
    assert clock.native_id == nid
    assert repr(clock) == f"<threadtime.ThreadClock native_id={nid}>"
    for read in (clock.times, clock.total_ns, clock.user_raw_ns):
        with pytest.raises(ProcessLookupError):
            read()


def test_thread_clock_on_a_live_thread(burner):
    b = burner()
    clock = threadtime.ThreadClock(b.native_id)
    assert clock.native_id == b.native_id
    prev = clock.times()
    for _ in range(READS):
        now = clock.times()
        assert_split(now)
        assert_not_before(now, prev)
        prev = now
    assert clock.total_ns() >= prev.total_ns
    assert clock.user_raw_ns() >= 0
    own = threadtime.ThreadClock()
    assert own.native_id == threading.get_native_id()


def test_cache_of_exited_threads_stays_bounded():
    for _ in range(200):
        _run_to_exit(lambda: threadtime.thread_times(threading.get_native_id()))
    # Swept when it reaches 64 entries: the dead ones go.
    assert threadtime._core._cache_size() <= 64


def test_many_threads_hammering_the_cache(burner):
    live = [burner().native_id for _ in range(2)]
    failures: list[BaseException] = []

    def churn():
        try:
            for _ in range(40):
                _run_to_exit(lambda: threadtime.thread_times(threading.get_native_id()))
        except BaseException as e:
            failures.append(e)

    def reader():
        try:
            seen = {}
            for _ in range(400):
                for nid in live:
                    now = threadtime.thread_times(nid)
                    assert_split(now)
                    if nid in seen:
                        assert_not_before(now, seen[nid])
                    seen[nid] = now
        except BaseException as e:
            failures.append(e)

    threads = [threading.Thread(target=churn) for _ in range(2)]
    threads += [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
