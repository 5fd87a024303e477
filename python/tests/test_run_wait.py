"""Run-queue wait per span and per asyncio task (threadtime.otel,
threadtime.asyncio), on the real OpenTelemetry SDK with its in-memory
exporter. Truth is physics read from the kernel by the test: the measured
thread and a burner process are pinned to one CPU, so every nanosecond the
burner runs there (its own /proc/<pid>/schedstat, read by the test while
the measured thread holds the CPU, so the figure is up to date) is time
the runnable measured thread waited."""
import asyncio
import contextlib
import errno
import logging
import os
import select
import subprocess
import sys
import threading
import time

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import threadtime
import threadtime.asyncio as tta
from threadtime import otel
from conftest import burn_cpu_ns, counter_points

MS = 1_000_000
CPU = min(os.sched_getaffinity(0))

try:
    threadtime.sched()
except OSError as e:  # a kernel without CONFIG_SCHED_INFO keeps no run-queue wait
    pytest.skip(f"no schedstat here: {e}", allow_module_level=True)
OTHER_CPU_NS = 40 * MS  # how long the burner runs while the measured thread waits


def schedstat(path: str) -> tuple[int, int]:
    """(on CPU, run-queue wait) of a task, ns, from its schedstat file."""
    with open(path) as f:
        on_cpu, wait, _ = f.read().split()
    return int(on_cpu), int(wait)


@contextlib.contextmanager
def pinned_burner():
    """A process spinning on CPU; yields a function that reads its CPU."""
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(p.pid, {CPU})
        yield lambda: schedstat(f"/proc/{p.pid}/schedstat")[0]
    finally:
        p.kill()
        p.wait()


def contend(other_cpu) -> int:
    """Burns on CPU (the caller is pinned there) until the burner has run
    OTHER_CPU_NS there; answers what it ran, as its schedstat says."""
    b0 = other_cpu()
    while (ran := other_cpu() - b0) < OTHER_CPU_NS:
        burn_cpu_ns(MS)
    return ran


