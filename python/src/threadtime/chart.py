"""Charts: a benchmark run, or a trace of your own program, as PNG and HTML.

    python -m threadtime.chart bench.json -o out/     (or "-" for stdin)
    python -m threadtime.chart run.trace -o out/

A benchmark (the JSON of ``threadtime bench --json`` or of
python/bench/bench.py) gives ``out/bench.png`` and ``out/bench.html``: one
panel per thread count on shared axes, one row per method labelled with what
it measures, its p50, p99 and max per call on a log scale, and the /proc
baseline's p50 as a dashed line.

A trace file (``threadtime.dump()``, ``tt_log_dump``, a crash-safe log) gives
``out/trace.png`` and ``out/trace.html``: one lane per thread with its
intervals (bars) and events (ticks) over time, and below it the CPU time of
each CPU interval (``interval(id, cpu=True)``) against its wall time, so you
see which thread spent its CPU where. The HTML pages hold the same figure as
inline SVG and the numbers as tables; they load nothing from elsewhere.

Drawing needs matplotlib (``pip install 'threadtime[chart]'``); without it,
the drawing calls raise ImportError saying so, and the command prints it.
"""
from __future__ import annotations

import argparse
import html
import io
import json
import operator
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ._core import Event, _pair_events
from .trace import Trace, TraceDamagedWarning, TraceError, _cpu_ns, read_trace

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NEEDS_MATPLOTLIB = "threadtime.chart needs matplotlib: pip install 'threadtime[chart]'"


def _matplotlib() -> ModuleType:
    """matplotlib with the parts the charts use, or ImportError saying how to get it."""
    try:
        import matplotlib
        import matplotlib.figure
        import matplotlib.lines
        import matplotlib.patches
        import matplotlib.path
    except ImportError as e:
        raise ImportError(NEEDS_MATPLOTLIB) from e
    return matplotlib


DEFAULT_BASELINE = "procfs_stat"
# What each row shows, in drawing order: (JSON key, legend label, marker, colour).
MARKS = (
    ("p50_ns", "p50", "o", "#1f77b4"),
    ("p99_ns", "p99", "^", "#ff7f0e"),
    ("max_ns", "max", "x", "#d62728"),
)
BASELINE_COLOUR = "#2ca02c"
REQUIRED = ("method", "threads", "p50_ns", "p99_ns", "max_ns")
# Table columns of the HTML page: (JSON key, heading).
COLUMNS = (
    ("method", "method"), ("description", "what it measures"), ("threads", "threads"), ("samples", "samples"),
    ("mean_ns", "mean ns"), ("p50_ns", "p50 ns"), ("p99_ns", "p99 ns"),
    ("max_ns", "max ns"), ("ratio_to_baseline", "p50 / baseline"),
)


class BenchFormatError(ValueError):
    """The input is not the JSON that ``threadtime bench --json`` writes."""


@dataclass
class Bench:
    machine: dict[str, Any]
    baseline: str
    results: list[dict[str, Any]]

    @property
    def thread_counts(self) -> list[int]:
        return sorted({r["threads"] for r in self.results})

    @property
    def methods(self) -> list[str]:
        """Every method once, in the order the run measured them."""
        return list(dict.fromkeys(r["method"] for r in self.results))

    def label(self, method: str) -> str:
        """What the method measures (the JSON's description), else its name."""
        for r in self.results:
            if r["method"] == method and r.get("description"):
                return str(r["description"])
        return method

    def row(self, method: str, threads: int) -> dict[str, Any] | None:
        for r in self.results:
            if r["method"] == method and r["threads"] == threads:
                return r
        return None


