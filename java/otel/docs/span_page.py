#!/usr/bin/env python3
"""Renders one trace, as the OpenTelemetry agent's console exporter printed it
in a test run, as a small HTML page (for the screenshot in
docs/cpu-per-request.md).

    span_page.py STDERR_FILE OUT.html

STDERR_FILE is a service's stderr from AgentServiceTest
(java/otel/target/service-runs/jdk25/vthreads-jvmti.stderr): the trace shown
is that of the last GET /burn server span in it. Everything on the page is
taken from the exporter's lines; nothing is computed but ns -> ms.
"""
import html
import re
import sys

SPAN = re.compile(r"LoggingSpanExporter - '([^']*)' : (\S+) (\S+) (\w+) \[tracer: ([^\]]*)\] "
                  r"AttributesMap\{data=\{(.*)\}, capacity")


def attributes(text):
    out = {}
    for kv in text.split(", "):
        k, sep, v = kv.partition("=")
        if sep:
            out[k] = v
    return out


def ms(attrs, key):
    v = attrs.get(key)
    return "" if v is None else f"{int(v) / 1e6:.2f} ms"


def main(src, dst):
    spans = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            m = SPAN.search(line)
            if m:
                name, trace, span, kind, tracer, attrs = m.groups()
                spans.append((name, trace, span, kind, tracer, attributes(attrs)))
    burns = [s for s in spans if s[0] == "GET /burn" and s[3] == "SERVER"]
    if not burns:
        sys.exit(f"span_page.py: no GET /burn server span in {src}")
    trace = burns[-1][1]
    rows = []
    for name, _, span, kind, tracer, a in spans:
        if _ != trace:
            continue
        thread = a.get("thread.name") or "(virtual thread)"
        rows.append(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in (
                name, kind, f"{thread} #{a.get('thread.id', '?')}", a.get("url.query", a.get("url.full", "")),
                ms(a, "threadtime.cpu.total_ns"), ms(a, "threadtime.cpu.user_ns"), ms(a, "threadtime.cpu.system_ns"))) + "</tr>")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>trace {trace}</title><style>
body {{ font: 14px system-ui, sans-serif; margin: 16px; color: #222; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; }}
th {{ background: #eef; }}
td:nth-child(5), td:nth-child(6), td:nth-child(7) {{ text-align: right; font-family: monospace; }}
td:nth-child(5) {{ font-weight: bold; }}
</style></head><body>
<h3>Trace {trace}: spans as the OpenTelemetry Java agent exported them, with threadtime's attributes</h3>
<table><tr><th>span</th><th>kind</th><th>thread</th><th>query / URL</th>
<th>threadtime.cpu.total_ns (in ms)</th><th>.user_ns</th><th>.system_ns</th></tr>
{''.join(rows)}
</table>
<p>The GET /burn span ran on a virtual thread that burned 90 ms of CPU around two blocking calls;
its CPU time is summed across parks and carriers. The GET /wait spans ran on platform threads
(user/system split). The CLIENT spans started and ended on the request's virtual thread.</p>
</body></html>
"""
    with open(dst, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: span_page.py STDERR_FILE OUT.html")
    main(sys.argv[1], sys.argv[2])