@pytest.fixture
def traced():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(otel.ThreadTimeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter
    provider.shutdown()


def attributes(exporter, name):
    (span,) = [s for s in exporter.get_finished_spans() if s.name == name]
    return span.attributes


def on_pinned_thread(body):
    """body() on a new thread pinned to CPU; its answer."""
    out = []

    def run():
        os.sched_setaffinity(0, {CPU})
        out.append(body())

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out[0]


def test_span_on_a_thread_gets_the_threads_wait(traced):
    tracer, exporter = traced

    def body():
        with tracer.start_as_current_span("contended"):
            return contend(other_cpu)

    with pinned_burner() as other_cpu:
        other = on_pinned_thread(body)
    attrs = attributes(exporter, "contended")
    assert attrs[otel.RUN_WAIT] >= 0.9 * other, (attrs, other)
    assert attrs[otel.TOTAL] >= 0


def test_a_sleeping_span_waits_for_no_cpu(traced):
    """Blocked time is not run-queue wait: a span that sleeps 100 ms (in
    select(), whose timeout starts in the kernel) has a wait that fits in
    the rest of its wall time."""
    tracer, exporter = traced
    w0 = time.monotonic_ns()
    with tracer.start_as_current_span("sleeper"):
        for _ in range(20):
            select.select([], [], [], 0.005)
    wall = time.monotonic_ns() - w0
    assert 0 <= attributes(exporter, "sleeper")[otel.RUN_WAIT] <= wall - 100 * MS


def test_run_wait_off_gives_no_attribute():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(otel.ThreadTimeSpanProcessor(run_wait=False))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("no wait"):
        burn_cpu_ns(MS)
    attrs = attributes(exporter, "no wait")
    assert otel.RUN_WAIT not in attrs and attrs[otel.TOTAL] >= 0
    provider.shutdown()


def test_a_task_is_charged_the_wait_of_its_own_steps(traced):
    """Two tasks on one loop pinned beside the burner: the contended one
    burns in a single step while the burner runs; the bystander's span
    spans that step but only its own short steps count. The contended
    task's wait covers the burner's CPU; the two tasks' waits together are
    at most the loop thread's own wait over the run (its schedstat, read by
    the test): no wait is charged to both."""
    tracer, exporter = traced

    async def main(other_cpu):
        tta.install(run_wait=True)
        done = asyncio.Event()

        async def contended():
            with tracer.start_as_current_span("contended"):
                ran = contend(other_cpu)
                done.set()
                await asyncio.sleep(0)
            return ran

        async def bystander():
            with tracer.start_as_current_span("bystander"):
                await done.wait()

        by = asyncio.create_task(bystander())
        await asyncio.sleep(0)  # the bystander's span starts first
        task = asyncio.create_task(contended())
        ran = await task
        await by
        return ran, tta.task_run_wait_ns(task), tta.task_run_wait_ns(by)

    def body():
        w0 = schedstat("/proc/thread-self/schedstat")[1]
        figures = asyncio.run(main(other_cpu))
        return figures, schedstat("/proc/thread-self/schedstat")[1] - w0

    with pinned_burner() as other_cpu:
        (ran, task_wait, by_wait), thread_wait = on_pinned_thread(body)
    contended, bystander = attributes(exporter, "contended"), attributes(exporter, "bystander")
    assert contended[otel.RUN_WAIT] >= 0.9 * ran, (contended, ran)
    assert task_wait >= contended[otel.RUN_WAIT]
    assert contended[otel.RUN_WAIT] + bystander[otel.RUN_WAIT] <= thread_wait, (contended, bystander, thread_wait)
    assert task_wait + by_wait <= thread_wait
    assert otel.USER not in contended  # a task has no split


def run_wait_counted(**install) -> bool:
    """Whether a task on a loop where install(**install) ran has a wait."""
    async def main():
        tta.install(**install)
        task = asyncio.create_task(asyncio.sleep(0))
        await task
        assert tta.task_cpu_ns(task) >= 0
        try:
            return tta.task_run_wait_ns(task) >= 0
        except LookupError as e:
            assert "run_wait=False" in str(e)
            return False

    return asyncio.run(main())


def test_run_wait_off_on_a_loop():
    assert not run_wait_counted(run_wait=False)
    assert run_wait_counted(run_wait=True)


def test_by_default_the_wait_is_counted_where_the_fast_clock_is_on():
    """Without the fast clock's anchors every step would read schedstat
    twice, so by default a loop counts the wait only while it is on."""
    if not threadtime.fast_clock().startswith("rseq"):
        pytest.skip(f"no fast clock here: {threadtime.fast_clock()}")
    assert run_wait_counted()
    threadtime.set_fast_clock(False)
    try:
        assert not run_wait_counted()
    finally:
        threadtime.set_fast_clock(True)


def run_wait_by_group(reader) -> dict[str, float]:
    return {p.attributes["thread.name"]: p.value for p in counter_points(reader, otel.THREAD_RUN_WAIT, "s")}


def test_run_wait_metric_by_thread_name():
    """A thread named ttwait_0, pinned beside the burner, shows in the
    group ttwait with a wait of at least 90 % of what the burner ran."""
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]))
    ran, collected = [], threading.Event()

    def run():
        os.sched_setaffinity(0, {CPU})
        ran.append(contend(other_cpu))
        collected.wait()

    with pinned_burner() as other_cpu:
        t = threading.Thread(target=run, name="ttwait_0")
        t.start()
        try:
            while not ran:
                time.sleep(0.01)
            waits = run_wait_by_group(reader)
        finally:
            collected.set()
            t.join()
    assert "ttwait_0" not in waits
    assert waits["ttwait"] * 1e9 >= 0.9 * ran[0], (waits, ran)
    assert waits[threading.current_thread().name] >= 0


