"""Figures in the style of seed 001, each written as PNG and SVG.

- frequency distributions of per-iteration latency, one line per locality (Fig. 3) or per b
  bucket (Fig. 5), or a single histogram with median and p85 marked (Fig. 1);
- b against mean latency per message size with least-squares lines (Fig. 4);
- QQ plot of measured against simulated latency; CCDF on log-log axes (tail shape);
- b over time from the utilisation snapshots.

Matplotlib's object API on a bare Figure (Agg for PNG): no pyplot global state, so plotting
is safe in any process and never needs a display.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import matplotlib
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatterSciNotation, MaxNLocator

from tailcast.analysis.compare import Comparison
from tailcast.analysis.correlation import Correlation, RunSummary
from tailcast.analysis.labels import size_label
from tailcast.analysis.tails import clean
from tailcast.store.atomic import atomic_path

LATENCY_LABEL = "latency per iteration (µs)"
TAIL_CLIP_PERCENTILE = 99.9  # x-axis of frequency plots ends here; the rest is counted


@dataclass(frozen=True)
class PlotFiles:
    png: Path
    svg: Path
    title: str


def _save(fig: Figure, out_dir: Path, stem: str, title: str) -> PlotFiles:
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = out_dir / f"{stem}.png", out_dir / f"{stem}.svg"
    # Each file whole or not at all: a report interrupted mid-way never leaves a torn plot
    # beside an earlier report's index.html that shows it. The constrained layout (legends
    # outside the axes included) fits the figure, so no bbox_inches="tight" pass; and it
    # runs once, for the PNG: the SVG reuses its positions (figure fractions, whatever
    # the dpi). Both cut the report's plotting CPU by ~25 %.
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    fig.set_layout_engine("none")
    # text stays text in the SVG (searchable, selectable) instead of glyph outlines
    with matplotlib.rc_context({"svg.fonttype": "none"}), atomic_path(svg) as tmp:
        fig.savefig(tmp, format="svg", metadata={"Date": None})
    return PlotFiles(png, svg, title)


def _new(width: float = 7.5, height: float = 4.5) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


# Series of one chart never share a look: ten colours, then the same ten dashed, dash-dotted
# and dotted (markers likewise for point series).
COLOURS = tuple(f"C{i}" for i in range(10))
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def line_style(i: int) -> dict[str, Any]:
    """The i-th series' colour and line style: distinct for i < 40."""
    return {"color": COLOURS[i % 10], "linestyle": LINE_STYLES[(i // 10) % len(LINE_STYLES)]}


def point_style(i: int) -> dict[str, Any]:
    """The i-th point series' colour and marker: distinct for i < 80."""
    return {"color": COLOURS[i % 10], "marker": MARKERS[(i // 10) % len(MARKERS)]}


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class _PlainLogFormatter(LogFormatterSciNotation):
    """Log-axis labels as plain text (0.001 … 10000, else 10⁵ or 2×10⁵) on the ticks
    matplotlib's own formatter labels: its mathtext labels are parsed at every draw, a fifth
    of a log-log plot's drawing time."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        text = super().__call__(x, pos)
        if not text or x <= 0:
            return str(text)
        exponent = math.floor(math.log10(x) + 1e-9)
        if -3 <= exponent <= 4:
            return f"{x:g}"
        mantissa = round(x / 10.0**exponent, 1)
        power = "10" + str(exponent).translate(_SUPERSCRIPT)
        return power if mantissa == 1 else f"{mantissa:g}×{power}"


def plain_log_labels(*axes: Axis) -> None:
    """Plain-text tick labels on log-scaled axes (after set_xscale/set_yscale("log"))."""
    for axis in axes:
        axis.set_major_formatter(_PlainLogFormatter())
        axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False))


def plain_latency_ticks(ax: Axes, which: Literal["x", "y", "both"]) -> None:
    """Plain µs on a linear latency axis (no "1e6" multiplier in a corner), on few enough
    ticks that 7-digit labels never run into each other."""
    axes = {"x": (ax.xaxis,), "y": (ax.yaxis,), "both": (ax.xaxis, ax.yaxis)}[which]
    for axis in axes:
        axis.set_major_locator(MaxNLocator(nbins=6))
    ax.ticklabel_format(axis=which, style="plain", useOffset=False)


_LEGEND: dict[str, Any] = {"fontsize": 8, "title_fontsize": 8}
SHORT_LABEL = 30  # characters: a legend of longer labels goes below the axes
CHAR_WIDTH_IN = 0.055  # a character of the legend's 8 pt font, about


def outside_legend(
    fig: Figure, ax: Axes, title: str | None = None, below: bool | None = None
) -> None:
    """The axes' legend outside the axes, where it covers no data: right of them (the
    figure made wider by the legend's width) when its labels are short, else (or when
    `below`) below them in columns, the figure made taller by its rows."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    longest = max(len(label) for label in labels)
    width, height = fig.get_size_inches()
    if not below and (below is not None or longest <= SHORT_LABEL):
        chars = max(longest + 4, len(title or ""))
        fig.set_size_inches(width + 0.3 + CHAR_WIDTH_IN * chars, height)
        fig.legend(handles, labels, loc="outside right upper", **_LEGEND, title=title)
        return
    ncols = 1 if longest > 55 else 2
    rows = -(-len(labels) // ncols)
    fig.set_size_inches(width, height + 0.2 * rows + (0.2 if title else 0))
    fig.legend(handles, labels, loc="outside lower center", ncols=ncols, **_LEGEND, title=title)


def frequency_plot(
    groups: Mapping[str, Sequence[float] | npt.ArrayLike],
    out_dir: Path,
    stem: str,
    title: str,
    legend_title: str = "",
    xlabel: str = LATENCY_LABEL,
) -> PlotFiles:
    """Counts per bin, one step line per group, on common bins (seed 001 Figs. 1, 3, 5).
    With one group, the median and p85 are marked as in Fig. 1."""
    data = {k: clean(v) for k, v in groups.items() if clean(v).size}
    fig, ax = _new()
    if not data:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        return _save(fig, out_dir, stem, title)
    lo = min(float(v.min()) for v in data.values())
    hi = max(float(np.percentile(v, TAIL_CLIP_PERCENTILE)) for v in data.values())
    if hi <= lo:
        hi = lo + 1.0
    bins = np.linspace(lo, hi, 80)
    beyond = 0
    for i, (name, values) in enumerate(data.items()):
        counts, edges = np.histogram(values, bins=bins)
        beyond += int(np.sum(values > hi))
        ax.stairs(counts, edges, label=f"{name} (n={values.size})", linewidth=1.6, **line_style(i))
    if len(data) == 1:
        values = next(iter(data.values()))
        p50, p85 = np.percentile(values, [50, 85])
        ax.axvline(p50, color="0.3", linestyle="--", label=f"median {p50:.3g} µs")
        ax.axvline(p85, color="tab:red", linestyle=":", label=f"p85 {p85:.3g} µs")
    plain_latency_ticks(ax, "x")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("frequency (iterations per bin)")
    ax.set_title(title)
    if beyond:
        ax.annotate(
            f"{beyond} value{'s' * (beyond > 1)} beyond p{TAIL_CLIP_PERCENTILE:g} not shown",
            xy=(0.99, 0.02),
            xycoords="axes fraction",
            ha="right",
            fontsize=8,
            color="0.35",
        )
    outside_legend(fig, ax, legend_title or None)
    ax.grid(alpha=0.3)
    return _save(fig, out_dir, stem, title)


def ccdf_plot(
    groups: Mapping[str, Sequence[float] | npt.ArrayLike],
    out_dir: Path,
    stem: str,
    title: str,
    xlabel: str = LATENCY_LABEL,
) -> PlotFiles:
    """Empirical P(X > x) on log-log axes: a straight tail means a power law (Hill's α)."""
    fig, ax = _new()
    drawn = 0
    for name, raw in groups.items():
        values = np.sort(clean(raw))
        values = values[values > 0]
        if values.size < 2:
            continue
        surv = 1.0 - np.arange(1, values.size + 1) / values.size
        keep = surv > 0
        label = f"{name} (n={values.size})"
        ax.loglog(values[keep], surv[keep], label=label, linewidth=1.4, **line_style(drawn))
        drawn += 1
    plain_log_labels(ax.xaxis, ax.yaxis)
    if not drawn:
        ax.text(0.5, 0.5, "no positive data", ha="center", va="center", transform=ax.transAxes)
    else:
        outside_legend(fig, ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("P(latency > x)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    return _save(fig, out_dir, stem, title)


def qq_plot(
    comparison: Comparison,
    out_dir: Path,
    stem: str,
    title: str,
    unit: str = "µs",
) -> PlotFiles:
    """Simulated quantiles against measured ones; the diagonal is perfect agreement."""
    fig, ax = _new(6.0, 5.5)
    m = np.asarray(comparison.qq_measured)
    s = np.asarray(comparison.qq_simulated)
    ax.plot(m, s, "o", markersize=3, label="quantiles 0.5 %…99.9 %")
    lo, hi = float(min(m.min(), s.min())), float(max(m.max(), s.max()))
    ax.plot([lo, hi], [lo, hi], color="0.4", linestyle="--", label="y = x")
    plain_latency_ticks(ax, "both")
    ax.set_xlabel(f"measured latency ({unit})")
    ax.set_ylabel(f"simulated latency ({unit})")
    ax.set_title(textwrap.fill(title, 70), fontsize=9)  # titles name both sides: long
    stats = f"KS D = {comparison.ks_statistic:.3f}, W₁ = {comparison.wasserstein:.3g} {unit}"
    outside_legend(fig, ax, stats, below=True)
    ax.grid(alpha=0.3)
    return _save(fig, out_dir, stem, title)


def b_scatter_plot(
    runs: Sequence[RunSummary],
    correlations: Sequence[Correlation],
    out_dir: Path,
    stem: str,
    title: str = "background utilisation b vs mean latency",
) -> PlotFiles:
    """Seed 001 Fig. 4: one panel per benchmark, one colour per size, least-squares lines,
    r and ρ in the legend."""
    benches = sorted({str(r.benchmark) for r in runs}) or ["(no runs)"]
    fig = Figure(figsize=(6.5 * len(benches), 4.5), layout="constrained")
    axes = fig.subplots(1, len(benches), squeeze=False)[0]
    by_key = {(str(c.benchmark), c.msg_size_bytes): c for c in correlations}
    for ax, bench in zip(axes, benches, strict=True):
        mine = [r for r in runs if str(r.benchmark) == bench]
        sizes = sorted({r.msg_size_bytes for r in mine}, key=lambda s: -1 if s is None else s)
        for i, size in enumerate(sizes):
            pts = [r for r in mine if r.msg_size_bytes == size]
            b = np.array([r.b for r in pts])
            y = np.array([r.mean_latency_us for r in pts])
            corr = by_key.get((bench, size))
            label = size_label(size)
            if corr and corr.pearson_r_mean is not None and corr.spearman_rho_mean is not None:
                label += f": r={corr.pearson_r_mean:.2f}, ρ={corr.spearman_rho_mean:.2f}"
            look = point_style(i)
            ax.plot(b, y, linestyle="none", markersize=4, label=label, **look)
            if corr and corr.slope_mean_us_per_b is not None and corr.intercept_mean_us is not None:
                xs = np.linspace(float(b.min()), float(b.max()), 50)  # curved on log y
                ys = corr.slope_mean_us_per_b * xs + corr.intercept_mean_us
                ax.plot(xs, ys, "-", color=look["color"], linewidth=1)
        ax.set_title(bench)
        ax.set_xlabel("background network utilisation b")
        ax.set_ylabel("mean latency per run (µs)")
        if runs and max(r.mean_latency_us for r in runs) > 20 * min(
            max(r.mean_latency_us, 1e-9) for r in runs
        ):
            ax.set_yscale("log")
            plain_log_labels(ax.yaxis)
        if sizes:  # each panel's own r and ρ: its legend beside it, off its points
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    return _save(fig, out_dir, stem, title)


def b_timeseries_plot(
    taken_at: Sequence[datetime], b: Sequence[float], out_dir: Path, stem: str, title: str
) -> PlotFiles:
    """b (seed 001 eq. 2) of every utilisation snapshot over time."""
    fig, ax = _new(7.5, 3.5)
    if len(b):
        # naive UTC datetime64: matplotlib's own date converter handles these
        times = np.array(
            [(x.astimezone(UTC) if x.tzinfo else x).replace(tzinfo=None) for x in taken_at],
            dtype="datetime64[us]",
        )
        ax.plot(times, np.asarray(b, dtype=float), "o-", markersize=3, linewidth=1)
    else:
        ax.text(0.5, 0.5, "no snapshots", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("snapshot time (UTC)")
    ax.set_ylabel("b (eq. 2)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    return _save(fig, out_dir, stem, title)
