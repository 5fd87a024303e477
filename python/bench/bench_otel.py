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
  1 attr, 2 attrs  plain, with the loop's body setting one (two) int
               attributes on each span through its set_attribute: what
               the SDK itself charges for as many attributes as the
               processor sets (one for cpu, two for cpu+wait), on a span
               that has none yet; the processor pays that on the
               end_hook path only
  cpu          ThreadTimeSpanProcessor(run_wait=False): the CPU total only
  cpu+wait     ThreadTimeSpanProcessor(): the total and the run-queue wait
               (the default)
  cpu+wait+split  ThreadTimeSpanProcessor(split=True): the user/system split too
  front cpu, front cpu+wait  the cpu and cpu+wait processors in front of the
               exporting one (ThreadTimeSpanProcessor(SimpleSpanProcessor(
               exporter))), the provider's only processor: the SDK calls
               one processor's hooks per span, as in plain

Every processor row runs on the path the processor takes on the installed
SDK (its `path`, printed with the SDK's version); each timing checks that
every span reached the exporter with its figure.

and, as floors in the same run: span.set_attribute(name, int) called again
and again on one live span (the key already there: far cheaper than the
first attribute of a fresh span, which the attrs rows show), total_ns()
(the fast clock), sched() (tt_self_sched: schedstat and getrusage) and
one os.pread of the thread's schedstat (what the wait reads, once per run
of fast-clock anchors, i.e. after the thread was switched out, not per
span; a Python call around it). The wait's own cost is cpu+wait - cpu (on
the end_hook path less the SDK's second attribute, 2 attrs - 1 attr),
against two such preads. --gc-off keeps the cycle collector off while the
spans are timed, to show its share. Thread CPU time per span (the loop runs on one
thread, so CPU time is what the span costs, whatever else the host runs):
the median over the rounds, and "over plain", the median of each round's
difference to plain's run in the same round (paired, so the host's drift
between rounds drops out); the floor is <= 2 us per span over plain.
"min over" is a variant's lowest round less plain's lowest: the cost in
the quietest conditions the run saw, beside the paired median. A
round times each variant's N spans in --chunks chunks (10 by default), the
variants' chunks in turn (one of each, then the next of each: a pair is
then a few ms apart, where this guest's speed changes by up to 1.6x over
seconds), and keeps each variant's lowest chunk mean: on a shared host an
interrupt, another process's run on the same CPU (its cache) or the
hypervisor's steal (counted as the thread's CPU time in a guest) lands in
some chunks and not others, and the lowest is the cost without them, for
plain and each processor alike (a cycle collection is left out the same
way; --gc-off shows its share). --chunks 1 times each variant's N spans at
once, one variant after the other. The
load average (1 min) at the start and end of the timed rounds is printed.

--callgrind counts instructions instead, which a loaded host cannot change:
the script runs itself under valgrind's callgrind, once per variant (as an
application has one provider: the SDK's interpreter caches each call site's
lookups for the processors it sees there, and one process running every
variant would make those sites see several kinds), each variant at N and
2N spans (and each floor at N and 2N calls, in one more run), each through
sys.call_tracing so that callgrind collects inside it alone; per span = the
difference / N.
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
from collections.abc import Callable
from importlib.metadata import version

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import threadtime
from threadtime.otel import RUN_WAIT, TOTAL, ThreadTimeSpanProcessor

FLOOR_NS = 2000


class Variant:
    """A tracer provider ending in an in-memory exporter, and the
    attributes the benchmark's own loop sets on each span. front: the
    processor is made with front(exporting processor) and is the provider's
    only one."""

    def __init__(self, processor: SpanProcessor | None, attrs: int = 0,
                 front: Callable[[SpanProcessor], SpanProcessor] | None = None) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        exporting = SimpleSpanProcessor(self.exporter)
        if front is not None:
            processor = front(exporting)
            self.provider.add_span_processor(processor)
        else:
            if processor is not None:
                self.provider.add_span_processor(processor)
            self.provider.add_span_processor(exporting)
        self.tracer = self.provider.get_tracer("bench")
        self.attrs = attrs
        self.measured = isinstance(processor, ThreadTimeSpanProcessor)

    def check(self, n: int) -> None:
        """The n spans made since the exporter was emptied all reached it,
        each with its CPU figure where the processor is threadtime's."""
        finished = self.exporter.get_finished_spans()
        assert len(finished) == n
        assert not self.measured or all(TOTAL in s.attributes for s in finished)

    def spans(self, n: int) -> None:
        tracer = self.tracer
        if self.attrs == 0:
            for _ in range(n):
                with tracer.start_as_current_span("op"):
                    pass
        elif self.attrs == 1:
            for _ in range(n):
                with tracer.start_as_current_span("op") as span:
                    span.set_attribute(TOTAL, 12345)
        else:
            for _ in range(n):
                with tracer.start_as_current_span("op") as span:
                    span.set_attribute(TOTAL, 12345)
                    span.set_attribute(RUN_WAIT, 678)


