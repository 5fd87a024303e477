"""The server of `make bench-python-asgi` (python/bench/asgi_bench.py runs
it): a Starlette app under uvicorn, one worker, one loop, traced by
opentelemetry-instrumentation-asgi's middleware into an exporter that keeps
what the benchmark reports.

    python python/bench/asgi_app.py --port 8765 --accounting on --report out.json

GET /work burns ~1 ms of CPU in three pieces around two awaited calls to
GET /backend on the same server (through aiohttp's client), so requests
interleave on the loop thread. Each piece is timed by the loop thread's
kernel clock (time.thread_time_ns) read around it, with no await inside:
that sum is what the request burned on purpose.

The request also runs the framework (the middleware and its span,
Starlette's routing, the client calls, the response), which the burn
leaves out. So a second truth takes it all in, by its own hook, not
threadtime's: the loop's task factory steps each task's coroutine through a
Stepped wrapper that reads the loop thread's kernel clock around every step
(and hands the Stepped to threadtime.asyncio's factory, whose bracket then
lies around the truth's), and a span processor (Truth) reads the current
task's sum at the span's start and end (its step in progress included).
That is the request's own CPU while its server span was open: every step
of its task, and nothing of its neighbours'. The truth's own reads are
inside threadtime's brackets, so threadtime charges them too: what it
charges above the truth is that cost and its own.

With --accounting on, threadtime.asyncio is installed on the loop at
startup and ThreadTimeSpanProcessor is added to the tracer provider; with
off, neither (the SDK, the middleware, the exporter and the truth's hooks
stay). In both, another processor notes what a naive span would charge:
the loop thread's CPU between the span's start and its end. At shutdown
the report (per /work request: burned, charged, naive, steps) is written
as JSON.
"""
from __future__ import annotations

import argparse
import asyncio
import collections.abc
import json
import sys
import time
import types
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import uvicorn
from opentelemetry import trace
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import threadtime.asyncio
from threadtime.otel import TOTAL, ThreadTimeSpanProcessor

# The burn the tests use too (python/support/cpu_burn.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from cpu_burn import burn  # noqa: E402 (the shared burn, python/support)

PIECE_NS = 333_000  # three pieces: ~1 ms a request


class NaiveSpans(SpanProcessor):
    """The loop thread's CPU between a span's start and its end (on_end runs
    on the thread that ends the span, right after it ends)."""

    def __init__(self) -> None:
        self.started: dict[int, int] = {}
        self.naive: dict[int, int] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        self.started[span.context.span_id] = time.thread_time_ns()

    def on_end(self, span: ReadableSpan) -> None:
        start = self.started.pop(span.context.span_id, None)
        if start is not None and span.kind == SpanKind.SERVER:
            self.naive[span.context.span_id] = time.thread_time_ns() - start


class Stepped:
    """A task's coroutine, stepped with the loop thread's kernel clock read
    around each step (send, throw, close): the sum of its steps' CPU."""

    __slots__ = ("coro", "total_ns", "begin_ns")

    def __init__(self, coro: Any) -> None:
        self.coro = coro
        self.total_ns = 0
        self.begin_ns = -1  # the clock at the start of the step under way

    def _step(self, method: Any, *args: Any) -> Any:
        outer, self.begin_ns = self.begin_ns, time.thread_time_ns()
        try:
            return method(*args)
        finally:
            self.total_ns += time.thread_time_ns() - self.begin_ns
            self.begin_ns = outer

    def send(self, value: Any) -> Any:
        return self._step(self.coro.send, value)

    def throw(self, *exc: Any) -> Any:
        return self._step(self.coro.throw, *exc)

    def close(self) -> Any:
        return self._step(self.coro.close)

    def __await__(self) -> Stepped:
        return self

    def __iter__(self) -> Stepped:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def so_far(self) -> int:
        """Its steps' CPU so far, the one under way included (called from
        inside it)."""
        return self.total_ns + (time.thread_time_ns() - self.begin_ns if self.begin_ns >= 0 else 0)


collections.abc.Coroutine.register(Stepped)


