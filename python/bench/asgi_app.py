"""The server of `make bench-python-asgi` (python/bench/asgi_bench.py runs
it): a Starlette app under uvicorn, one worker, one loop, traced by
opentelemetry-instrumentation-asgi's middleware into an exporter that keeps
what the benchmark reports.

    python python/bench/asgi_app.py --port 8765 --accounting on --report out.json

GET /work burns ~1 ms of CPU in three pieces around two awaited calls to
GET /backend on the same server (through aiohttp's client), so requests
interleave on the loop thread. Each piece is timed by the loop thread's
kernel clock (time.thread_time_ns) read around it, with no await inside:
that sum is the truth of what the request burned.

With --accounting on, threadtime.asyncio is installed on the loop at
startup and ThreadTimeSpanProcessor is added to the tracer provider; with
off, neither (the SDK, the middleware and the exporter stay). In both, a
second processor notes what a naive span would charge: the loop thread's
CPU between the span's start and its end. At shutdown the report (per
/work request: burned, charged, naive) is written as JSON.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time
from contextlib import asynccontextmanager
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

PIECE_NS = 333_000  # three pieces: ~1 ms a request


def burn(ns: int) -> int:
    """Spins until the loop thread's kernel clock has advanced ns; what it
    says the spin used, read around it."""
    t0 = now = time.thread_time_ns()
    while now - t0 < ns:
        for _ in range(50):
            pass
        now = time.thread_time_ns()
    return now - t0


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
    kept = Kept()
    if accounting:
        provider.add_span_processor(ThreadTimeSpanProcessor())
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
        if accounting:
            threadtime.asyncio.install()  # this loop's tasks from now on
        state["client"] = aiohttp.ClientSession()
        yield
        await state["client"].close()
        rows = [[burned[i], kept.charged.get(i), naive.naive.get(i)] for i in burned]
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
