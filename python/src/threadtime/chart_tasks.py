"""A chart of CPU per asyncio task, beside what the loop's thread clock says.

One row per task, three bars: the task's own CPU (``threadtime.asyncio``),
the CPU the loop's thread used while the task was alive (what a span timed
with the thread's clock would charge it), and the task's wall time::

    from threadtime.chart_tasks import TaskRow, write_tasks
    write_tasks([TaskRow("fetch", cpu_ns, thread_cpu_ns, wall_ns), ...], Path("out"))

gives ``out/tasks.png`` and ``out/tasks.html`` (the same figure as inline
SVG, and the numbers as a table). Drawing needs matplotlib
(``pip install 'threadtime[chart]'``).
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .chart import _matplotlib, _write_pair

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# (TaskRow field, legend label, colour), in drawing order within a row.
BARS = (
    ("cpu_ns", "the task's own CPU (threadtime.asyncio)", "#1f77b4"),
    ("thread_cpu_ns", "the loop thread's CPU while the task lived", "#ff7f0e"),
    ("wall_ns", "wall time while the task lived", "#bbbbbb"),
)
MS = 1e6


@dataclass(frozen=True)
class TaskRow:
    """One task's figures, ns."""

    name: str
    cpu_ns: int
    thread_cpu_ns: int
    wall_ns: int


def tasks_figure(rows: Sequence[TaskRow], title: str = "CPU per asyncio task, one loop thread") -> Figure:
    """Horizontal bars, one group per task (first row on top), in ms."""
    if not rows:
        raise ValueError("no tasks to draw")
    _matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 0.62 * len(rows) + 2))
    ax = fig.add_subplot()
    height = 0.8 / len(BARS)
    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        for j, (field, label, colour) in enumerate(BARS):
            ms = getattr(row, field) / MS
            bar_y = y + 0.4 - (j + 0.5) * height
            ax.barh(bar_y, ms, height=height, color=colour, label=label if i == 0 else None)
            ax.text(ms, bar_y, f" {ms:.1f}", va="center", fontsize=7)
    ax.set_yticks(range(len(rows)), [r.name for r in reversed(rows)])
    ax.set_xlabel("ms")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1 - 0.5 / len(rows)), ncol=len(BARS), fontsize=8,
              frameon=False)
    ax.margins(x=0.12)
    fig.tight_layout()
    return fig


def tasks_html_page(rows: Sequence[TaskRow], svg: str, title: str) -> str:
    head = "".join(f"<th>{html.escape(label)} (ms)</th>" for _, label, _ in BARS)
    body = "".join(
        f"<tr><td>{html.escape(r.name)}</td>" + "".join(f"<td>{getattr(r, f) / MS:.2f}</td>" for f, _, _ in BARS)
        + "</tr>" for r in rows)
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body><h1>{html.escape(title)}</h1>{svg}<table><tr><th>task</th>{head}</tr>{body}</table>"
            "</body></html>\n")


def write_tasks(rows: Sequence[TaskRow], outdir: Path, stem: str = "tasks",
                title: str = "CPU per asyncio task, one loop thread") -> tuple[Path, Path]:
    """Writes <stem>.png and <stem>.html into outdir; returns both paths."""
    return _write_pair(tasks_figure(rows, title), lambda svg: tasks_html_page(rows, svg, title), outdir, stem)