class Parked:
    """A thread named name that runs work() and then blocks in a read of a
    pipe, where it uses no CPU and waits for none, so its schedstat stays
    as the test reads it. tid: its native id; release() lets it end, and
    waits until the kernel has let it go."""

    def __init__(self, name: str, work=lambda: None):
        self._r, self._w = os.pipe()
        self._thread = threading.Thread(target=lambda: (work(), os.read(self._r, 1)), name=name)
        self._thread.start()
        self.tid = self._thread.native_id
        # Blocked once the kernel shows it in read(r, 1) and asleep there
        # (its syscall file: number, then the arguments in hex).
        while True:
            assert self._thread.is_alive(), f"{name} ended before it blocked"
            with open(f"/proc/self/task/{self.tid}/syscall") as f:
                call = f.read().split()
            with open(f"/proc/self/task/{self.tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if call[1:2] == [hex(self._r)] and call[3:4] == ["0x1"] and state == "S":
                break
            time.sleep(0.001)

    def release(self) -> None:
        if self._thread.is_alive():
            os.write(self._w, b"x")
            self._thread.join()
        while os.path.exists(f"/proc/self/task/{self.tid}"):
            time.sleep(0.001)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        os.close(self._r)
        os.close(self._w)


def meters(data, group: str) -> tuple[int, int, int]:
    """(CPU time ns, run-queue wait ns) of a group of thread names, and the
    count of skipped reads, from one collection."""
    cpu = {p.attributes["cpu.mode"]: p.value for p in counter_points(data, otel.THREAD_CPU, "s")
           if p.attributes["thread.name"] == group}
    (wait,) = [p.value for p in counter_points(data, otel.THREAD_RUN_WAIT, "s") if p.attributes["thread.name"] == group]
    (skipped,) = counter_points(data, otel.THREAD_RUN_WAIT_SKIPPED, "{read}")
    return round((cpu["user"] + cpu["system"]) * 1e9), round(wait * 1e9), skipped.value


def test_an_unreadable_thread_keeps_its_figures_and_is_counted(monkeypatch, caplog):
    """The metrics' reads refuse one thread (EACCES) for two collections,
    and then /proc/self/task can't be listed for one. The thread burned
    beside the pinned burner (so it has both CPU time and a wait) and is
    blocked; at every collection its group's CPU time and wait are its
    schedstat file's (read by the test), so they never go back and are
    never counted twice once it is read again (on the code before, that
    collection doubled both: the thread was dropped, then counted as new);
    each refused read and the failed listing count in
    THREAD_RUN_WAIT_SKIPPED, and the first failure of each meter is logged,
    once. A blocked neighbour's group is its own file's throughout."""
    refused = set()

    def refusing(read):
        def read_unless_refused(tid):
            if tid in refused:
                raise PermissionError(errno.EACCES, "refused by the test", f"/proc/self/task/{tid}/schedstat")
            return read(tid)
        return read_unless_refused

    monkeypatch.setattr(otel, "_cpu", refusing(otel._cpu))
    monkeypatch.setattr(otel, "_run_wait", refusing(otel._run_wait))
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]))

    def contended():
        os.sched_setaffinity(0, {CPU})
        contend(other_cpu)

    listdir = os.listdir

    def listdir_but_tasks(path):
        if path == "/proc/self/task":
            raise PermissionError(errno.EACCES, "refused by the test", path)
        return listdir(path)

    with pinned_burner() as other_cpu, Parked("ttunread_0", contended) as bad, Parked("ttneighbour_0") as ok:
        truth = schedstat(f"/proc/self/task/{bad.tid}/schedstat")
        neighbour = schedstat(f"/proc/self/task/{ok.tid}/schedstat")
        assert truth[0] > 0 and truth[1] > 0, truth
        assert meters(reader.get_metrics_data(), "ttunread") == (*truth, 0)
        with caplog.at_level(logging.WARNING, logger="threadtime.otel"):
            refused.add(bad.tid)
            for skipped in (1, 2):
                data = reader.get_metrics_data()
                assert meters(data, "ttunread") == (*truth, skipped)
                assert meters(data, "ttneighbour")[:2] == neighbour
            refused.clear()
            assert meters(reader.get_metrics_data(), "ttunread") == (*truth, 2)
            with monkeypatch.context() as m:
                m.setattr(os, "listdir", listdir_but_tasks)
                data = reader.get_metrics_data()
            assert meters(data, "ttunread") == (*truth, 3)
        assert meters(reader.get_metrics_data(), "ttunread") == (*truth, 3)
    logged = [r for r in caplog.records if r.name == "threadtime.otel"]
    assert [r.levelno for r in logged] == [logging.WARNING] * 2, logged
    assert all(f"thread {bad.tid}" in r.args and r.exc_info[1].errno == errno.EACCES for r in logged)
    assert sum(otel.THREAD_RUN_WAIT_SKIPPED in r.getMessage() for r in logged) == 1


