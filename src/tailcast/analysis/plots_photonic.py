"""Figures of the photonic switch papers redrawn from tailcast's replays: seed 000's
normalised communication time / energy per policy and workload (Figs. 5, 6, 10, 11) and its
per-port timeline (Fig. 7); seed 003's delays, blocking and throughput against normalised
offered load (Figs. 14–16, 18–20)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tailcast.analysis.plots import (
    PlotFiles,
    _new,
    _save,
    line_style,
    outside_legend,
    plain_log_labels,
)

# Seed 000 §IV-C: priority policies in reds, round-robin ones in blues, RND in grey.
POLICY_COLOURS = {
    "fifo": "#fcae91",
    "lru": "#fb6a4a",
    "lfu": "#cb181d",
    "rnd": "#969696",
    "rr": "#9ecae1",
    "arr": "#4292c6",
    "mrr": "#08519c",
}


def policy_bars(
    values: Mapping[str, Mapping[str, float]],
    out_dir: Path,
    stem: str,
    title: str,
    ylabel: str,
) -> PlotFiles:
    """One group of bars per workload, one bar per policy (values normalised to the best)."""
    workloads = list(values)
    policies = [p for p in POLICY_COLOURS if any(p in values[w] for w in workloads)]
    fig, ax = _new(10.0, 4.2)
    width = 0.8 / max(1, len(policies))
    x = np.arange(len(workloads))
    for i, p in enumerate(policies):
        heights = [values[w].get(p, np.nan) for w in workloads]
        ax.bar(
            x + (i - (len(policies) - 1) / 2) * width,
            heights,
            width,
            label=p.upper(),
            color=POLICY_COLOURS[p],
        )
    ax.set_xticks(x, workloads, rotation=20)
    ax.axhline(1.0, color="black", linewidth=0.6)
    finite = [v for w in workloads for v in values[w].values() if np.isfinite(v)]
    ax.set_ylim(0.95, max(finite, default=1.0) * 1.03 + 0.01)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    outside_legend(fig, ax, "arbitration policy")
    ax.grid(alpha=0.3, axis="y")
    return _save(fig, out_dir, stem, title)


def port_timeline(
    intervals: Mapping[int, Sequence[tuple[float, float, bool]]],
    out_dir: Path,
    stem: str,
    title: str,
) -> PlotFiles:
    """Per port, (start µs, end µs, blocked) intervals: grey transmitting, red blocked."""
    ports = sorted(intervals)
    fig, ax = _new(10.0, max(2.5, 0.28 * len(ports) + 1))
    for row, port in enumerate(ports):
        for blocked in (True, False):
            spans = [(a, b - a) for a, b, bl in intervals[port] if bl == blocked and b > a]
            if spans:
                ax.broken_barh(spans, (row - 0.4, 0.8), color="#d62728" if blocked else "#7f7f7f")
    ax.set_yticks(range(len(ports)), [str(p) for p in ports])
    ax.invert_yaxis()
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("port")
    ax.set_title(title)
    return _save(fig, out_dir, stem, title)


def load_curves(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    out_dir: Path,
    stem: str,
    title: str,
    ylabel: str,
    log_y: bool = False,
) -> PlotFiles:
    """One line per label: y against normalised offered load."""
    fig, ax = _new()
    for i, (label, (x, y)) in enumerate(curves.items()):
        ax.plot(x, y, marker="o", markersize=3, linewidth=1.3, label=label, **line_style(i))
    if log_y:
        ax.set_yscale("log")
        plain_log_labels(ax.yaxis)
    ax.set_xlabel("normalised offered load (Eq. 8)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    outside_legend(fig, ax)
    ax.grid(alpha=0.3, which="both")
    return _save(fig, out_dir, stem, title)