def parse(data: Any) -> Bench:
    """Checks the parsed JSON and keeps what the chart needs."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise BenchFormatError("expected an object with a \"results\" list")
    results = data["results"]
    if not results:
        raise BenchFormatError("\"results\" is empty: nothing to draw")
    for i, r in enumerate(results):
        missing = [k for k in REQUIRED if not isinstance(r, dict) or k not in r]
        if missing:
            raise BenchFormatError(f"results[{i}] lacks {', '.join(missing)}")
        if not all(isinstance(r[k], (int, float)) and r[k] > 0 for k in REQUIRED[2:]):
            raise BenchFormatError(f"results[{i}]: times must be positive numbers")
    baseline = data.get("sampling", {}).get("baseline", DEFAULT_BASELINE)
    if not any(r["method"] == baseline for r in results):
        raise BenchFormatError(f"no {baseline} rows: the chart needs the /proc baseline")
    return Bench(machine=data.get("machine", {}), baseline=baseline, results=results)


def load(path: str) -> Bench:
    """Reads a bench JSON file ("-": stdin)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise BenchFormatError("neither a trace file (no TTRACE signature at the start) nor the JSON of "
                               f"`threadtime bench --json` (not UTF-8 text: byte {e.start})") from e
    try:
        return parse(json.loads(text))
    except json.JSONDecodeError as e:
        raise BenchFormatError("neither a trace file (no TTRACE signature at the start) nor the JSON of "
                               f"`threadtime bench --json` (not JSON: {e})") from e


def title(bench: Bench) -> str:
    m = bench.machine
    parts = [f"threadtime {m['threadtime']}" if "threadtime" in m else "threadtime",
             m.get("cpu"), m.get("kernel")]
    return " | ".join(str(p) for p in parts if p)