def round_ns(variants: list[Variant], n: int, gc_off: bool = False, chunks: int = 1) -> list[float]:
    """Each variant's n spans, timed in chunks of n // chunks taken in turn
    (a chunk of each variant, then the next chunk of each): each one's
    lowest chunk mean."""
    for v in variants:
        v.exporter.clear()
    gc.collect()
    if gc_off:
        gc.disable()
    size = n // chunks
    best = [float("inf")] * len(variants)
    for _ in range(chunks):
        for i, v in enumerate(variants):
            t0 = time.thread_time_ns()
            v.spans(size)
            best[i] = min(best[i], (time.thread_time_ns() - t0) / size)
    gc.enable()
    for v in variants:
        v.check(size * chunks)
        v.exporter.clear()  # every variant starts the next round on the same heap
    return best


def per_call_ns(fn, n: int, chunks: int = 1) -> float:
    size, best = n // chunks, float("inf")
    for _ in range(chunks):
        t0 = time.thread_time_ns()
        calls(fn, size)
        best = min(best, (time.thread_time_ns() - t0) / size)
    return best


PREAD = "schedstat pread"
# The SDK's own row for the set_attribute calls a mode makes on the span.
ATTRS = {"cpu": "1 attr", "cpu+wait": "2 attrs"}


def variants_and_floors() -> tuple[dict[str, Variant], dict]:
    variants = {
        "plain": Variant(None),
        "noop": Variant(SpanProcessor()),
        "1 attr": Variant(None, 1),
        "2 attrs": Variant(None, 2),
        "cpu": Variant(ThreadTimeSpanProcessor(run_wait=False)),
        "cpu+wait": Variant(ThreadTimeSpanProcessor()),
        "cpu+wait+split": Variant(ThreadTimeSpanProcessor(split=True)),
        "front cpu": Variant(None, front=lambda p: ThreadTimeSpanProcessor(p, run_wait=False)),
        "front cpu+wait": Variant(None, front=ThreadTimeSpanProcessor),
    }
    live = TracerProvider().get_tracer("bench").start_span("live")
    schedstat = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    floors = {
        "set_attribute": lambda: live.set_attribute("threadtime.cpu.total_ns", 12345),
        "total_ns()": threadtime.total_ns,
        "sched()": threadtime.sched,
        PREAD: lambda: os.pread(schedstat, 128, 0),
    }
    return variants, floors


def calls(fn, n: int) -> None:
    for _ in range(n):
        fn()


FLOORS = "floors"


def callgrind_child(n: int, only: str) -> None:
    variants, floors = variants_and_floors()
    for name, v in variants.items():
        if name != only:
            continue
        e = v.exporter
        v.spans(200)  # warm: first-call caches
        for size in (n, 2 * n):
            e.clear()
            gc.collect()
            sys.call_tracing(v.spans, (size,))
            v.check(size)
    for fn in floors.values() if only == FLOORS else ():
        fn()
        for size in (n, 2 * n):
            sys.call_tracing(calls, (fn, size))


def callgrind(n: int) -> int:
    if shutil.which("valgrind") is None:
        sys.exit("bench_otel.py --callgrind: valgrind is not installed (apt-get install valgrind)")
    variants, floors = variants_and_floors()
    names = [*variants, *floors]
    counts = []
    for run in [*variants, FLOORS]:
        with tempfile.TemporaryDirectory(prefix="tt-callgrind-") as out_dir:
            cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=_PyEval_CallTracing",
                   "--dump-after=_PyEval_CallTracing", f"--callgrind-out-file={out_dir}/cg.out",
                   sys.executable, os.path.abspath(__file__), "--callgrind-child", run, f"--spans={n}"]
            subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONHASHSEED="0"), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            files = sorted((f for f in os.listdir(out_dir) if re.fullmatch(r"cg\.out\.\d+", f)),
                           key=lambda f: int(f.rsplit(".", 1)[1]))
            for f in files:
                with open(os.path.join(out_dir, f)) as fh:
                    counts.append(int(re.search(r"^summary: (\d+)", fh.read(), re.M).group(1)))
    if len(counts) != 2 * len(names):
        raise RuntimeError(f"expected {2 * len(names)} callgrind dumps, found {len(counts)}")
    per = {name: (counts[2 * i + 1] - counts[2 * i]) / n for i, name in enumerate(names)}
    print(f"instructions (callgrind) per span (or per call), {2 * n} - {n} spans; Python {sys.version.split()[0]}, "
          f"{setup()}")
    print(f"{'variant':<15} {'per span':>9} {'over plain':>11} {'over noop':>10}")
    for name in names:
        over = f"{per[name] - per['plain']:+11.0f} {per[name] - per['noop']:+10.0f}" if name in variants else ""
        print(f"{name:<15} {per[name]:9.0f} {over}")
    return 0


