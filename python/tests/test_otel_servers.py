"""threadtime.otel with the server instrumentations users run: the server
span of a request gets the request's own CPU while other requests run on
the same loop. Truth: the loop thread's kernel clock (time.thread_time_ns)
read by the handler around each piece of its burn (no await inside a
piece); the requests interleave at the awaits between the pieces."""
import asyncio

import aiohttp
from aiohttp import web
from opentelemetry.instrumentation.aiohttp_server import AioHttpServerInstrumentor
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import threadtime
import threadtime.asyncio as tta
from cpu_burn import burn
from threadtime import otel

MS = 1_000_000
BOUND = threadtime.FAST_BOUND_NS
# The requests: a light one (3 pieces of 5 ms) and a heavy neighbour (4 of
# 20 ms, each more than OVERHEAD), both started at once, awaiting between
# pieces.
PIECES = {"/light": (3, 5 * MS), "/heavy": (4, 20 * MS)}
# What a server span may hold beyond the handler's pieces: the
# instrumentation's and the server's own work for the request, in its task.
OVERHEAD = 10 * MS


async def handle(path: str) -> int:
    """The pieces of path's burn, an await between each two: what they used."""
    count, each = PIECES[path]
    used = 0
    for i in range(count):
        used += burn(each)
        if i + 1 < count:
            await asyncio.sleep(0.001)
    return used


def tracing():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = otel.ThreadTimeSpanProcessor()
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter, processor


def server_spans(exporter, key):
    """{path: the SERVER span's attributes}, the path read from attribute key."""
    spans = [s for s in exporter.get_finished_spans() if s.kind == SpanKind.SERVER]
    return {s.attributes[key]: s.attributes for s in spans if key in s.attributes}


def assert_own_cpu(spans, burned):
    for path, used in burned.items():
        charged = spans[path][otel.TOTAL]
        # Never less than its own pieces; no piece of its neighbour's in it.
        assert used - BOUND <= charged <= used + OVERHEAD, (path, used, charged)


def test_asgi_server_span_gets_the_requests_cpu():
    provider, exporter, _ = tracing()
    burned = {}

    async def app(scope, receive, send):
        burned[scope["path"]] = await handle(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})

    asgi = OpenTelemetryMiddleware(app, tracer_provider=provider)

    async def request(path):
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
                 "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
                 "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 40000),
                 "server": ("127.0.0.1", 8000)}
        sent = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        await asgi(scope, receive, send)
        return sent[0]["status"]

    async def main():
        tta.install()
        return await asyncio.gather(*(asyncio.create_task(request(p)) for p in PIECES))

    assert asyncio.run(main()) == [200, 200]
    spans = server_spans(exporter, "http.target") or server_spans(exporter, "url.path")
    assert set(spans) == set(PIECES)
    assert_own_cpu(spans, burned)
    provider.shutdown()


def test_aiohttp_server_span_gets_the_requests_cpu():
    """A real aiohttp server on 127.0.0.1, instrumented as its docs say
    (the instrumentor, then the Application), two requests at once from a
    client on the same loop.

    On CPython 3.12 and 3.13 aiohttp makes each connection's task with
    asyncio.Task(..., eager_start=True), past the loop's task factory, so
    threadtime.asyncio does not count it: then the span must get no figure
    (never the loop thread's) and be counted as unmeasured."""
    provider, exporter, processor = tracing()
    instrumentor = AioHttpServerInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    burned = {}
    counted = set()

    async def handler(request):
        counted.add(isinstance(asyncio.current_task(), tta.CountedTask))
        burned[request.path] = await handle(request.path)
        return web.Response(text="ok")

    async def main():
        tta.install()
        app = web.Application()
        app.router.add_get("/light", handler)
        app.router.add_get("/heavy", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        try:
            async with aiohttp.ClientSession() as client:
                async def get(path):
                    async with client.get(f"http://127.0.0.1:{port}{path}") as r:
                        return r.status
                return await asyncio.gather(*(get(p) for p in PIECES))
        finally:
            await runner.cleanup()

    try:
        assert asyncio.run(main()) == [200, 200]
    finally:
        instrumentor.uninstrument()
    spans = server_spans(exporter, "http.target") or server_spans(exporter, "url.path")
    assert set(spans) == set(PIECES)
    assert len(counted) == 1
    if counted == {True}:
        assert_own_cpu(spans, burned)
    else:
        assert all(otel.TOTAL not in attrs for attrs in spans.values())
        assert processor.unmeasured(otel.NO_CLOCK) == len(PIECES)
    provider.shutdown()
