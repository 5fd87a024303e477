"""What threadtime.otel's span processor adds per span, over the plain
OpenTelemetry SDK with the same exporter, in one run.

    python python/bench/bench_otel.py [--spans 5000] [--rounds 15]

Each round times, one after the other (each variant first in turn), the
same loop of spans (`with tracer.start_as_current_span("op"): pass`) on
tracer providers that each end in SimpleSpanProcessor(InMemorySpanExporter())
(emptied after each timing, so that every variant runs on the same heap):

  plain        the SDK and the exporter alone
  noop         a SpanProcessor that does nothing added: what the SDK
               itself spends per processor (three calls per span)
  cpu          ThreadTimeSpanProcessor(run_wait=False): the CPU total only
  cpu+wait     ThreadTimeSpanProcessor(): the total and the run-queue wait
               (the default)
  cpu+wait+split  ThreadTimeSpanProcessor(split=True): the user/system split too
  deferred     ThreadTimeSpanProcessor(deferred=True): the figures of cpu+wait
               filed for the exporter instead of set on the span; the spans
               are timed up to the same in-memory exporter, and then, apart,
  deferred export  the wrapping exporter (processor.exporter()) adds them to
               the spans of the round (its export() of all of them, per span):
               the part that runs on the exporting thread (a
               BatchSpanProcessor's worker), off the span's thread

and, as floors in the same run, what the processor cannot do without: the
SDK's own span.set_attribute(name, int) on a live span (the processor makes
one such call per attribute), total_ns() (the fast clock) and sched() (a
schedstat read, which the wait needs once per fast-clock anchor, not per
span). --gc-off keeps the cycle collector off while the spans are timed,
to show its share. Thread CPU time per span (the loop runs on one thread,
so CPU time is what the span costs, whatever else the host runs), medians
over the rounds; the issue's floor is <= 2 us per span over plain.

--callgrind counts instructions instead, which a loaded host cannot change:
the script runs itself under valgrind's callgrind, each variant at N and 2N
spans (and each floor at N and 2N calls), each run through sys.call_tracing
so that callgrind collects inside it alone; per span = the difference / N.
System calls count only their user-space side there, and valgrind gives
the process no rseq, so the fast clock falls back to a real read (a system
call) and the wait reads schedstat at every span boundary. It never runs in
the tests.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import tempfile
import statistics
import sys
import time

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import threadtime
from threadtime.otel import TOTAL, ThreadTimeSpanProcessor

FLOOR_NS = 2000


def provider(processor: SpanProcessor | None) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    p = TracerProvider()
    if processor is not None:
        p.add_span_processor(processor)
    p.add_span_processor(SimpleSpanProcessor(exporter))
    return p, exporter


def per_span_ns(p: TracerProvider, exporter: InMemorySpanExporter, n: int, gc_off: bool = False,
                deferred: Deferred | None = None) -> tuple[float, float | None]:
    """(per span on the span's thread, per span on the exporting thread:
    None but for deferred)."""
    tracer = p.get_tracer("bench")
    exporter.clear()
    gc.collect()
    if gc_off:
        gc.disable()
    t0 = time.thread_time_ns()
    for _ in range(n):
        with tracer.start_as_current_span("op"):
            pass
    used = time.thread_time_ns() - t0
    gc.enable()
    assert len(exporter.get_finished_spans()) == n
    exported = None
    if deferred is not None:
        finished = exporter.get_finished_spans()
        t0 = time.thread_time_ns()
        deferred.export(finished)
        exported = (time.thread_time_ns() - t0) / n
        deferred.check(n)
    exporter.clear()  # every variant starts on the same heap
    return used / n, exported


class Deferred:
    """A deferred processor's exporter, over an in-memory one of its own."""

    def __init__(self, processor: ThreadTimeSpanProcessor) -> None:
        self.processor = processor
        self.spans = InMemorySpanExporter()
        self.exporter = processor.exporter(self.spans)

    def export(self, finished) -> None:
        self.exporter.export(finished)

    def check(self, n: int) -> None:
        """The n spans exported since the last check all got their figures,
        and none is left waiting."""
        assert self.processor.pending() == 0
        exported = self.spans.get_finished_spans()
        assert len(exported) == n and all(TOTAL in s.attributes for s in exported)
        self.spans.clear()


def per_call_ns(fn, n: int) -> float:
    t0 = time.thread_time_ns()
    calls(fn, n)
    return (time.thread_time_ns() - t0) / n


DEFERRED = "deferred"
EXPORT = "deferred export"


def variants_and_floors() -> tuple[dict[str, tuple[TracerProvider, InMemorySpanExporter]], dict, Deferred]:
    processor = ThreadTimeSpanProcessor(deferred=True)
    variants = {
        "plain": provider(None),
        "noop": provider(SpanProcessor()),
        "cpu": provider(ThreadTimeSpanProcessor(run_wait=False)),
        "cpu+wait": provider(ThreadTimeSpanProcessor()),
        "cpu+wait+split": provider(ThreadTimeSpanProcessor(split=True)),
        DEFERRED: provider(processor),
    }
    live = TracerProvider().get_tracer("bench").start_span("live")
    floors = {
        "set_attribute": lambda: live.set_attribute("threadtime.cpu.total_ns", 12345),
        "total_ns()": threadtime.total_ns,
        "sched()": threadtime.sched,
    }
    return variants, floors, Deferred(processor)


