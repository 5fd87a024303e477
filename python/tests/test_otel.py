"""threadtime.otel on the real OpenTelemetry SDK with its in-memory exporter
and metric reader. Truth: the kernel's clock of the thread
(time.thread_time_ns(), CLOCK_THREAD_CPUTIME_ID) read by the test around the
work, never threadtime's."""
import asyncio
import gc
import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import threadtime
import threadtime.asyncio as tta
from threadtime import otel
from conftest import burn_cpu_ns, counter_points
from cpu_burn import burn

MS = 1_000_000
BOUND = threadtime.FAST_BOUND_NS


class FlushedExporter(InMemorySpanExporter):
    """An in-memory exporter behind a BatchSpanProcessor, whose worker thread
    exports: the spans it holds are read after a flush."""

    def __init__(self):
        super().__init__()
        self.flush = None

    def get_finished_spans(self):
        assert self.flush()
        return super().get_finished_spans()


@pytest.fixture(params=["set", "deferred"])
def traced(request):
    """(tracer, exporter, processor) on a provider of their own; the
    processor splits user and system time. Deferred, the spans go through
    the processor's exporter behind a BatchSpanProcessor (its worker thread
    adds the figures), and no figure is left waiting at the end."""
    deferred = request.param == "deferred"
    processor = otel.ThreadTimeSpanProcessor(split=True, deferred=deferred)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    if deferred:
        exporter = FlushedExporter()
        exporter.flush = provider.force_flush
        provider.add_span_processor(BatchSpanProcessor(processor.exporter(exporter)))
    else:
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter, processor
    assert provider.force_flush()
    assert processor.pending() == 0
    provider.shutdown()


def finished(exporter, name):
    (span,) = [s for s in exporter.get_finished_spans() if s.name == name]
    return span.attributes


def assert_between(attrs, inner, outer, split=True):
    """total_ns lies between the thread's CPU over an interval inside the
    span and one around it (the fast clock may read FAST_BOUND_NS short or
    long at either end); the split, on a thread, adds up to it."""
    total = attrs[otel.TOTAL]
    assert inner - BOUND <= total <= outer + BOUND, (inner, total, outer)
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
    """The wrapper put on a span's end() removes itself: with the cycle
    collector off, the span is freed as soon as the last reference goes."""
    tracer, exporter, _ = traced
    gc.collect()
    gc.disable()
    try:
        span = tracer.start_span("freed")
        assert "end" in vars(span)
        span.end()
        assert "end" not in vars(span)
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
    assert_between(finished(exporter, "task span"), inner, outer, split=False)
    assert processor.unmeasured(otel.NO_CLOCK) == 0


def test_tasks_and_spans_on_loops_in_several_threads_at_once(traced):
    """Four threads, each with its own counted loop and three interleaved
    tasks, each task making spans around two burns and an await. Every task
    is charged its own burns (the loop thread's clock read around each one),
    never more than its thread's CPU less its neighbours' burns; every span
    gets its own task's CPU between its start and end. On a free-threaded
    build the four loops step, file and (deferred) the exporter's thread
    takes at once; under the GIL they take turns."""
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
        assert_between(finished(exporter, name), inner, outer, split=False)
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
    leaves the span as it was; on_end and _on_ending take the span."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    processor = otel.ThreadTimeSpanProcessor(run_wait=False)
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
        assert "end" not in vars(span)
        span.end()
    assert {s.name: otel.TOTAL in s.attributes for s in exporter.get_finished_spans()} == {
        "keyword": True, "position": True, "alone": True, "refused": False}
    span = tracer.start_span("ignored")
    assert processor.on_end(span) is None and processor._on_ending(span) is None
    provider.shutdown()


def spans_in_both_modes(make_spans, limits=None):
    """The spans make_spans(tracer) makes, exported by a processor that sets
    the figures and by a deferred one behind its exporter."""
    out = []
    for deferred in (False, True):
        exporter = InMemorySpanExporter()
        provider = TracerProvider(span_limits=limits)
        processor = otel.ThreadTimeSpanProcessor(split=True, deferred=deferred)
        provider.add_span_processor(processor)
        provider.add_span_processor(SimpleSpanProcessor(processor.exporter(exporter) if deferred else exporter))
        make_spans(provider.get_tracer("test"))
        out.append(exporter.get_finished_spans())
        assert processor.pending() == 0
        provider.shutdown()
    return out


