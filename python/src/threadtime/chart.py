"""Draws the JSON of ``threadtime bench --json`` as a PNG and an HTML page.

    python -m threadtime.chart bench.json -o out/     (or "-" for stdin)

writes ``out/bench.png`` and ``out/bench.html``: one panel per thread count,
one row per method, its p50, p99 and max per call on a log scale, and the
/proc baseline's p50 as a dashed line. The HTML page holds the same figure
as inline SVG (drawn by matplotlib) and the numbers as a table.
"""
from __future__ import annotations

import argparse
import html
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

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
    ("method", "method"), ("threads", "threads"), ("samples", "samples"),
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
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
        return parse(json.loads(text))
    except json.JSONDecodeError as e:
        raise BenchFormatError(f"not JSON: {e}") from e


def title(bench: Bench) -> str:
    m = bench.machine
    parts = [f"threadtime {m['threadtime']}" if "threadtime" in m else "threadtime",
             m.get("cpu"), m.get("kernel")]
    return " | ".join(str(p) for p in parts if p)


def figure(bench: Bench) -> Figure:
    """One panel per thread count; rows are methods; log-scale ns per call."""
    methods = bench.methods
    counts = bench.thread_counts
    fig = Figure(figsize=(4.2 * len(counts) + 2.5, 0.42 * len(methods) + 1.8), layout="constrained")
    axes = fig.subplots(1, len(counts), sharey=True, squeeze=False)[0]
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
    axes[0].set_yticks(list(ys), methods)
    axes[0].invert_yaxis()
    for label in axes[0].get_yticklabels():
        if label.get_text() == bench.baseline:
            label.set_fontweight("bold")
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


def write(bench: Bench, outdir: Path, stem: str = "bench") -> tuple[Path, Path]:
    """Writes <stem>.png and <stem>.html into outdir; returns both paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    fig = figure(bench)
    png = outdir / f"{stem}.png"
    fig.savefig(png, dpi=110)
    buf = io.StringIO()
    # Text stays text in the SVG, so the page can be searched and read aloud.
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    page = outdir / f"{stem}.html"
    page.write_text(html_page(bench, svg[svg.index("<svg"):]))
    return png, page


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m threadtime.chart", description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="output of `threadtime bench --json` (- for stdin)")
    parser.add_argument("-o", "--outdir", default=".", help="where to write the files (default: .)")
    parser.add_argument("--stem", default="bench", help="file name without extension (default: bench)")
    args = parser.parse_args(argv)
    try:
        bench = load(args.json)
    except (OSError, BenchFormatError) as e:
        print(f"threadtime.chart: {args.json}: {e}", file=sys.stderr)
        return 1
    for path in write(bench, Path(args.outdir), args.stem):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
