"""threadtime.otel on the real OpenTelemetry SDK with its in-memory exporter
and metric reader. Truth: the kernel's clock of the thread
(time.thread_time_ns(), CLOCK_THREAD_CPUTIME_ID) read by the test around the
work, never threadtime's."""
import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
import weakref
from unittest.mock import ANY
from concurrent.futures import ThreadPoolExecutor

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
import opentelemetry.sdk.trace as sdk_trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, SynchronousMultiSpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import threadtime
import threadtime.asyncio as tta
from threadtime import otel
from conftest import burn_cpu_ns, counter_points
from cpu_burn import burn

MS = 1_000_000
BOUND = threadtime.FAST_BOUND_NS


@pytest.fixture
def end_hook_sdk(monkeypatch):
    """An SDK whose Span.end() calls no processor's _on_ending, as before
    1.40: the provider's processor list answers it with SpanProcessor's own
    no-op. A processor made now takes the end_hook path."""
    monkeypatch.delattr(SynchronousMultiSpanProcessor, "_on_ending")


@pytest.fixture(params=["before", "after", "front", "end_hook", "front end_hook"])
def traced(request):
    """(tracer, exporter, processor) on a provider of their own; the
    processor splits user and system time. It is added before the exporting
    processor or after it, or wraps it (front: the provider's only
    processor); end_hook: on an SDK without _on_ending."""
    if request.param.endswith("end_hook"):
        request.getfixturevalue("end_hook_sdk")
    exporter = InMemorySpanExporter()
    front = request.param.startswith("front")
    processor = otel.ThreadTimeSpanProcessor(SimpleSpanProcessor(exporter) if front else None, split=True)
    assert processor.path == ("end_hook" if request.param.endswith("end_hook") else "on_ending")
    provider = TracerProvider()
    if request.param == "after":
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(processor)
    if request.param in ("before", "end_hook"):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter, processor
    provider.shutdown()


def finished(exporter, name):
    (span,) = [s for s in exporter.get_finished_spans() if s.name == name]
    return span.attributes


def assert_between(attrs, inner, outer, split=True, intervals=1):
    """total_ns lies between the thread's CPU over an interval inside the
    span and one around it; the split, on a thread, adds up to it. An
    interval of two fast-clock reads is within FAST_BOUND_NS of the real
    ones (docs/fast-clock.md), and a task's span across n awaits is n + 1
    such intervals (the task's steps inside it), so each adds its bound.
    Each await also charges the task the loop's own code between the
    coroutine's yield and the step's end read, and between the next step's
    start read and the resume, which the test's reads around the await
    leave out: one more bound per await for it (a CI run saw 103 us past
    the outer read with one await; a neighbour's burn is 1 ms or more)."""
    total = attrs[otel.TOTAL]
    slack = intervals * BOUND + (intervals - 1) * BOUND
    assert inner - slack <= total <= outer + slack, (inner, total, outer)
    if split:
        assert attrs[otel.USER] >= 0 and attrs[otel.SYSTEM] >= 0
        assert attrs[otel.USER] + attrs[otel.SYSTEM] == total
    else:
        assert otel.USER not in attrs and otel.SYSTEM not in attrs


def test_span_on_a_thread_gets_the_threads_cpu(traced):
    tracer, exporter, _ = traced
    before = time.thread_time_ns()
    with tracer.start_as_current_span("work"):
        inside = time.thread_time_ns()
        burn_cpu_ns(30 * MS)
        time.sleep(0.02)  # wall time, not CPU time
        inside = time.thread_time_ns() - inside
    outer = time.thread_time_ns() - before
    attrs = finished(exporter, "work")
    assert_between(attrs, inside, outer)
    assert attrs[otel.TOTAL] < 30 * MS + 20 * MS  # the sleep is not in it


def test_nested_spans_each_get_their_own(traced):
    tracer, exporter, _ = traced
    t0 = time.thread_time_ns()
    with tracer.start_as_current_span("outer"):
        t1 = time.thread_time_ns()
        burn_cpu_ns(10 * MS)
        t2 = time.thread_time_ns()
        with tracer.start_as_current_span("inner"):
            t3 = time.thread_time_ns()
            burn_cpu_ns(20 * MS)
            t4 = time.thread_time_ns()
        t5 = time.thread_time_ns()
    t6 = time.thread_time_ns()
    assert_between(finished(exporter, "inner"), t4 - t3, t5 - t2)
    assert_between(finished(exporter, "outer"), t5 - t1, t6 - t0)