@pytest.mark.parametrize("read", ["_cpu", "_run_wait"])
def test_a_thread_that_exits_before_its_read_is_no_skipped_read(read, monkeypatch, caplog):
    """A thread that exits between the listing of /proc/self/task and its
    read (the read lets it end, waits until the kernel has let it go, then
    reads it: ProcessLookupError from the kernel) is left out quietly: its
    group keeps the figures of the last collection (its schedstat file's,
    read by the test while it was blocked), no read counts as skipped, and
    nothing is logged."""
    armed = []
    real = getattr(otel, read)

    def exit_then_read(tid):
        if armed and tid == armed[0].tid:
            armed[0].release()
        return real(tid)

    monkeypatch.setattr(otel, read, exit_then_read)
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]))
    with Parked("ttexiting_0", lambda: burn_cpu_ns(MS)) as exiting:
        truth = schedstat(f"/proc/self/task/{exiting.tid}/schedstat")
        assert meters(reader.get_metrics_data(), "ttexiting") == (*truth, 0)
        armed.append(exiting)
        with caplog.at_level(logging.WARNING, logger="threadtime.otel"):
            data = reader.get_metrics_data()
        assert not os.path.exists(f"/proc/self/task/{exiting.tid}"), "the read did not make the thread exit"
        assert meters(data, "ttexiting") == (*truth, 0)
    assert [r for r in caplog.records if r.name == "threadtime.otel"] == []


def test_thread_sched_reads_another_thread():
    """thread_sched(tid) of another thread: its figures lie between two
    reads of its /proc schedstat by the test, before and after; an exited
    thread is ProcessLookupError."""
    go = threading.Event()
    t = threading.Thread(target=go.wait)
    t.start()
    try:
        path = f"/proc/self/task/{t.native_id}/schedstat"
        before = schedstat(path)
        s = threadtime.thread_sched(t.native_id)
        after = schedstat(path)
        assert before[0] <= s.on_cpu_ns <= after[0] and before[1] <= s.run_wait_ns <= after[1], (before, s, after)
        assert s.timeslices >= 1 and s.voluntary_switches >= 0 and s.involuntary_switches >= 0
    finally:
        go.set()
        t.join()
    gone = t.native_id
    while os.path.exists(f"/proc/self/task/{gone}"):
        time.sleep(0.01)
    with pytest.raises(ProcessLookupError):
        threadtime.thread_sched(gone)


def cpu_stat_path() -> str | None:
    """Where this process's cgroup keeps cpu.stat at the usual mount points
    (v2 at /sys/fs/cgroup, v1 at /sys/fs/cgroup/cpu), by /proc/self/cgroup:
    the test's own reading, not threadtime's; None if neither is there."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    for _, controllers, path in lines:
        if "cpu" in controllers.split(","):
            candidate = f"/sys/fs/cgroup/cpu{path.rstrip('/')}/cpu.stat"
            if os.path.exists(candidate):
                return candidate
    for hierarchy, controllers, path in lines:
        if hierarchy == "0" and controllers == "":
            candidate = f"/sys/fs/cgroup{path.rstrip('/')}/cpu.stat"
            if os.path.exists(candidate):
                return candidate
    return None


def cpu_stat(path: str) -> tuple[int, int]:
    """(throttled periods, throttled ns) from a cpu.stat file."""
    with open(path) as f:
        fields = dict(line.split() for line in f)
    ns = int(fields["throttled_usec"]) * 1000 if "throttled_usec" in fields else int(fields["throttled_time"])
    return int(fields["nr_throttled"]), ns


def test_cgroup_throttling_metric_is_cpu_stats():
    """The throttling counters lie between two reads of the group's
    cpu.stat by the test, before and after the collection."""
    path = cpu_stat_path()
    if path is None:
        pytest.skip("no cpu.stat at /sys/fs/cgroup for this process's cgroup")
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]))
    before = cpu_stat(path)
    (periods,) = counter_points(reader, otel.CGROUP_THROTTLED_PERIODS, "{period}")
    (seconds,) = counter_points(reader, otel.CGROUP_THROTTLED, "s")
    after = cpu_stat(path)
    assert before[0] <= periods.value <= after[0], (before, periods.value, after)
    assert before[1] <= round(seconds.value * 1e9) <= after[1], (before, seconds.value, after)
    g = threadtime.cgroup_cpu()
    assert g.version in (1, 2) and (g.quota_us == -1 or g.quota_us > 0) and g.period_us > 0