def spans(tracer, n: int) -> None:
    for _ in range(n):
        with tracer.start_as_current_span("op"):
            pass


def calls(fn, n: int) -> None:
    for _ in range(n):
        fn()


def callgrind_child(n: int) -> None:
    variants, floors, deferred = variants_and_floors()
    exports = []
    for name, (p, e) in variants.items():
        tracer = p.get_tracer("bench")
        spans(tracer, 200)  # warm: first-call caches
        if name == DEFERRED:
            deferred.export(e.get_finished_spans())
            deferred.check(200)
        for size in (n, 2 * n):
            e.clear()
            gc.collect()
            sys.call_tracing(spans, (tracer, size))
            if name == DEFERRED:
                exports.append(e.get_finished_spans())
                e.clear()
    for finished in exports:  # the exporting thread's part, after the spans'
        gc.collect()
        sys.call_tracing(deferred.export, (finished,))
    deferred.check(3 * n)
    for fn in floors.values():
        fn()
        for size in (n, 2 * n):
            sys.call_tracing(calls, (fn, size))


def callgrind(n: int) -> int:
    if shutil.which("valgrind") is None:
        sys.exit("bench_otel.py --callgrind: valgrind is not installed (apt-get install valgrind)")
    variants, floors, _ = variants_and_floors()
    names = [*variants, EXPORT, *floors]
    with tempfile.TemporaryDirectory(prefix="tt-callgrind-") as out_dir:
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=_PyEval_CallTracing",
               "--dump-after=_PyEval_CallTracing", f"--callgrind-out-file={out_dir}/cg.out",
               sys.executable, os.path.abspath(__file__), "--callgrind-child", f"--spans={n}"]
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONHASHSEED="0"), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        files = sorted((f for f in os.listdir(out_dir) if re.fullmatch(r"cg\.out\.\d+", f)),
                       key=lambda f: int(f.rsplit(".", 1)[1]))
        counts = []
        for f in files:
            with open(os.path.join(out_dir, f)) as fh:
                counts.append(int(re.search(r"^summary: (\d+)", fh.read(), re.M).group(1)))
    if len(counts) != 2 * len(names):
        raise RuntimeError(f"expected {2 * len(names)} callgrind dumps, found {len(counts)}")
    per = {name: (counts[2 * i + 1] - counts[2 * i]) / n for i, name in enumerate(names)}
    print(f"instructions (callgrind) per span (or per call), {2 * n} - {n} spans; Python {sys.version.split()[0]}")
    print(f"{'variant':<15} {'per span':>9} {'over plain':>11} {'over noop':>10}")
    for name in names:
        over = f"{per[name] - per['plain']:+11.0f} {per[name] - per['noop']:+10.0f}" if name in variants else ""
        print(f"{name:<15} {per[name]:9.0f} {over}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=5000, help="spans per variant per round")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--gc-off", action="store_true", help="the cycle collector off while spans are timed")
    ap.add_argument("--callgrind", action="store_true", help="count instructions under callgrind instead")
    ap.add_argument("--callgrind-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.callgrind_child:
        callgrind_child(args.spans)
        return 0
    if args.callgrind:
        return callgrind(args.spans)
    variants, floors, deferred = variants_and_floors()
    for name, (p, e) in variants.items():  # warm-up
        per_span_ns(p, e, min(args.spans, 2000), deferred=deferred if name == DEFERRED else None)
    samples: dict[str, list[float]] = {name: [] for name in [*variants, EXPORT, *floors]}
    order = list(variants)
    for r in range(args.rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:  # each variant first in turn
            p, e = variants[name]
            used, exported = per_span_ns(p, e, args.spans, args.gc_off, deferred if name == DEFERRED else None)
            samples[name].append(used)
            if exported is not None:
                samples[EXPORT].append(exported)
        for name, fn in floors.items():
            samples[name].append(per_call_ns(fn, args.spans))
    med = {name: statistics.median(v) for name, v in samples.items()}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "spans": args.spans, "median_ns": med, "samples_ns": samples}))
        return 0
    print(f"thread CPU ns per span (or per call), medians of {args.rounds} interleaved rounds of {args.spans}")
    print(f"{'variant':<15} {'median':>9} {'over plain':>11} {'min':>9} {'max':>9}")
    for name, v in samples.items():
        over = f"{med[name] - med['plain']:+11.0f}" if name in variants else f"{'':>11}"
        print(f"{name:<15} {med[name]:9.0f} {over} {min(v):9.0f} {max(v):9.0f}")
    for name in ("cpu", "cpu+wait", "cpu+wait+split", DEFERRED):
        over = med[name] - med["plain"]
        verdict = "holds" if over <= FLOOR_NS else "MISSED"
        print(f"floor: {name} adds <= {FLOOR_NS} ns per span over plain: {over:.0f} ns ({verdict}); "
              f"over noop {med[name] - med['noop']:.0f} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