def figure(bench: Bench) -> Figure:
    """One panel per thread count; rows are methods; log-scale ns per call."""
    mpl = _matplotlib()
    Line2D = mpl.lines.Line2D
    methods = bench.methods
    counts = bench.thread_counts
    fig: Figure = mpl.figure.Figure(figsize=(4.2 * len(counts) + 5, 0.5 * len(methods) + 1.8), layout="constrained")
    # Shared axes: the same method on the same row, the same ns at the same place.
    axes = fig.subplots(1, len(counts), sharex=True, sharey=True, squeeze=False)[0]
    ys = range(len(methods))
    for ax, threads in zip(axes, counts):
        for y, method in zip(ys, methods):
            r = bench.row(method, threads)
            if r is None:
                continue
            ax.plot([r["p50_ns"], r["max_ns"]], [y, y], color="#bbbbbb", linewidth=1, zorder=1)
            for key, _, marker, colour in MARKS:
                ax.scatter([r[key]], [y], marker=marker, color=colour, s=36, zorder=2)
        base = bench.row(bench.baseline, threads)
        if base is not None:
            ax.axvline(base["p50_ns"], color=BASELINE_COLOUR, linestyle="--", linewidth=1.5)
        ax.set_xscale("log")
        ax.set_title(f"{threads} thread{'s' if threads != 1 else ''}")
        ax.set_xlabel("ns per call (log scale)")
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[0].set_yticks(list(ys), [textwrap.fill(bench.label(m), 48) for m in methods], fontsize=8)
    axes[0].invert_yaxis()
    axes[0].get_yticklabels()[methods.index(bench.baseline)].set_fontweight("bold")
    handles = [Line2D([], [], marker=m, color=c, linestyle="", label=name) for _, name, m, c in MARKS]
    handles.append(Line2D([], [], color=BASELINE_COLOUR, linestyle="--", label=f"/proc baseline ({bench.baseline} p50)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles))
    fig.suptitle(title(bench), fontsize=10)
    return fig


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 10 else f"{value:,.0f}"
    return html.escape(str(value))


def html_page(bench: Bench, svg: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h in COLUMNS)
    rows = "\n".join(
        "<tr>" + "".join(f"<td>{_cell(r.get(k, ''))}</td>" for k, _ in COLUMNS) + "</tr>"
        for r in bench.results
    )
    machine = ", ".join(f"{html.escape(str(k))}: {html.escape(str(v))}" for k, v in bench.machine.items())
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>threadtime bench</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}
td:first-child {{ text-align: left; font-family: monospace; }}
td:nth-child(2) {{ text-align: left; }}
figure svg {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<h1>threadtime bench</h1>
<p>{machine}</p>
<p>Per call, per method and thread count: p50, p99 and max on a log scale; the dashed
line is the /proc reader ({html.escape(bench.baseline)}), the way CPU time is read without threadtime.</p>
<figure id="chart">
{svg}
</figure>
<table id="results">
<thead><tr>{head}</tr></thead>
<tbody>
{rows}
</tbody>
</table>
</body>
</html>
"""


def _svg(fig: Figure) -> str:
    mpl = _matplotlib()
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buf = io.StringIO()
    # savefig lays a figure out by drawing it once with drawing switched
    # off, but the rasterizer of a rasterized artist is not switched off:
    # a large trace's bars were filled twice (5 of the 15 fills of a chart
    # of 50,000 intervals). So the layout is done here, by the SVG canvas,
    # with those artists drawn as vectors into nothing; the positions are
    # the ones savefig finds, and savefig then skips its own pass.
    raster = [a for a in fig.findobj() if a.get_rasterized()]
    canvas, engine = fig.canvas, fig.get_layout_engine()
    # Text stays text in the SVG, so the page can be searched and read aloud.
    # (The other two make set_layout_engine(None) mean none: savefig makes
    # its layout pass for any engine, even "none".)
    with mpl.rc_context({"svg.fonttype": "none", "figure.autolayout": False,
                         "figure.constrained_layout.use": False}):
        try:
            for a in raster:
                a.set_rasterized(False)
            if engine is not None:
                FigureCanvasSVG(fig).figure.draw_without_rendering()
        finally:
            for a in raster:
                a.set_rasterized(True)
            fig.set_canvas(canvas)
        fig.set_layout_engine(None)
        try:
            fig.savefig(buf, format="svg", metadata={"Date": None})
        finally:
            fig.set_layout_engine(engine)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


def _write_pair(fig: Figure, page_of_svg: Callable[[str], str], outdir: Path, stem: str) -> tuple[Path, Path]:
    """Writes fig as <stem>.png and page_of_svg(its SVG) as <stem>.html into outdir."""
    outdir.mkdir(parents=True, exist_ok=True)
    png = outdir / f"{stem}.png"
    fig.savefig(png, dpi=110)
    page = outdir / f"{stem}.html"
    page.write_text(page_of_svg(_svg(fig)))
    return png, page


def write(bench: Bench, outdir: Path, stem: str = "bench") -> tuple[Path, Path]:
    """Writes <stem>.png and <stem>.html into outdir; returns both paths."""
    return _write_pair(figure(bench), lambda svg: html_page(bench, svg), outdir, stem)


# ---- a trace ----

# Interval bars take the colour of their id, and so do the CPU points of
# those intervals, each thread with a marker of its own (THREAD_MARKERS);
# events are black ticks.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
THREAD_MARKERS = ("o", "^", "s", "D", "v", "P", "X", "<", ">", "*")
EVENT_COLOUR = "#000000"
ONE_CPU_COLOUR = "#7f7f7f"
# Beyond this many events in a thread, the lane shows the first ones only
# (a chart of millions of marks says nothing more and takes minutes).
MAX_EVENTS_PER_THREAD = 50_000
# A collection of more marks than this is drawn into the SVG as an image:
# one SVG element per bar made the page of 50,000 intervals take ~20 s.
VECTOR_MAX = 2_000
MS = 1e6


def _lane_label(th: Any) -> str:
    return f"{th.name or '?'} ({th.tid})"


def _short_name(name: str | None) -> str | None:
    """A name without its package prefixes (Java's pkg.Class::method(pkg.Type)), for the legend."""
    return re.sub(r"\b[a-z_][a-z0-9_]*\.", "", name) if name else name


def cpu_in_intervals(events: Sequence[Event]) -> int:
    """The thread's CPU time spent inside any CPU interval, ns: the union of
    its begin_cpu/end_cpu intervals, so a nested or overlapping interval
    counts once. Each bound carries the thread's running CPU total, so the
    union is that total's rise while at least one interval is open. An end
    whose begin was overwritten, and an interval still open, count nothing."""
    open_ids: dict[int, int] = {}
    opened_at = 0
    used = 0
    for ev in events:
        if ev.kind not in ("begin_cpu", "end_cpu") or ev.cpu_user_ns is None or ev.cpu_system_ns is None:
            continue
        now = ev.cpu_user_ns + ev.cpu_system_ns
        if ev.kind == "begin_cpu":
            if not open_ids:
                opened_at = now
            open_ids[ev.id] = open_ids.get(ev.id, 0) + 1
        elif open_ids.get(ev.id):
            open_ids[ev.id] -= 1
            if not open_ids[ev.id]:
                del open_ids[ev.id]
            if not open_ids:
                used += now - opened_at
    return used


@dataclass
class _Lane:
    """What the chart draws of one thread, paired once for the figure and
    the page: its first max_events events, and their intervals by start
    time as (start ns, end ns, id, CPU ns or None), pair_intervals()'s
    pairs without an Interval object each (those were a quarter of the
    time of a chart of 50,000 intervals)."""

    events: Sequence[Event]
    spans: list[tuple[int, int, int, int | None]]


def _lanes(trace: Trace, max_events: int) -> list[_Lane]:
    lanes = []
    for th in trace:
        events = th.events if len(th.events) <= max_events else th.events[:max_events]
        spans = [(start, end, id_, _cpu_ns(user, system, total))
                 for (start, end, id_, user, system, _, _, total, _) in _pair_events(events)]
        spans.sort(key=operator.itemgetter(0))  # stable, as pair_intervals() sorts
        lanes.append(_Lane(events, spans))
    return lanes


def trace_figure(trace: Trace, max_events: int = MAX_EVENTS_PER_THREAD) -> Figure:
    """Lanes of intervals and events over time; CPU against wall time per CPU interval."""
    return _trace_figure(trace, _lanes(trace, max_events))


def _trace_figure(trace: Trace, lane_data: list[_Lane]) -> Figure:
    mpl = _matplotlib()
    import numpy as np  # matplotlib's own dependency

    Line2D = mpl.lines.Line2D
    Path = mpl.path.Path
    threads = list(trace)
    fig: Figure = mpl.figure.Figure(figsize=(12, 0.5 * max(len(threads), 1) + 5.5), layout="constrained")
    lanes, cpu = fig.subplots(2, 1, height_ratios=[max(len(threads), 1) * 0.5 + 0.8, 3.2])
    ids: dict[int, str] = {}
    # (interval id, thread index) -> ([wall ms, ...], [CPU ms, ...])
    points: dict[tuple[int, int], tuple[list[float], list[float]]] = {}
    for y, lane in enumerate(lane_data):
        depth: list[int] = []  # end times of the intervals still open, for nesting
        # The bars of one colour and nesting level make one path of many
        # rectangles, drawn in one call: a call per bar made the chart
        # quadratic (each rescaled the axes over every bar so far), and an
        # object per bar cost ~50 us. Bars of one level never overlap.
        # (colour, level) -> ([start ns, ...], [wall ns, ...])
        bars: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
        for start, end, id_, cpu_ns in lane.spans:
            while depth and depth[-1] <= start:
                depth.pop()
            level = len(depth)
            depth.append(end)
            colour = ids.setdefault(id_, PALETTE[len(ids) % len(PALETTE)])
            starts, walls = bars.setdefault((colour, level), ([], []))
            starts.append(start)
            walls.append(end - start)
            if cpu_ns is not None and end > start:
                xs, ys = points.setdefault((id_, y), ([], []))
                xs.append((end - start) / MS)
                ys.append(cpu_ns / MS)
        for (colour, level), (starts, walls) in bars.items():
            # The corners in numpy, one row per bar: a tuple per corner in
            # Python cost ~3 us a bar. The arithmetic is the same float64.
            half = 0.35 / (1 + level)
            x0 = np.array(starts, dtype=np.int64) / MS
            x1 = x0 + np.maximum(np.array(walls, dtype=np.int64) / MS, 1e-6)
            n = len(starts)
            corners = np.empty((n, 5, 2))
            corners[:, (0, 1, 4), 0] = x0[:, None]
            corners[:, (2, 3), 0] = x1[:, None]
            corners[:, (0, 3, 4), 1] = y - half
            corners[:, (1, 2), 1] = y + half
            codes = np.tile(np.array([Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY],
                                     dtype=Path.code_type), n)
            path = Path(corners.reshape(-1, 2), codes)
            # add_artist, not add_patch: add_patch walks the path segment by
            # segment in Python to find its limits, which its extents give.
            lanes.add_artist(mpl.patches.PathPatch(path, facecolor=colour, edgecolor="none", rasterized=n > VECTOR_MAX))
            extents = path.get_extents()
            lanes.update_datalim([(extents.x0, extents.y0), (extents.x1, extents.y1)])
        marks = np.array([ev.t_ns for ev in lane.events if ev.kind in ("instant", "text", "value", "literal")],
                         dtype=np.int64) / MS
        if len(marks):
            lanes.scatter(marks, np.full(len(marks), y), marker="|", s=120, color=EVENT_COLOUR, linewidths=1,
                          zorder=3, rasterized=len(marks) > VECTOR_MAX)
    lanes.autoscale_view()
    lanes.set_yticks(range(len(threads)), [_lane_label(th) for th in threads])
    lanes.set_ylim(len(threads) - 0.5, -0.5)
    lanes.set_xlabel("ms since the trace started")
    lanes.set_title("threads: intervals (bars, coloured by id; nested ones thinner) and events (ticks)",
                    fontsize=10)
    lanes.grid(axis="x", alpha=0.3)

    def id_label(i: int) -> str:
        return _short_name(trace.names.get(i)) or f"interval {i}"

    handles = [Line2D([], [], color=c, linewidth=6, label=id_label(i)) for i, c in ids.items()]
    handles.append(Line2D([], [], color=EVENT_COLOUR, marker="|", linestyle="", markersize=10, label="event"))
    # Beside the lanes, not over them: inside, it hid the first lane's bars.
    lanes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)

    if points:
        for (i, y), (xs, ys) in points.items():
            # Arrays, not lists: scatter makes a masked array of a list one
            # element at a time (~8 us a point).
            cpu.scatter(np.array(xs), np.array(ys), color=ids[i], marker=THREAD_MARKERS[y % len(THREAD_MARKERS)],
                        s=24, zorder=2, rasterized=len(xs) > VECTOR_MAX)
        top = max(max(max(xs), max(ys)) for xs, ys in points.values())
        cpu.plot([0, top], [0, top], color=ONE_CPU_COLOUR, linestyle="--", linewidth=1)
        # Colours are the intervals' (as in the lanes), markers the threads'.
        keys = [Line2D([], [], color=ids[i], marker="o", linestyle="", label=id_label(i))
                for i in dict.fromkeys(i for i, _ in points)]
        keys += [Line2D([], [], color=ONE_CPU_COLOUR, marker=THREAD_MARKERS[y % len(THREAD_MARKERS)], linestyle="",
                        label=_lane_label(threads[y])) for y in sorted({y for _, y in points})]
        keys.append(Line2D([], [], color=ONE_CPU_COLOUR, linestyle="--", label="one CPU busy all along (CPU = wall)"))
        cpu.legend(handles=keys, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)
    else:
        cpu.text(0.5, 0.5, "no CPU intervals in this trace: record some with interval(id, cpu=True)",
                 ha="center", va="center", transform=cpu.transAxes)
    cpu.set_xlabel("wall time of the interval, ms")
    cpu.set_ylabel("CPU time (user + system), ms")
    cpu.set_title("CPU per interval against wall time: colour by interval, marker by thread", fontsize=10)
    cpu.grid(alpha=0.3)
    fig.suptitle(f"threadtime trace of pid {trace.pid}: {len(threads)} threads, {trace.events:,} events"
                 + (" (damaged: the intact part)" if trace.damaged else ""), fontsize=11)
    return fig


def trace_html_page(trace: Trace, svg: str) -> str:
    return _trace_html_page(trace, svg, _lanes(trace, MAX_EVENTS_PER_THREAD))


def _trace_html_page(trace: Trace, svg: str, lane_data: list[_Lane]) -> str:
    rows = []
    for th, lane in zip(trace, lane_data):
        cpu = cpu_in_intervals(lane.events)
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
            th.name, th.tid, th.state, f"{len(th.events):,}", f"{len(lane.spans):,}",
            f"{cpu / MS:,.3f}", f"{th.overwritten:,}")) + "</tr>")
    damaged = f"<p class=damaged>Damaged file; the intact part is shown: {html.escape(trace.damaged)}</p>" \
        if trace.damaged else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>threadtime trace of pid {trace.pid}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}