def test_other_threads_work_is_not_charged(traced):
    """A span on one thread while another thread burns gets its own
    thread's CPU only: the burner's 100 ms are not in it."""
    tracer, exporter, _ = traced
    go = threading.Event()
    burner = threading.Thread(target=lambda: (go.wait(), burn_cpu_ns(100 * MS)))
    burner.start()
    before = time.thread_time_ns()
    with tracer.start_as_current_span("waiting"):
        inside = time.thread_time_ns()
        go.set()
        burner.join()
        inside = time.thread_time_ns() - inside
    outer = time.thread_time_ns() - before
    assert_between(finished(exporter, "waiting"), inside, outer)


def test_by_default_no_split():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(otel.ThreadTimeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    before = time.thread_time_ns()
    with provider.get_tracer("test").start_as_current_span("work"):
        burn_cpu_ns(20 * MS)
    outer = time.thread_time_ns() - before
    attrs = finished(exporter, "work")
    assert 0 <= attrs[otel.TOTAL] <= outer + BOUND
    assert otel.USER not in attrs and otel.SYSTEM not in attrs
    provider.shutdown()


def test_a_span_ended_on_another_thread_gets_no_figure(traced):
    tracer, exporter, processor = traced
    span = tracer.start_span("handed over")
    burn_cpu_ns(5 * MS)
    ender = threading.Thread(target=span.end)
    ender.start()
    ender.join()
    attrs = finished(exporter, "handed over")
    assert otel.TOTAL not in attrs and otel.USER not in attrs
    assert processor.unmeasured(otel.OTHER_THREAD) == 1
    assert processor.unmeasured(otel.NO_CLOCK) == 0
    with pytest.raises(ValueError, match="reason must be one of"):
        processor.unmeasured("other")


def test_ending_twice_and_explicit_end_time(traced):
    """end(end_time) keeps the time given; a second end() only warns, as the
    SDK's does, and changes nothing."""
    tracer, exporter, _ = traced
    span = tracer.start_span("timed")
    span.end(end_time=span.start_time + 5_000)
    span.end()
    (done,) = exporter.get_finished_spans()
    assert done.end_time == done.start_time + 5_000
    assert otel.TOTAL in done.attributes


def test_a_span_leaves_no_cycle_behind(traced):
    """What the processor puts on a span (a hook on end() that removes
    itself, or the start's figures) makes no cycle: with the cycle
    collector off, the span is freed as soon as the last reference goes."""
    tracer, exporter, processor = traced
    gc.collect()
    gc.disable()
    try:
        span = tracer.start_span("freed")
        assert ("end" in vars(span)) == (processor.path == "end_hook")
        span.end()
        assert "end" not in vars(span)
        assert otel.TOTAL in exporter.get_finished_spans()[0].attributes
        exporter.clear()
        ref = weakref.ref(span)
        del span
        assert ref() is None
    finally:
        gc.enable()


def test_group_thread_name():
    cases = {
        "ThreadPoolExecutor-0_3": "ThreadPoolExecutor-0",
        "ThreadPoolExecutor-12_0": "ThreadPoolExecutor-12",
        "Thread-7 (work)": "Thread (work)",
        "Thread-7": "Thread",
        "asyncio_2": "asyncio",
        "MainThread": "MainThread",
        "worker7": "worker7",
        "-3": "-3",
    }
    assert {name: otel.group_thread_name(name) for name in cases} == cases


def thread_cpu(reader):
    """{(thread.name, cpu.mode): seconds} from one collection."""
    return {(p.attributes["thread.name"], p.attributes["cpu.mode"]): p.value
            for p in counter_points(reader, otel.THREAD_CPU, "s")}


def test_thread_cpu_metric_groups_a_pools_threads():
    """Two pool threads burn 40 ms each and park: their group's user +
    system is at least what the threads' own clocks said (getrusage's µs
    resolution allowed), and the series stays when they have exited."""
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]))
    barrier = threading.Barrier(2)

    def work(_):
        burn_cpu_ns(40 * MS)
        used = time.thread_time_ns()
        barrier.wait()  # both alive until both are done: two threads
        return used

    pool = ThreadPoolExecutor(2, thread_name_prefix="ttpool")
    used = sum(pool.map(work, range(2)))
    first = thread_cpu(reader)
    assert ("ttpool_0", "user") not in first
    grouped = first["ttpool", "user"] + first["ttpool", "system"]
    assert grouped * 1e9 >= used - 2 * 1000
    pool.shutdown(wait=True)
    for t in list(pool._threads):
        t.join()
    later = thread_cpu(reader)
    assert later["ttpool", "user"] >= first["ttpool", "user"]
    assert later["ttpool", "system"] >= first["ttpool", "system"]
    main = threading.current_thread().name
    assert (main, "user") in later


