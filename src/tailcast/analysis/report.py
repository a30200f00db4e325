"""`tailcast report`: one static HTML page from whatever the store holds.

Every table and figure carries its provenance — the SQL it was computed from and the Parquet
files behind the tables that query reads — so any number on the page can be recomputed.
Sections whose tables are empty say so instead of failing. Figures are written as PNG + SVG
under DIR/plots/ and, by default, also embedded as data URIs so index.html stands alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from tailcast import __version__
from tailcast.analysis import plots
from tailcast.analysis.bimodality import bimodality
from tailcast.analysis.compare import compare_samples
from tailcast.analysis.correlation import correlate
from tailcast.analysis.fitting import fit_distributions
from tailcast.analysis.labels import REPLAYS_QUERY, SourceLabels, labelled_replays, size_label
from tailcast.analysis.report_blocks import (
    FigureBlock,
    Provenance,
    Section,
)
from tailcast.analysis.report_blocks import SectionBuilder as _Builder
from tailcast.analysis.report_photonic_switch import photonic_sections
from tailcast.analysis.report_tails_vs_b import tails_vs_b_section
from tailcast.analysis.sources import resolve
from tailcast.analysis.tails import TAIL_METRIC_COLUMNS, clean, group_values, tail_metrics
from tailcast.errors import TailcastError
from tailcast.store import Catalog, ResultsDir
from tailcast.store.parquet_io import atomic_path

MEASURED_QUERY = (
    "SELECT r.benchmark, r.msg_size_bytes, r.locality, s.run_id, s.iteration, s.latency_us, "
    "(coalesce(r.b_before, r.b_after) + coalesce(r.b_after, r.b_before)) / 2 AS b "
    "FROM samples s JOIN runs r USING (run_id)"
)
OSU_QUERY = (
    "SELECT r.benchmark, o.size_bytes, o.avg_latency_us, o.p50_latency_us, o.p90_latency_us, "
    "o.p99_latency_us, o.max_latency_us, o.iterations, o.run_id FROM osu_results o "
    "LEFT JOIN runs r USING (run_id) ORDER BY r.benchmark, o.size_bytes LIMIT 500"
)
UTIL_QUERY = "SELECT taken_at, b, b_simple, n_t, n_c FROM utilisation ORDER BY taken_at"
# Every replay's simulated latencies in one query each (not one per replay: each scans all
# the table's files): per iteration, or per operation for replays without iterations.
REPLAY_ITERATIONS_QUERY = (
    "SELECT replay_id, list(latency_us ORDER BY iteration) AS latency_us "
    "FROM replay_iterations GROUP BY replay_id"
)
REPLAY_OPS_QUERY = (
    "SELECT replay_id, list((sim_end_ns - sim_start_ns) / 1000.0 ORDER BY rank, seq) "
    "AS latency_us FROM replay_ops "
    "WHERE replay_id NOT IN (SELECT replay_id FROM replay_iterations) GROUP BY replay_id"
)
GROUP_COLUMNS = ("benchmark", "msg_size_bytes", "locality")
MAX_GROUP_PLOTS = 12


@dataclass
class ReportResult:
    html: Path
    sections: list[Section]

    @property
    def figures(self) -> list[FigureBlock]:
        return [f for s in self.sections for f in s.figures]


def _store_section(b: _Builder) -> Section:
    sec = Section("store", "Store contents")
    rows = [
        {"table": i.name, "files": len(i.files), "rows": i.rows, "unreadable": len(i.problems)}
        for i in b.cat.tables.values()
    ]
    prov = Provenance(None, [str(b.cat.results.root)])
    sec.tables.append(b.table("Tables in the results directory", rows, prov))
    sec.notes += [f"unreadable file skipped: {p}" for p in b.cat.problems]
    return sec


def _label(key: dict[str, Any]) -> str:
    parts = []
    for k, v in key.items():
        parts.append(size_label(v) if k == "msg_size_bytes" else f"{v}")
    return " · ".join(parts) or "all"


def _measured_sections(b: _Builder, fit_groups: int, fit_time_limit_s: float) -> list[Section]:
    sec = Section("measured", "Measured latency tails (runs × samples)")
    table = b.cat.sql(MEASURED_QUERY)
    prov = b.prov(MEASURED_QUERY)
    if table.num_rows == 0:
        sec.notes.append("No measured samples in the store (runs ⋈ samples is empty).")
        return [sec]
    groups = [(k, v) for k, v in group_values(table, "latency_us", GROUP_COLUMNS) if v.size]
    rows = [{**k, **tail_metrics(v).as_dict()} for k, v in groups]
    cols = [*GROUP_COLUMNS, *TAIL_METRIC_COLUMNS]
    sec.tables.append(
        b.table("Tail metrics per group (latency in µs)", rows, prov, cols, latency=True)
    )
    bimo = []
    for k, v in groups:
        if v.size >= 4 and np.ptp(v) > 0:
            bimo.append(
                {
                    **k,
                    **{
                        x: y
                        for x, y in bimodality(v).as_dict().items()
                        if x not in ("means_2", "weights_2")
                    },
                }
            )
    sec.tables.append(b.table("Bimodality per group", bimo, prov))
    largest_key, largest = max(groups, key=lambda kv: kv[1].size)
    fig1 = plots.frequency_plot(
        {_label(largest_key): largest},
        b.plot_dir,
        "fig1_largest_group",
        f"Frequency distribution, {_label(largest_key)}",
    )
    sec.figures.append(b.figure(fig1, prov))
    # Fig. 3: per locality, and Fig. 5: per b bucket, for each (benchmark, size)
    pair_groups = group_values(table, "latency_us", GROUP_COLUMNS[:2])
    pair_groups.sort(key=lambda kv: -kv[1].size)
    for i, (key, _) in enumerate(pair_groups[:MAX_GROUP_PLOTS]):
        mask = np.ones(table.num_rows, dtype=bool)
        for col, val in key.items():
            mask &= np.array([x == val for x in table.column(col).to_pylist()])
        sub = table.filter(mask)
        by_loc = {str(k["locality"]): v for k, v in group_values(sub, "latency_us", ["locality"])}
        f3 = plots.frequency_plot(
            by_loc,
            b.plot_dir,
            f"fig3_locality_{i}",
            f"Per locality: {_label(key)}",
            legend_title="locality",
        )
        sec.figures.append(b.figure(f3, prov))
        run_b = {r["run_id"]: r["b"] for r in sub.select(["run_id", "b"]).to_pylist()}
        distinct = sorted({v for v in run_b.values() if v is not None})
        if len(distinct) >= 2:
            edges = np.quantile(distinct, np.linspace(0, 1, min(3, len(distinct)) + 1))
            buckets: dict[str, list[float]] = {}
            for rid, lat in zip(
                sub.column("run_id").to_pylist(), sub.column("latency_us").to_pylist(), strict=True
            ):
                bv = run_b[rid]
                if bv is None or lat is None:
                    continue
                j = min(int(np.searchsorted(edges, bv, side="right")) - 1, len(edges) - 2)
                buckets.setdefault(f"b ∈ [{edges[j]:.2f}, {edges[j + 1]:.2f}]", []).append(lat)
            f5 = plots.frequency_plot(
                dict(sorted(buckets.items())),
                b.plot_dir,
                f"fig5_b_{i}",
                f"Per background utilisation b: {_label(key)}",
                legend_title="b bucket (run mean of before/after)",
            )
            sec.figures.append(b.figure(f5, prov))
    ccdf = plots.ccdf_plot(
        {_label(k): v for k, v in pair_groups[:MAX_GROUP_PLOTS]},
        b.plot_dir,
        "ccdf_measured",
        "CCDF of measured latency",
    )
    sec.figures.append(b.figure(ccdf, prov))
    fit_sec = Section("fits", "Distribution fits (all suitable scipy.stats families)")
    for k, v in sorted(groups, key=lambda kv: -kv[1].size)[:fit_groups]:
        try:
            rep = fit_distributions(v, time_limit_s=fit_time_limit_s)
        except TailcastError as err:
            fit_sec.notes.append(f"{_label(k)}: not fitted ({err})")
            continue
        top = [
            {
                "distribution": r.distribution,
                "rank_sse": r.rank_sse,
                "rank_aic": r.rank_aic,
                "rank_bic": r.rank_bic,
                "rank_ks": r.rank_ks,
                "sse": r.sse,
                "aic": r.aic,
                "ks_statistic": r.ks_statistic,
                "params": ", ".join(f"{n}={p:.4g}" for n, p in r.params.items()),
            }
            for r in rep.top(8)
        ]
        failed = sum(r.status != "ok" for r in rep.results)
        fit_sec.notes.append(
            f"{_label(k)}: {len(rep.results)} families, {failed} failed or timed out "
            f"(limit {rep.time_limit_s} s each); SSE on {rep.bins} bins, noise sd "
            f"{rep.sse_noise_sd:.3g} (fits within it are ordered by AIC)."
        )
        fit_sec.tables.append(b.table(f"Top fits: {_label(k)}", top, prov))
    if not fit_groups:
        fit_sec.notes.append("Fitting disabled (--fit-groups 0).")
    return [sec, fit_sec]


def _correlation_section(b: _Builder) -> Section:
    sec = Section("correlation", "Background utilisation b vs latency (seed 001 Fig. 4)")
    res = correlate(b.cat)
    prov = Provenance(res.query, [str(p) for p in res.files])
    if not res.runs:
        sec.notes.append("No runs with both samples and b in the store.")
        return sec
    if res.skipped_runs:
        sec.notes.append(f"{res.skipped_runs} runs left out (no b, no samples, or b not accepted)")
    sec.tables.append(
        b.table(
            "Pearson r and Spearman ρ per (benchmark, size)",
            [g.as_dict() for g in res.groups],
            prov,
        )
    )
    sec.figures.append(
        b.figure(
            plots.b_scatter_plot(res.runs, res.groups, b.plot_dir, "fig4_b_vs_latency"),
            prov,
            wide=True,
        )
    )
    return sec


def _simple_sections(b: _Builder) -> list[Section]:
    osu = Section("osu", "OSU summaries (osu_results)")
    rows = b.cat.rows(OSU_QUERY)
    if rows:
        osu.tables.append(b.table("OSU per-size results (µs)", rows, b.prov(OSU_QUERY)))
    else:
        osu.notes.append("No OSU summaries in the store.")
    util = Section("utilisation", "Background utilisation snapshots")
    urows = b.cat.rows(UTIL_QUERY)
    if urows:
        prov = b.prov(UTIL_QUERY)
        bs = [r["b"] for r in urows if r["b"] is not None]
        util.tables.append(
            b.table(
                "Summary of b (eq. 2)",
                [
                    {
                        "snapshots": len(urows),
                        "b_min": min(bs, default=None),
                        "b_mean": sum(bs) / len(bs) if bs else None,
                        "b_max": max(bs, default=None),
                    }
                ],
                prov,
            )
        )
        fig = plots.b_timeseries_plot(
            [r["taken_at"] for r in urows if r["b"] is not None],
            bs,
            b.plot_dir,
            "utilisation_b",
            "b over time",
        )
        util.figures.append(b.figure(fig, prov))
    else:
        util.notes.append("No utilisation snapshots in the store.")
    return [osu, util]


def _replay_latencies(b: _Builder) -> tuple[dict[str, np.ndarray], Provenance]:
    """Simulated latencies (µs) by replay id: per iteration, else per operation."""
    values = {}
    for query in (REPLAY_ITERATIONS_QUERY, REPLAY_OPS_QUERY):
        for row in b.cat.sql(query).to_pylist():
            values[row["replay_id"]] = clean(np.asarray(row["latency_us"], dtype=np.float64))
    prov = b.prov(f"{REPLAY_ITERATIONS_QUERY};\n{REPLAY_OPS_QUERY}")
    return values, prov


def _replay_sections(b: _Builder, pairs: Sequence[tuple[str, str]]) -> list[Section]:
    sec = Section("replays", "Simulated latency (replays)")
    replays = labelled_replays(b.cat)
    if replays:
        rows = [
            {"replay": label, "total_time_ns": r["total_time_ns"], "created_at": r["created_at"]}
            for r, label in replays
        ]
        sec.tables.append(b.table("Replays", rows, b.prov(REPLAYS_QUERY)))
    else:
        sec.notes.append("No replays in the store.")
    latencies, prov = _replay_latencies(b)
    curves: dict[str, np.ndarray] = {}
    tail_rows = []
    for r, label in replays:
        values = latencies.get(r["replay_id"])
        if values is None:
            sec.notes.append(f"replay {label}: no replay_iterations or replay_ops rows")
        elif values.size:
            curves[label] = values
            tail_rows.append({"replay": label, **tail_metrics(values).as_dict()})
    if tail_rows:
        sec.tables.append(
            b.table("Tail metrics per replay (latency in µs)", tail_rows, prov, latency=True)
        )
        shown = dict(list(curves.items())[:MAX_GROUP_PLOTS])
        fig = plots.ccdf_plot(
            shown,
            b.plot_dir,
            "ccdf_replays",
            f"CCDF of simulated latency ({len(shown)} of {len(curves)} replays, oldest first)",
            "simulated latency per iteration, or per operation without iterations (µs)",
        )
        sec.figures.append(b.figure(fig, prov))
    cmp_sec = Section("compare", "Measured vs simulated")
    if not pairs:
        cmp_sec.notes.append("No measured/simulated pairs given (report --compare).")
    name = SourceLabels(b.cat)
    for i, (measured, simulated) in enumerate(pairs):
        m_label, s_label = name(measured), name(simulated)
        try:
            m, s = resolve(measured, b.cat), resolve(simulated, b.cat)
            res = compare_samples(
                group_values(m.table, "latency_us")[0][1], group_values(s.table, "latency_us")[0][1]
            )
        except TailcastError as err:
            cmp_sec.notes.append(f"{m_label} vs {s_label}: {err}")
            continue
        prov = Provenance(
            f"measured: {m.query or m.spec}\nsimulated: {s.query or s.spec}",
            [str(p) for p in m.files + s.files],
        )
        row = {
            "measured": m_label,
            "simulated": s_label,
            "ks": res.ks_statistic,
            "ks_p": res.ks_pvalue,
            "wasserstein_us": res.wasserstein,
        }
        for pct_name, pct in res.percentiles.items():
            row[f"rel_err_{pct_name}"] = pct["rel_error"]
        cmp_sec.tables.append(b.table(f"Comparison {i + 1}", [row], prov))
        title = f"QQ {i + 1}: measured {m_label}\nvs simulated {s_label}"
        fig = plots.qq_plot(res, b.plot_dir, f"qq_{i}", title)
        cmp_sec.figures.append(b.figure(fig, prov))
    return [sec, cmp_sec]


REPORT_STEPS = 5  # the parts build_report reports progress for


def build_report(
    out_dir: Path,
    results: ResultsDir | None = None,
    embed: bool = True,
    fit_groups: int = 1,
    fit_time_limit_s: float = 3.0,
    compare: Sequence[tuple[str, str]] = (),
    progress: Callable[[float], None] | None = None,
) -> ReportResult:
    """Writes out_dir/index.html (+ plots/) from the store; returns what it wrote.

    `compare` holds (measured SOURCE, simulated SOURCE) pairs, e.g. a SQL query over samples
    and a replay id. `progress` is called once per part (REPORT_STEPS in all)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    step = progress or (lambda n: None)
    with Catalog(results) as cat:
        b = _Builder(cat, out_dir, embed)
        sections = [_store_section(b)]
        step(1)
        sections += _measured_sections(b, fit_groups, fit_time_limit_s)
        step(1)
        sections.append(_correlation_section(b))
        step(1)
        sections += _simple_sections(b)
        step(1)
        sections += _replay_sections(b, compare)
        sections.append(tails_vs_b_section(b))
        step(1)
        sections += photonic_sections(b)
        root = str(cat.results.root)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tailcast.analysis", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    html = env.get_template("report.html.j2").render(
        sections=sections,
        version=__version__,
        results_dir=root,
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    path = out_dir / "index.html"
    with atomic_path(path) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return ReportResult(path, sections)
