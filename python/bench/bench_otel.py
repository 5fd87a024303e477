"""What threadtime.otel's span processor adds per span, over the plain
OpenTelemetry SDK with the same exporter, in one run.

    python python/bench/bench_otel.py [--spans 5000] [--rounds 15]

Each round times, one after the other (each variant first in turn), the
same loop of spans (`with tracer.start_as_current_span("op"): pass`) on
three tracer providers, each with SimpleSpanProcessor(InMemorySpanExporter())
(emptied after each timing, so that every variant runs on the same heap):

  plain       the SDK and the exporter alone
  cpu         ThreadTimeSpanProcessor(split=False) added: the total only
  cpu+split   ThreadTimeSpanProcessor() added: the total and the split

and, as floors, the clock calls the processor makes: total_ns() (the fast
clock) and times() (getrusage). --gc-off keeps the cycle collector off
while the spans are timed, to show its share. Thread CPU time per span (the loop runs on
one thread, so CPU time is what the span costs, whatever else the host
runs), medians over the rounds; the issue's floor is <= 2 us per span over
plain. It never runs in the tests.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import threadtime
from threadtime.otel import ThreadTimeSpanProcessor

FLOOR_NS = 2000


def provider(processor: ThreadTimeSpanProcessor | None) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    p = TracerProvider()
    if processor is not None:
        p.add_span_processor(processor)
    p.add_span_processor(SimpleSpanProcessor(exporter))
    return p, exporter


def per_span_ns(p: TracerProvider, exporter: InMemorySpanExporter, n: int, gc_off: bool = False) -> float:
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
    exporter.clear()  # every variant starts on the same heap
    return used / n


def per_call_ns(fn, n: int) -> float:
    t0 = time.thread_time_ns()
    for _ in range(n):
        fn()
    return (time.thread_time_ns() - t0) / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=5000, help="spans per variant per round")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--gc-off", action="store_true", help="the cycle collector off while spans are timed")
    args = ap.parse_args()
    variants = {
        "plain": provider(None),
        "cpu": provider(ThreadTimeSpanProcessor(split=False)),
        "cpu+split": provider(ThreadTimeSpanProcessor()),
    }
    floors = {"total_ns()": threadtime.total_ns, "times()": threadtime.times}
    for p, e in variants.values():  # warm-up
        per_span_ns(p, e, min(args.spans, 2000))
    samples: dict[str, list[float]] = {name: [] for name in [*variants, *floors]}
    order = list(variants)
    for r in range(args.rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:  # each variant first in turn
            p, e = variants[name]
            samples[name].append(per_span_ns(p, e, args.spans, args.gc_off))
        for name, fn in floors.items():
            samples[name].append(per_call_ns(fn, args.spans))
    med = {name: statistics.median(v) for name, v in samples.items()}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "spans": args.spans, "median_ns": med, "samples_ns": samples}))
        return 0
    print(f"thread CPU ns per span (or per call), medians of {args.rounds} interleaved rounds of {args.spans}")
    print(f"{'variant':<12} {'median':>9} {'over plain':>11} {'min':>9} {'max':>9}")
    for name, v in samples.items():
        over = f"{med[name] - med['plain']:+11.0f}" if name in variants else f"{'':>11}"
        print(f"{name:<12} {med[name]:9.0f} {over} {min(v):9.0f} {max(v):9.0f}")
    worst = max(med["cpu"], med["cpu+split"]) - med["plain"]
    verdict = "holds" if worst <= FLOOR_NS else "MISSED"
    print(f"floor: processor adds <= {FLOOR_NS} ns per span over plain: {worst:.0f} ns ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