def test_a_renamed_thread_counts_once():
    """A thread that burns 150 ms, then is renamed into another group and
    burns no more: the two groups' CPU together stays within the process's
    own CPU over the test (time.process_time, the kernel's precise clock,
    read by the test), where counting the thread in both groups would give
    twice its 150 ms (0.30 against 0.15 s on the code before)."""
    start = time.process_time()
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]))
    burned, done = threading.Event(), threading.Event()

    def work():
        burn_cpu_ns(150 * MS)
        burned.set()
        done.wait()

    t = threading.Thread(target=work, name="ttbefore")
    t.start()
    burned.wait()
    thread_cpu(reader)
    t.name = "ttafter"
    for _ in range(3):
        figures = thread_cpu(reader)
    before = figures["ttbefore", "user"] + figures["ttbefore", "system"]
    after = figures.get(("ttafter", "user"), 0) + figures.get(("ttafter", "system"), 0)
    process = time.process_time() - start
    done.set()
    t.join()
    assert before >= 0.1
    assert before + after <= process


def test_unmeasured_metric(traced):
    tracer, _, processor = traced
    reader = InMemoryMetricReader()
    otel.register_metrics(MeterProvider(metric_readers=[reader]), spans=processor)
    span = tracer.start_span("elsewhere")
    t = threading.Thread(target=span.end)
    t.start()
    t.join()
    counts = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == otel.UNMEASURED:
                    for point in metric.data.data_points:
                        counts[point.attributes["reason"]] = point.value
    assert counts == {otel.OTHER_THREAD: 1, otel.NO_CLOCK: 0}


def run(main, install=True):
    """asyncio.run(main()), threadtime.asyncio installed on the loop first."""
    async def first_install():
        if install:
            tta.install()
        return await main()

    return asyncio.run(first_install())


def test_span_in_a_task_gets_the_tasks_own_cpu(traced):
    """A span around two burns and an await, while another task burns 60 ms
    on the loop between them: the span gets its own task's CPU (the loop
    thread's clock read around the span's parts), not the neighbour's, and
    no split."""
    tracer, exporter, processor = traced

    async def neighbour(go):
        await go.wait()
        return burn(60 * MS)

    async def spanned(go):
        t0 = time.thread_time_ns()
        with tracer.start_as_current_span("task span"):
            t1 = time.thread_time_ns()
            burn(10 * MS)
            t2 = time.thread_time_ns()
            go.set()
            await asyncio.sleep(0)  # the neighbour's burn runs here
            t3 = time.thread_time_ns()
            burn(10 * MS)
            t4 = time.thread_time_ns()
        t5 = time.thread_time_ns()
        return (t2 - t1) + (t4 - t3), (t2 - t0) + (t5 - t3)

    async def main():
        go = asyncio.Event()
        other = asyncio.create_task(neighbour(go))
        inner_outer = await asyncio.create_task(spanned(go))
        return inner_outer, await other

    (inner, outer), neighbours = run(main)
    assert neighbours >= 60 * MS
    assert_between(finished(exporter, "task span"), inner, outer, split=False, intervals=2)
    assert processor.unmeasured(otel.NO_CLOCK) == 0