td:first-child {{ text-align: left; font-family: monospace; }}
figure svg {{ max-width: 100%; height: auto; }}
.damaged {{ font-weight: bold; }}
</style>
</head>
<body>
<h1>threadtime trace of pid {trace.pid}</h1>
<p>{html.escape(trace.path)}: format {html.escape(trace.format)}, clock {html.escape(trace.source)},
{len(trace.threads)} threads, {trace.events:,} events.</p>
{damaged}
<figure id="chart">
{svg}
</figure>
<table id="threads">
<thead><tr><th>thread</th><th>tid</th><th>state</th><th>events</th><th>intervals</th>
<th>CPU in CPU intervals, ms (nested ones counted once)</th><th>overwritten</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody>
</table>
</body>
</html>
"""


def write_trace(trace: Trace, outdir: Path, stem: str = "trace") -> tuple[Path, Path]:
    """Writes <stem>.png and <stem>.html of a trace into outdir."""
    lane_data = _lanes(trace, MAX_EVENTS_PER_THREAD)
    return _write_pair(_trace_figure(trace, lane_data), lambda svg: _trace_html_page(trace, svg, lane_data),
                       outdir, stem)


def is_trace(path: str) -> bool:
    """True if path starts with the trace signature (a JSON file cannot)."""
    if path == "-":
        return False
    with open(path, "rb") as f:
        return f.read(8) == b"TTRACE\x1a\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m threadtime.chart", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="a trace file, or the JSON of `threadtime bench --json` (- for stdin)")
    parser.add_argument("-o", "--outdir", default=".", help="where to write the files (default: .)")
    parser.add_argument("--stem", help="file name without extension (default: trace or bench)")
    args = parser.parse_args(argv)
    try:
        if is_trace(args.input):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TraceDamagedWarning)
                trace = read_trace(args.input)
            if trace.damaged:
                print(f"threadtime.chart: {args.input} is damaged; charting the intact part: {trace.damaged}",
                      file=sys.stderr)
            paths = write_trace(trace, Path(args.outdir), args.stem or "trace")
        else:
            paths = write(load(args.input), Path(args.outdir), args.stem or "bench")
    except ImportError as e:  # its text names the package and the command
        print(e, file=sys.stderr)
        return 1
    except (OSError, BenchFormatError) as e:
        # TraceError is an OSError whose text is the reader's.
        print(f"threadtime.chart: {args.input}: {e.strerror if isinstance(e, TraceError) else e}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