def test_deferred_spans_are_exported_as_the_direct_ones():
    """Everything but the figures' values is the same in both modes: names,
    ids, parent, events, links, status, times' order, the user's attributes
    and the figures' names in the same order, and the SDK's attribute limit
    applied the same way (the oldest attributes dropped and counted)."""
    def make(tracer):
        with tracer.start_as_current_span("outer") as outer:
            outer.set_attribute("user.a", 1)
            outer.add_event("e", {"k": "v"})
            with tracer.start_as_current_span("inner", links=[]) as inner:
                for i in range(4):
                    inner.set_attribute(f"user.{i}", i)
                burn_cpu_ns(2 * MS)

    figures = None
    for limits in (None, SpanLimits(max_span_attributes=3)):
        direct, deferred = spans_in_both_modes(make, limits)
        if limits is None:  # the wait is left out where the kernel keeps no schedstat
            figures = [k for k in deferred[0].attributes if k.startswith("threadtime.")]
            assert figures[:3] == [otel.TOTAL, otel.USER, otel.SYSTEM]
        assert [s.name for s in direct] == [s.name for s in deferred] == ["inner", "outer"]
        for d, f in zip(direct, deferred):
            assert list(d.attributes) == list(f.attributes)
            assert {k: v for k, v in d.attributes.items() if k.startswith("user.")} == \
                   {k: v for k, v in f.attributes.items() if k.startswith("user.")}
            assert d.dropped_attributes == f.dropped_attributes
            assert [(e.name, dict(e.attributes)) for e in d.events] == [(e.name, dict(e.attributes)) for e in f.events]
            assert d.kind == f.kind and d.status.status_code == f.status.status_code
            assert (d.parent is None) == (f.parent is None)
            assert f.instrumentation_scope == d.instrumentation_scope
        if limits is not None:  # 4 user attributes and the figures, 3 kept: the last three figures
            assert list(deferred[0].attributes) == figures[-3:]
            assert deferred[0].dropped_attributes == 4 + len(figures) - 3


def test_deferred_figures_of_spans_never_exported_are_bounded():
    """Spans the deferred processor measured but no exporter of its took
    (here none at all) leave at most 2 * pending figures waiting; once its
    exporter exports spans again, theirs are found and taken."""
    processor = otel.ThreadTimeSpanProcessor(deferred=True, pending=4)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    dropped = InMemorySpanExporter()  # stands for a queue that drops them
    provider.add_span_processor(SimpleSpanProcessor(dropped))
    tracer = provider.get_tracer("test")
    sizes = []
    for _ in range(50):
        with tracer.start_as_current_span("dropped"):
            pass
        sizes.append(processor.pending())
    assert sizes[:4] == [1, 2, 3, 4] and 4 <= min(sizes[4:]) and max(sizes) <= 8
    # The waiting ones are the newest spans': exported now, they get theirs.
    exported = InMemorySpanExporter()
    processor.exporter(exported).export(dropped.get_finished_spans())
    assert processor.pending() == 0
    got = [otel.TOTAL in s.attributes for s in exported.get_finished_spans()]
    assert got[-sizes[-1]:] == [True] * sizes[-1] and not any(got[:50 - 8])
    provider.shutdown()


def test_deferred_table_keeps_the_newest_filings_whatever_order_they_are_taken_in():
    """The deferred table against a model of it: after any mix of spans
    ended and spans exported, in any order, a span's figures are found iff
    it is among the newest 2 * pending spans ended and was not exported
    since; pending() counts those. Many spans share the table's few index
    slots here, so entries are found past others and taken out between
    them."""
    import random
    rng = random.Random(7)
    processor = otel.ThreadTimeSpanProcessor(deferred=True, pending=8)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    ended = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(ended))
    tracer = provider.get_tracer("test")
    exported = InMemorySpanExporter()
    exporter = processor.exporter(exported)
    filed = []  # every span ended, oldest first
    waiting = set()  # the model: the spans whose figures wait
    for _ in range(400):
        if rng.random() < 0.6:
            with tracer.start_as_current_span(f"s{len(filed)}"):
                pass
            span = ended.get_finished_spans()[-1]
            filed.append(span)
            waiting.add(span.name)
            if len(filed) > 16:
                waiting.discard(filed[-17].name)  # overwritten
        elif filed:
            batch = rng.sample(filed, min(len(filed), rng.randint(1, 5)))
            exported.clear()
            exporter.export(batch)
            for span, out in zip(batch, exported.get_finished_spans()):
                assert (otel.TOTAL in out.attributes) == (span.name in waiting), span.name
                waiting.discard(span.name)
        assert processor.pending() == len(waiting)
    provider.shutdown()


def test_deferred_asks_for_its_exporter():
    with pytest.raises(ValueError, match="deferred=True"):
        otel.ThreadTimeSpanProcessor().exporter(InMemorySpanExporter())
    with pytest.raises(ValueError, match="pending must be at least 1"):
        otel.ThreadTimeSpanProcessor(deferred=True, pending=0)
    assert otel.ThreadTimeSpanProcessor().pending() == 0