def test_tasks_and_spans_on_loops_in_several_threads_at_once(traced):
    """Four threads, each with its own counted loop and three interleaved
    tasks, each task making spans around two burns and an await. Every task
    is charged its own burns (the loop thread's clock read around each one),
    never more than its thread's CPU less its neighbours' burns; every span
    gets its own task's CPU between its start and end. On a free-threaded
    build the four loops step and put figures into their spans at once;
    under the GIL they take turns."""
    tracer, exporter, processor = traced
    loops, tasks, spans = 4, 3, 4
    truth = {}  # span name -> (inner, outer), as in assert_between
    start = threading.Barrier(loops)

    async def spanned(name: str, burns: list[int]) -> None:
        for i in range(spans):
            t0 = time.thread_time_ns()
            with tracer.start_as_current_span(f"{name}.{i}"):
                t1 = time.thread_time_ns()
                burns.append(burn(MS))
                t2 = time.thread_time_ns()
                await asyncio.sleep(0)  # the loop's other tasks step here
                t3 = time.thread_time_ns()
                burns.append(burn(MS))
                t4 = time.thread_time_ns()
            t5 = time.thread_time_ns()
            truth[f"{name}.{i}"] = ((t2 - t1) + (t4 - t3), (t2 - t0) + (t5 - t3))

    async def main(loop_no: int):
        start.wait()  # before any task: the loops' steps overlap
        thread0 = time.thread_time_ns()
        burns = [[] for _ in range(tasks)]
        counted = [asyncio.create_task(spanned(f"{loop_no}.{k}", burns[k])) for k in range(tasks)]
        await asyncio.gather(*counted)
        thread = time.thread_time_ns() - thread0
        return thread, [(sum(b), tta.task_cpu_ns(t)) for b, t in zip(burns, counted)]

    with ThreadPoolExecutor(loops) as pool:
        results = list(pool.map(lambda n: run(lambda: main(n)), range(loops)))
    steps = spans + 1  # a task's steps: up to its first await, and one after each
    for thread, figures in results:
        all_burns = sum(burned for burned, _ in figures)
        for burned, charged in figures:
            assert burned - steps * BOUND <= charged <= thread - (all_burns - burned) + steps * BOUND, \
                (burned, charged, thread, all_burns)
    assert len(truth) == loops * tasks * spans
    for name, (inner, outer) in truth.items():
        assert_between(finished(exporter, name), inner, outer, split=False, intervals=2)
    assert processor.unmeasured(otel.NO_CLOCK) == processor.unmeasured(otel.OTHER_THREAD) == 0


def test_span_in_an_uncounted_task_gets_no_figure(traced):
    """Without threadtime.asyncio on the loop a task's CPU is unknown: no
    attribute (the loop thread's figure would hold the neighbours' work)."""
    tracer, exporter, processor = traced

    async def main():
        with tracer.start_as_current_span("uncounted"):
            await asyncio.sleep(0)

    run(main, install=False)
    assert otel.TOTAL not in finished(exporter, "uncounted")
    assert processor.unmeasured(otel.NO_CLOCK) == 1


def test_span_ended_in_another_task_gets_no_figure(traced):
    tracer, exporter, processor = traced

    async def main():  # its own task was made before install(): uncounted
        async def start_it():
            return tracer.start_span("handed to a task")

        async def end_it(span):
            span.end()

        span = await asyncio.create_task(start_it())
        await asyncio.create_task(end_it(span))

    run(main)
    assert otel.TOTAL not in finished(exporter, "handed to a task")
    assert processor.unmeasured(otel.OTHER_THREAD) == 1


def test_a_hook_already_on_end_is_kept():
    """Another processor's hook on end() (here a Python one, then one of
    ours after it) still runs, and the span ends once, with its figure and
    no hook left."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    calls = []

    class Hooking(SpanProcessor):
        def on_start(self, span, parent_context=None):
            own = span.end

            def end(end_time=None):
                calls.append(end_time)
                del span.end
                own(end_time)

            span.end = end

    provider.add_span_processor(Hooking())
    provider.add_span_processor(otel.ThreadTimeSpanProcessor(run_wait=False))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    span = provider.get_tracer("test").start_span("twice hooked")
    span.end(end_time=span.start_time + 7)
    assert calls == [span.start_time + 7] and "end" not in vars(span)
    (done,) = exporter.get_finished_spans()
    assert done.attributes[otel.TOTAL] >= 0 and otel.RUN_WAIT not in done.attributes
    assert done.end_time == done.start_time + 7
    provider.shutdown()


def test_hooks_take_the_sdks_calls_and_refuse_others():
    """on_start takes the span with parent_context by keyword (as the SDK
    passes it), by position, or left out, and measures the span each way;
    a call without the span or with another keyword is a TypeError that
    leaves the span as it was; on_end and _on_ending take the span. The
    processor is not the provider's: one of the provider's hands it the
    spans' _on_ending."""
    processor = otel.ThreadTimeSpanProcessor(run_wait=False)

    class Ending(SpanProcessor):
        def _on_ending(self, span):
            processor._on_ending(span)

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(Ending())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    calls = {"keyword": lambda s: processor.on_start(s, parent_context=None),
             "position": lambda s: processor.on_start(s, None),
             "alone": lambda s: processor.on_start(s)}
    for name, call in calls.items():
        span = tracer.start_span(name)
        call(span)
        span.end()
    for bad in (lambda s: processor.on_start(), lambda s: processor.on_start(s, context=None),
                lambda s: processor.on_start(s, None, parent_context=None), lambda s: processor.on_start(s, None, None)):
        span = tracer.start_span("refused")
        with pytest.raises(TypeError):
            bad(span)
        assert "end" not in vars(span) and "_threadtime_start" not in vars(span)
        span.end()
    assert {s.name: otel.TOTAL in s.attributes for s in exporter.get_finished_spans()} == {
        "keyword": True, "position": True, "alone": True, "refused": False}
    span = tracer.start_span("ignored")
    assert processor.on_end(span) is None and processor._on_ending(span) is None
    provider.shutdown()