def stepped_factory(previous: Any) -> Any:
    """A task factory that steps each coroutine through a Stepped, handed
    to previous (threadtime.asyncio's factory, which then brackets the
    Stepped's steps: the truth's reads lie inside threadtime's), or made a
    plain task."""

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        if previous is None:
            return asyncio.Task(Stepped(coro), loop=loop, **kwargs)
        return previous(loop, Stepped(coro), **kwargs)  # type: ignore[no-any-return]

    return factory


def stepped_of(task: asyncio.Task[Any] | None) -> Stepped | None:
    """The task's Stepped (its get_coro() answers it; a counted task's too)."""
    coro = task.get_coro() if task is not None else None
    return coro if isinstance(coro, Stepped) else None


class Truth(SpanProcessor):
    """What the current task's steps used while a SERVER span was open, by
    Stepped's clock reads, by span id. Added after ThreadTimeSpanProcessor,
    it reads after that one at the start, and its hook on the span's end()
    reads before that one at the end (threadtime reads in the SDK's end(),
    or in a hook of its own put on before this one, so called after it):
    the truth's interval lies inside the one threadtime measures."""

    def __init__(self) -> None:
        self.steps: dict[int, int] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        stepped = stepped_of(asyncio.current_task())
        if stepped is None or span.kind != SpanKind.SERVER:
            return
        sid, previous, at_start = span.context.span_id, span.end, stepped.so_far()

        def end(end_time: int | None = None) -> None:
            self.steps[sid] = stepped.so_far() - at_start
            if isinstance(previous, types.MethodType) and previous.__self__ is span:
                del span.end  # type: ignore[method-assign]
            else:
                span.end = previous  # type: ignore[method-assign]
            previous(end_time)

        span.end = end  # type: ignore[method-assign]


class Kept(SpanExporter):
    """Keeps the threadtime figure of each SERVER span, by span id."""

    def __init__(self) -> None:
        self.charged: dict[int, int | None] = {}

    def export(self, spans: Any) -> SpanExportResult:
        for s in spans:
            if s.kind == SpanKind.SERVER:
                self.charged[s.context.span_id] = s.attributes.get(TOTAL)
        return SpanExportResult.SUCCESS


def build(accounting: bool, port: int, report: str) -> Any:
    provider = TracerProvider()
    naive = NaiveSpans()
    truth = Truth()
    kept = Kept()
    if accounting:
        provider.add_span_processor(ThreadTimeSpanProcessor())
    provider.add_span_processor(truth)
    provider.add_span_processor(naive)
    provider.add_span_processor(SimpleSpanProcessor(kept))
    burned: dict[int, int] = {}
    state: dict[str, aiohttp.ClientSession] = {}

    async def backend(request: Request) -> PlainTextResponse:
        return PlainTextResponse("b")

    async def work(request: Request) -> PlainTextResponse:
        client = state["client"]
        used = burn(PIECE_NS)
        for _ in range(2):
            async with client.get(f"http://127.0.0.1:{port}/backend") as r:
                await r.read()
            used += burn(PIECE_NS)
        burned[trace.get_current_span().get_span_context().span_id] = used
        return PlainTextResponse("w")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        loop = asyncio.get_running_loop()
        if accounting:
            threadtime.asyncio.install()  # this loop's tasks from now on
        loop.set_task_factory(stepped_factory(loop.get_task_factory()))  # the truth's own hook
        state["client"] = aiohttp.ClientSession()
        yield
        await state["client"].close()
        rows = [[burned[i], kept.charged.get(i), naive.naive.get(i), truth.steps.get(i)] for i in burned]
        with open(report, "w") as f:
            json.dump({"accounting": accounting, "requests": rows}, f)

    app = Starlette(routes=[Route("/work", work), Route("/backend", backend)], lifespan=lifespan)
    return OpenTelemetryMiddleware(app, tracer_provider=provider)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--accounting", choices=["on", "off"], required=True)
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    app = build(args.accounting == "on", args.port, args.report)
    uvicorn.run(app, host="127.0.0.1", port=args.port, workers=1, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