def setup() -> str:
    """The SDK's version and the path the processor takes on it."""
    return f"opentelemetry-sdk {version('opentelemetry-sdk')}, path {ThreadTimeSpanProcessor().path}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=5000, help="spans per variant per round")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--chunks", type=int, default=10,
                    help="a round's figure is the lowest of this many chunks' means (1: the whole run's)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--gc-off", action="store_true", help="the cycle collector off while spans are timed")
    ap.add_argument("--callgrind", action="store_true", help="count instructions under callgrind instead")
    ap.add_argument("--callgrind-child", metavar="VARIANT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.callgrind_child is not None:
        callgrind_child(args.spans, args.callgrind_child)
        return 0
    if args.callgrind:
        return callgrind(args.spans)
    load = f"{os.getloadavg()[0]:.1f}"
    variants, floors = variants_and_floors()
    for v in variants.values():  # warm-up
        round_ns([v], min(args.spans, 2000))
    samples: dict[str, list[float]] = {name: [] for name in [*variants, *floors]}
    order = list(variants)
    for r in range(args.rounds):
        turn = order[r % len(order):] + order[:r % len(order)]  # each variant first in turn
        for name, ns in zip(turn, round_ns([variants[name] for name in turn], args.spans, args.gc_off, args.chunks)):
            samples[name].append(ns)
        for name, fn in floors.items():
            samples[name].append(per_call_ns(fn, args.spans, args.chunks))
    load += f" to {os.getloadavg()[0]:.1f}"
    med = {name: statistics.median(v) for name, v in samples.items()}
    # Each round's difference to plain's run of the same round.
    over = {name: statistics.median(a - b for a, b in zip(samples[name], samples["plain"])) for name in variants}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "spans": args.spans, "chunks": args.chunks, "median_ns": med,
                          "over_plain_ns": over,
                          "samples_ns": samples}))
        return 0
    print(f"thread CPU ns per span (or per call), medians of {args.rounds} interleaved rounds of {args.spans} "
          f"(each round's figure the lowest mean of {args.chunks} chunks); "
          f"over plain: the median of the rounds' differences; {setup()}; load average {load}")
    print(f"{'variant':<15} {'median':>9} {'over plain':>11} {'min':>9} {'min over':>9} {'max':>9}")
    for name, v in samples.items():
        o = f"{over[name]:+11.0f}" if name in variants else f"{'':>11}"
        lowest = f"{min(v) - min(samples['plain']):+9.0f}" if name in variants else f"{'':>9}"
        print(f"{name:<15} {med[name]:9.0f} {o} {min(v):9.0f} {lowest} {max(v):9.0f}")
    hooked = ThreadTimeSpanProcessor().path == "end_hook"  # sets the figures through set_attribute
    for name in ("cpu", "cpu+wait", "cpu+wait+split", "front cpu", "front cpu+wait"):
        verdict = "holds" if over[name] <= FLOOR_NS else "MISSED"
        beyond = f"; beyond the SDK's own set_attribute calls ({ATTRS[name]}): " \
                 f"{over[name] - over[ATTRS[name]]:.0f} ns" if hooked and name in ATTRS else ""
        print(f"floor: {name} adds <= {FLOOR_NS} ns per span over plain: {over[name]:.0f} ns ({verdict}){beyond}")
    # What the wait adds (on the end_hook path, its attribute's set_attribute taken out).
    wait = over["cpu+wait"] - over["cpu"] - (over["2 attrs"] - over["1 attr"] if hooked else 0)
    verdict = "holds" if wait <= 2 * med[PREAD] else "MISSED"
    print(f"floor: the run-queue wait adds <= 2 schedstat preads ({2 * med[PREAD]:.0f} ns) per span: "
          f"{wait:.0f} ns ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