class Recording(SpanProcessor):
    """Records every call the SDK makes to it, with what the span carries
    then; its on_start burns 20 ms of CPU."""

    def __init__(self):
        self.calls = []

    def on_start(self, span, parent_context=None):
        self.calls.append(("on_start", span.name, parent_context))
        burn_cpu_ns(20 * MS)

    def _on_ending(self, span):
        self.calls.append(("_on_ending", span.name, otel.TOTAL in span.attributes))

    def on_end(self, span):
        self.calls.append(("on_end", span.name, otel.TOTAL in span.attributes))

    def shutdown(self):
        self.calls.append(("shutdown",))

    def force_flush(self, timeout_millis=30000):
        self.calls.append(("force_flush", timeout_millis))
        return False


@pytest.mark.parametrize("path", ["on_ending", "end_hook"])
def test_a_wrapped_processor_gets_every_call(path, request):
    """A processor in front of another, as the provider's only one, passes
    it every call the SDK makes, as the SDK itself would have (the truth:
    the same processor on a provider of its own): on_start with the parent
    context, before the span's start figures are read (its 20 ms burn is
    not charged to the span, which the thread's clock read around it
    bounds), then _on_ending and on_end with the figures already on the
    span; force_flush with its timeout and answer; shutdown."""
    if path == "end_hook":
        request.getfixturevalue("end_hook_sdk")
    inner = Recording()
    processor = otel.ThreadTimeSpanProcessor(inner, run_wait=False)
    assert processor.then is inner and processor.path == path
    provider = TracerProvider()
    provider.add_span_processor(processor)
    alone = Recording()
    truth = TracerProvider()
    truth.add_span_processor(alone)
    parent = sdk_trace.trace_api.set_span_in_context(truth.get_tracer("test").start_span("parent"))
    alone.calls.clear()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # after the one in front, to read the span
    for p in (provider, truth):
        before = time.thread_time_ns()
        span = p.get_tracer("test").start_span("work", context=parent)
        inside = time.thread_time_ns()
        burn_cpu_ns(5 * MS)
        inside = time.thread_time_ns() - inside
        span.end()
        outer = time.thread_time_ns() - before
        assert p.force_flush(1234) is False
        p.shutdown()
        if p is provider:
            total = finished(exporter, "work")[otel.TOTAL]
            assert inside - BOUND <= total <= outer - 20 * MS + BOUND, (inside, total, outer)
    ending = [("_on_ending", "work")] if path == "on_ending" else []  # an SDK before 1.40 makes no such call
    assert [c[:2] for c in inner.calls] == [c[:2] for c in alone.calls] == [
        ("on_start", "work"), *ending, ("on_end", "work"), ("force_flush", ANY), ("shutdown",)]
    assert 0 < inner.calls[-2][1] <= 1234 and 0 < alone.calls[-2][1] <= 1234  # what was left of the SDK's deadline
    assert inner.calls[0][2] is alone.calls[0][2] is parent
    ended = slice(1, 2 + len(ending))
    assert all(c[2] is True for c in inner.calls[ended])  # the figures are on the span by then
    assert all(c[2] is False for c in alone.calls[ended])


@pytest.mark.parametrize("hook", ["pass, another signature", "raises"])
def test_a_wrapped_hook_fails_as_on_the_sdk(hook):
    """A wrapped processor's on_start that the SDK's call would fail (one
    that does nothing but takes no span; one that raises) fails the same
    way in front of threadtime's, and the span is not started."""
    class Bad(SpanProcessor):
        if hook == "raises":
            def on_start(self, span, parent_context=None):
                raise LookupError("from on_start")
        else:
            def on_start(self):
                pass

    error = TypeError if hook.startswith("pass") else LookupError
    for wrapped in (False, True):
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        if wrapped:
            provider.add_span_processor(otel.ThreadTimeSpanProcessor(Bad(), run_wait=False))
        else:
            provider.add_span_processor(Bad())
        with pytest.raises(error):
            provider.get_tracer("test").start_span("refused")
        provider.shutdown()


