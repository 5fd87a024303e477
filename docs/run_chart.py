#!/usr/bin/env python3
"""Draws what Perfetto shows for `threadtime run --format chrome` output:
one track per thread, its life as a bar and its CPU rate (%) as a line
inside the track. ui.perfetto.dev was not reachable where docs/run.md was
written, so its picture comes from this script (matplotlib).

Usage: run_chart.py TRACE.json OUT.png [TOP]  (TOP threads by CPU, default 12)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

trace, out = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 12
events = json.load(open(trace))["traceEvents"]
slices = {(e["pid"], e["tid"]): e for e in events if e["ph"] == "X"}
rates = {}
for e in events:
    if e["ph"] == "C":
        rates.setdefault((e["pid"], e["tid"]), []).append((e["ts"] / 1e3, e["args"]["cpu_percent"]))
tracks = sorted(slices, key=lambda k: -slices[k]["args"]["total_ms"])[:top]
fig, ax = plt.subplots(figsize=(10, 0.45 * len(tracks) + 1.2))
for row, key in enumerate(tracks):
    s = slices[key]
    y = len(tracks) - 1 - row
    ax.broken_barh([(s["ts"] / 1e3, s["dur"] / 1e3)], (y + 0.05, 0.9), color="#cfe2f3", edgecolor="#6fa8dc")
    pts = sorted(rates.get(key, []))
    if pts:
        xs, ys = zip(*pts)
        ax.step(xs, [y + 0.05 + 0.9 * min(v, 100) / 100 for v in ys], where="post", color="#cc4125", lw=1.2)
    ax.text(s["ts"] / 1e3, y + 0.5, f' {s["name"]} ({key[1]}): {s["args"]["total_ms"]:.0f} ms CPU',
            va="center", fontsize=8)
ax.set_yticks([])
ax.set_xlabel("ms since start (bar: the thread's life; red: its CPU %, 0-100 within the track)")
ax.set_title("threadtime run --format chrome, as Perfetto shows it: one track per thread")
fig.tight_layout()
fig.savefig(out, dpi=110)
