"""Report section "tails vs b" (seed 001 Figs. 4/5, issue 12): simulated iteration mean and
p99 against the background utilisation b, one line per (trace, fabric, placement, routing)
of the `replay sweep` points that had a `background_b` axis, beside the measured runs of the
store (mean and p99 of each run's samples at the run's b, per benchmark, size and locality).

Sweep points carry their axis values in `sweep_points.params` (JSON); a point's routing is
its `fabric.routing` override, or "fabric default" when the sweep did not vary it. Seeds of
one point are pooled as the mean of their per-seed figures.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np

from tailcast.analysis.labels import size_label
from tailcast.analysis.plots import PlotFiles, _new, _save, line_style, outside_legend, point_style
from tailcast.analysis.report_blocks import Section, SectionBuilder

SIMULATED_QUERY = (
    "SELECT trace, fabric, params, seed, iteration_mean_us, iteration_p99_us "
    "FROM sweep_points WHERE params LIKE '%\"background_b\"%'"
)
MEASURED_QUERY = (
    "SELECT r.run_id, r.benchmark, r.msg_size_bytes, r.locality, "
    "(coalesce(r.b_before, r.b_after) + coalesce(r.b_after, r.b_before)) / 2 AS b, "
    "avg(s.latency_us) AS mean_us, quantile_cont(s.latency_us, 0.99) AS p99_us "
    "FROM samples s JOIN runs r USING (run_id) "
    "WHERE r.b_before IS NOT NULL OR r.b_after IS NOT NULL "
    "GROUP BY r.run_id, r.benchmark, r.msg_size_bytes, r.locality, r.b_before, r.b_after"
)

Line = tuple[str, str, str, str]  # trace, fabric, placement, routing


def simulated_lines(rows: Sequence[Mapping[str, Any]]) -> dict[Line, list[dict[str, float]]]:
    """Sweep points → per line, (b, mean, p99) sorted by b, seeds pooled."""
    cells: dict[Line, dict[float, list[tuple[float, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in rows:
        params = json.loads(r["params"])
        if r["iteration_mean_us"] is None or r["iteration_p99_us"] is None:
            continue
        line = (
            Path(str(r["trace"])).name,
            str(r["fabric"]),
            str(params.get("placement", "linear")),
            str(params.get("fabric.routing", "fabric default")),
        )
        pair = (float(r["iteration_mean_us"]), float(r["iteration_p99_us"]))
        cells[line][float(params["background_b"])].append(pair)
    return {
        line: [
            {"b": b, "mean_us": mean(p[0] for p in v), "p99_us": mean(p[1] for p in v)}
            for b, v in sorted(by_b.items())
        ]
        for line, by_b in sorted(cells.items())
    }


def tails_vs_b_plot(
    lines: Mapping[Line, Sequence[Mapping[str, float]]],
    measured: Sequence[Mapping[str, Any]],
    out_dir: Path,
    stem: str,
    title: str = "iteration p99 vs background utilisation b",
) -> PlotFiles:
    """p99 (with dots) and mean (thin dotted, same colour) per simulated line; measured runs
    p99 as points, one colour and marker per (benchmark, size, locality)."""
    fig, ax = _new(8.5, 5.0)
    for i, ((trace, fabric, placement, routing), pts) in enumerate(lines.items()):
        b = np.array([p["b"] for p in pts])
        label = f"sim {trace} · {fabric} · {placement} · {routing}"
        look = line_style(i)
        ax.plot(
            b, [p["p99_us"] for p in pts], marker="o", markersize=4, label=label + " p99", **look
        )
        ax.plot(b, [p["mean_us"] for p in pts], ":", color=look["color"], linewidth=1)
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for m in measured:
        key = (str(m["benchmark"]), size_label(m["msg_size_bytes"]), str(m["locality"]))
        groups[key].append(m)
    for j, ((bench, size, locality), runs) in enumerate(sorted(groups.items()), len(lines)):
        ax.plot(
            [float(m["b"]) for m in runs],
            [float(m["p99_us"]) for m in runs],
            linestyle="none",
            markersize=6,
            label=f"measured {bench} {size} · {locality} p99",
            **point_style(j),
        )
    ax.set_xlabel("background network utilisation b")
    ax.set_ylabel("latency per iteration (µs); dotted: simulated mean")
    ax.grid(alpha=0.3)
    outside_legend(fig, ax)
    ax.set_title(title)
    return _save(fig, out_dir, stem, title)


def tails_vs_b_section(b: SectionBuilder) -> Section:
    sec = Section("tails_vs_b", "Simulated tails vs background utilisation b (seed 001)")
    lines = simulated_lines(b.cat.rows(SIMULATED_QUERY))
    measured = b.cat.rows(MEASURED_QUERY)
    if not lines:
        sec.notes.append(
            "No sweep points with a background_b axis (`tailcast replay sweep` with "
            "axes.background_b = [...] on a fabric with groups, e.g. marconi100)."
        )
        return sec
    if not measured:
        sec.notes.append("No measured runs with b in the store: simulated lines only.")
    prov = b.prov(SIMULATED_QUERY + ";\n" + MEASURED_QUERY)
    table = [
        {
            "trace": line[0],
            "fabric": line[1],
            "placement": line[2],
            "routing": line[3],
            "b": p["b"],
            "mean_us": p["mean_us"],
            "p99_us": p["p99_us"],
            "p99_over_mean": p["p99_us"] / p["mean_us"] if p["mean_us"] else None,
        }
        for line, pts in lines.items()
        for p in pts
    ]
    sec.tables.append(b.table("Simulated mean and p99 per b", table, prov))
    if measured:
        title = "Measured runs with b (mean, p99 of their samples)"
        sec.tables.append(b.table(title, measured, prov))
    sec.figures.append(
        b.figure(tails_vs_b_plot(lines, measured, b.plot_dir, "tails_vs_b"), prov, wide=True)
    )
    return sec