@pytest.mark.parametrize("body", ["records", "pass"])
def test_a_wrapped_hook_takes_the_call_as_the_sdk_makes_it(body):
    """A wrapped processor whose on_start takes parent_context by keyword
    only (doing something, or nothing) works in front of threadtime's as it
    works on the SDK alone: the SDK passes it by keyword."""
    seen = []

    class KeywordOnly(SpanProcessor):
        if body == "records":
            def on_start(self, span, *, parent_context=None):
                seen.append(parent_context)
        else:
            def on_start(self, span, *, parent_context=None):
                pass

    for wrapped in (False, True):
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        inner = KeywordOnly()
        provider.add_span_processor(otel.ThreadTimeSpanProcessor(inner, run_wait=False) if wrapped else inner)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        provider.get_tracer("test").start_span("keyword").end()
        assert [s.name for s in exporter.get_finished_spans()] == ["keyword"]
        assert (otel.TOTAL in exporter.get_finished_spans()[0].attributes) == wrapped
        provider.shutdown()
    assert seen == ([None, None] if body == "records" else [])


def test_a_subclass_configures_through_init():
    """A subclass's __init__ passes its arguments on with super().__init__
    and they take effect (here the split, on spans of its provider); a clock
    is configured once; one whose __init__ never ran refuses the SDK's
    calls with a clear error rather than measuring nothing."""
    class Mine(otel.ThreadTimeSpanProcessor):
        def __init__(self):
            super().__init__(split=True, run_wait=False)

    processor = Mine()
    assert repr(processor) == "ThreadTimeSpanProcessor(split=True, run_wait=False, path='on_ending')"
    provider, exporter = exported_by(processor)
    inside, outer = burned_span(provider, "split", 5 * MS)
    assert_between(finished(exporter, "split"), inside, outer)
    with pytest.raises(RuntimeError, match="already configured"):
        otel.SpanClock.__init__(processor, otel.TOTAL, otel.USER, otel.SYSTEM, otel.RUN_WAIT,
                                asyncio._get_running_loop, asyncio.current_task, False, True)
    provider.shutdown()

    class Forgetful(otel.ThreadTimeSpanProcessor):
        def __init__(self):
            pass

    provider, exporter = exported_by(Forgetful())
    with pytest.raises(TypeError, match="not configured"):
        provider.get_tracer("test").start_span("refused")
    provider.shutdown()


def test_a_wrapped_processor_that_keeps_spans_is_freed():
    """A wrapped processor that keeps every span it saw start: the span's
    start figures (on the span) name the processor without holding it, so
    provider, processors and spans are freed together once unreachable (a
    start that held its processor made a cycle the collector cannot see)."""
    class Keeper(SpanProcessor):
        def __init__(self):
            self.spans = []

        def on_start(self, span, parent_context=None):
            self.spans.append(span)

    provider = TracerProvider(shutdown_on_exit=False)
    processor = otel.ThreadTimeSpanProcessor(Keeper(), run_wait=False)
    provider.add_span_processor(processor)
    provider.get_tracer("test").start_span("kept").end()
    assert len(processor.then.spans) == 1
    gone = weakref.ref(processor)
    del provider, processor
    gc.collect()
    assert gone() is None


def exported_by(*processors, limits=None):
    """(provider, exporter): a provider with these processors, then one
    exporting to an in-memory exporter."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=limits)
    for p in (*processors, SimpleSpanProcessor(exporter)):
        provider.add_span_processor(p)
    return provider, exporter


def burned_span(provider, name, ns):
    """Makes a span around a burn of ns of CPU; (inside, outer): the
    thread's CPU over the burn and over the whole span."""
    before = time.thread_time_ns()
    with provider.get_tracer("test").start_as_current_span(name):
        inside = time.thread_time_ns()
        burn_cpu_ns(ns)
        inside = time.thread_time_ns() - inside
    return inside, time.thread_time_ns() - before


class OtherAttributes(BoundedAttributes):
    """Stands for an SDK whose spans keep their attributes in another class."""


@pytest.mark.parametrize("shape", ["no _on_ending", "other attributes class"])
def test_another_sdk_shape_takes_the_end_hook_path(shape, request, monkeypatch):
    """Where the SDK's shape is not the one the on_ending path relies on (an
    end() that calls no _on_ending, as before 1.40, or span attributes of
    another class), the processor says so and its spans still get their
    figures, through the hook on end() and the span's set_attribute."""
    if shape == "no _on_ending":
        request.getfixturevalue("end_hook_sdk")
    else:
        monkeypatch.setattr(sdk_trace, "BoundedAttributes", OtherAttributes)
    processor = otel.ThreadTimeSpanProcessor(run_wait=False)
    assert processor.path == "end_hook"
    assert repr(processor) == "ThreadTimeSpanProcessor(split=False, run_wait=False, path='end_hook')"
    provider, exporter = exported_by(processor)
    inside, outer = burned_span(provider, "work", 10 * MS)
    assert_between(finished(exporter, "work"), inside, outer, split=False)
    provider.shutdown()


def test_a_span_whose_attributes_changed_class_ends_without_figures(monkeypatch):
    """A span whose attributes are no longer the class the processor found
    when it was made gets no figure, one clear unraisable error, and ends
    as it would have: nothing is raised into end()."""
    processor = otel.ThreadTimeSpanProcessor(run_wait=False)
    assert processor.path == "on_ending"
    provider, exporter = exported_by(processor)
    monkeypatch.setattr(sdk_trace, "BoundedAttributes", OtherAttributes)
    reported = []
    monkeypatch.setattr("sys.unraisablehook", reported.append)
    with provider.get_tracer("test").start_as_current_span("changed") as span:
        span.set_attribute("user.a", 1)
    assert dict(finished(exporter, "changed")) == {"user.a": 1}
    assert len(reported) == 1 and isinstance(reported[0].exc_value, TypeError)
    assert "BoundedAttributes" in str(reported[0].exc_value)
    provider.shutdown()


def test_two_ends_at_once_keep_the_figures(end_hook_sdk):
    """On the end_hook path, a second end() from another thread while the
    first one is setting the figures leaves the span to the first, which
    ends it with every figure. The second thread's end() runs inside the
    first one's first set_attribute; before, it ended the span there, and
    the figures came after the end (the SDK dropped them with a warning)."""
    processor = otel.ThreadTimeSpanProcessor(split=True, run_wait=False)
    provider, exporter = exported_by(processor)
    span = provider.get_tracer("test").start_span("raced")
    own = span.set_attribute

    def set_attribute(key, value):
        del span.set_attribute
        other = threading.Thread(target=span.end)
        other.start()
        other.join()
        own(key, value)

    span.set_attribute = set_attribute
    span.end()
    (done,) = exporter.get_finished_spans()
    assert [k for k in done.attributes if k.startswith("threadtime.")] == [otel.TOTAL, otel.USER, otel.SYSTEM]
    provider.shutdown()


def test_an_ended_span_keeps_its_figures(traced):
    """Once a span has ended, a second end() and a second _on_ending change
    none of its attributes, however much CPU was used since."""
    tracer, exporter, processor = traced
    span = tracer.start_span("once")
    burn_cpu_ns(2 * MS)
    span.end()
    (done,) = exporter.get_finished_spans()
    first = dict(done.attributes)
    assert otel.TOTAL in first
    burn_cpu_ns(20 * MS)
    span.end()
    processor._on_ending(span)
    assert dict(done.attributes) == dict(span.attributes) == first
    assert len(exporter.get_finished_spans()) == 1


def test_a_processor_added_twice_sets_its_figures_once():
    """The same processor twice on one provider, with one between them that
    burns 30 ms when a span is ending: the span's figure is read once, at
    the first _on_ending, so the burn is not in it (the thread's clock read
    around the span bounds it)."""
    processor = otel.ThreadTimeSpanProcessor(run_wait=False)

    class Burner(SpanProcessor):
        def _on_ending(self, span):
            burn_cpu_ns(30 * MS)

    provider, exporter = exported_by(processor, Burner(), processor)
    inside, outer = burned_span(provider, "twice", 2 * MS)
    total = finished(exporter, "twice")[otel.TOTAL]
    assert inside - BOUND <= total <= outer - 30 * MS + BOUND, (inside, total, outer)
    provider.shutdown()


@pytest.mark.parametrize("path", ["on_ending", "end_hook"])
@pytest.mark.parametrize("limit", [0, 2, 4, None])
def test_figures_obey_the_attribute_limit_as_set_attribute_does(path, limit, request):
    """A span at its attribute limit (SpanLimits.max_span_attributes), one
    of whose attributes the user set under a figure's name: the figures
    take the places, drop the oldest attributes and count them as the SDK's
    own set_attribute does with the same names in the same order (the
    truth: a span of a provider without threadtime)."""
    if path == "end_hook":
        request.getfixturevalue("end_hook_sdk")
    limits = SpanLimits(max_span_attributes=limit)

    def users(span):
        span.set_attribute("user.a", "a")
        span.set_attribute(otel.TOTAL, -1)
        span.set_attribute("user.b", "b")

    processor = otel.ThreadTimeSpanProcessor(split=True, run_wait=False)
    assert processor.path == path
    provider, exporter = exported_by(processor, limits=limits)
    with provider.get_tracer("test").start_as_current_span("limited") as span:
        users(span)
    (got,) = exporter.get_finished_spans()

    truth, truth_exporter = exported_by(limits=limits)
    with truth.get_tracer("test").start_as_current_span("limited") as span:
        users(span)
        for name in (otel.TOTAL, otel.USER, otel.SYSTEM):
            span.set_attribute(name, 7)
    (want,) = truth_exporter.get_finished_spans()

    assert list(got.attributes) == list(want.attributes)
    assert got.dropped_attributes == want.dropped_attributes
    assert {k: v for k, v in got.attributes.items() if k.startswith("user.")} == \
           {k: v for k, v in want.attributes.items() if k.startswith("user.")}
    assert got.attributes.get(otel.TOTAL, 0) >= 0  # the figure, not the user's -1
    provider.shutdown()
    truth.shutdown()


def test_a_span_open_across_many_others_gets_its_figures():
    """A span that stays open while 33,000 others start and end on its
    thread (more than a table of the newest 32,768 would hold) still gets
    its figure at its end."""
    processor = otel.ThreadTimeSpanProcessor(run_wait=False)
    provider, exporter = exported_by(processor)
    tracer = provider.get_tracer("test")
    before = time.thread_time_ns()
    long = tracer.start_span("long")
    for _ in range(33):
        for _ in range(1000):
            with tracer.start_as_current_span("short"):
                pass
        assert all(otel.TOTAL in s.attributes for s in exporter.get_finished_spans())
        exporter.clear()
    long.end()
    outer = time.thread_time_ns() - before
    assert 0 < finished(exporter, "long")[otel.TOTAL] <= outer + BOUND
    provider.shutdown()


def test_ends_from_many_threads_at_once_measure_each_span_once(traced):
    """Eight threads (the one that started it among them) end one span at
    once, twenty times over: each span is exported once, and either has its
    figure (the starting thread got there first) or is counted once as
    ended on another thread, never both or neither. On a free-threaded
    build the eight really run at once."""
    tracer, exporter, processor = traced
    ends, rounds = 8, 20
    barrier = threading.Barrier(ends)

    def end(span):
        barrier.wait()
        span.end()

    for i in range(rounds):
        span = tracer.start_span(f"raced.{i}")
        others = [threading.Thread(target=end, args=(span,)) for _ in range(ends - 1)]
        for t in others:
            t.start()
        end(span)
        for t in others:
            t.join()
    done = exporter.get_finished_spans()
    assert sorted(s.name for s in done) == sorted(f"raced.{i}" for i in range(rounds))
    measured = sum(otel.TOTAL in s.attributes for s in done)
    assert measured + processor.unmeasured(otel.OTHER_THREAD) == rounds
    assert processor.unmeasured(otel.NO_CLOCK) == 0


SPAN_METRICS = """
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from threadtime import otel

reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
otel.ThreadTimeSpanProcessor()
TracerProvider(shutdown_on_exit=False).get_tracer("app").start_span("the app's").end()
data = reader.get_metrics_data()
print(sum(p.value for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
          if m.name == "otel.sdk.span.started" for p in m.data.data_points))
"""


def test_the_shape_probe_is_not_counted_as_a_span():
    """The span a processor ends to try the SDK's shape is not the
    application's: with the SDK's metrics of its own spans on
    (OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED, read where a tracer is made)
    and a global meter provider, a process that makes the processor and
    then one span of its own has started one span (two on the code before:
    the probe's too)."""
    env = {**os.environ, "OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED": "true"}
    out = subprocess.run([sys.executable, "-c", SPAN_METRICS], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1"]
