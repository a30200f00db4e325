"""`tailcast quickstart`: the whole pipeline on bundled real data, offline, in about a minute.

The bundled data (src/tailcast/data/quickstart, recorded by scripts/record_quickstart_data.py
on the real local Slurm + Open MPI) is a small seed-001 campaign — bcast, reduce and alltoall
at 4 B, 1 KiB and 32 KiB, same-group and different-islands placements, under 0–3 background
MPI jobs — and a 4-rank halo + allreduce application captured with tailcast's PMPI tracer.
The quickstart loads it into the store, replays the captured trace on every bundled fabric,
simulates each measured benchmark with an OSU-pattern trace, compares measured and simulated
tails, correlates latency with b, predicts a tail, and writes the HTML report.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tailcast.analysis.compare import compare_samples
from tailcast.analysis.correlation import correlate
from tailcast.analysis.prediction import load_run_stats, predict_tail
from tailcast.analysis.report import build_report
from tailcast.analysis.sources import resolve
from tailcast.errors import TailcastError
from tailcast.replay.fabric import bundled_fabrics, load_fabric
from tailcast.replay.run import ReplayOptions, replay_trace
from tailcast.store import Catalog, ResultsDir
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

BUNDLED_TABLES = ("runs", "samples", "utilisation", "snapshots")
SIMULATION_FABRIC = "crossbar"


def bundled_dir() -> Path:
    return Path(str(resources.files("tailcast") / "data" / "quickstart"))


@dataclass
class QuickstartState:
    """What the steps hand to each other."""

    results: ResultsDir
    report_dir: Path
    scratch: Path
    # (measured SQL over samples, simulated replay id, label) for the report's comparisons
    pairs: list[tuple[str, str, str]] = field(default_factory=list)
    report: Path | None = None


@dataclass
class QuickstartResult:
    results_dir: Path
    report: Path | None
    steps: list[tuple[str, float, str]] = field(default_factory=list)  # name, seconds, summary


def step_load(state: QuickstartState) -> str:
    """Copies the bundled campaign into the store (same file names: re-running is a no-op)."""
    source = bundled_dir()
    copied = rows = 0
    for table in BUNDLED_TABLES:
        target = state.results.table_dir(table)
        target.mkdir(parents=True, exist_ok=True)
        for f in sorted((source / table).glob("*.parquet")):
            if not (target / f.name).exists():
                shutil.copy(f, target / f.name)
                copied += 1
    with Catalog(state.results) as cat:
        rows = cat.rows("SELECT count(*) AS n FROM runs WHERE cluster IS NOT NULL")[0]["n"]
        samples = cat.tables["samples"].rows
    return f"{copied} files copied; store holds {rows} runs, {samples} samples"


def step_replay_captured(state: QuickstartState) -> str:
    trace = bundled_dir() / "halo-4rank.parquet"
    parts = []
    for name in bundled_fabrics():
        outcome = replay_trace(trace, load_fabric(name), ReplayOptions(), state.results)
        parts.append(f"{name} {outcome.total_time_ns / 1e6:.2f} ms")
    return "captured halo trace: " + ", ".join(parts)


def _measured_groups(state: QuickstartState) -> list[dict[str, object]]:
    with Catalog(state.results) as cat:
        return cat.rows(
            "SELECT benchmark, msg_size_bytes, ranks, max(iterations) AS iterations "
            "FROM runs WHERE implementation = 'builtin' "
            "GROUP BY ALL ORDER BY benchmark, msg_size_bytes"
        )


def step_simulate_benchmarks(state: QuickstartState) -> str:
    fabric = load_fabric(SIMULATION_FABRIC)
    for group in _measured_groups(state):
        bench, size = str(group["benchmark"]), int(str(group["msg_size_bytes"]))
        ranks, iterations = int(str(group["ranks"])), int(str(group["iterations"]))
        table, meta = osu_trace(bench, ranks, [size], iterations)
        path = state.scratch / f"osu_{bench}_{size}.parquet"
        write_trace(table, path, meta)
        outcome = replay_trace(path, fabric, ReplayOptions(), state.results)
        measured = (
            "SELECT s.latency_us FROM samples s JOIN runs r USING (run_id) "
            f"WHERE r.benchmark = '{bench}' AND r.msg_size_bytes = {size}"
        )
        state.pairs.append((measured, outcome.replay_id, f"{bench} {size} B"))
    return f"{len(state.pairs)} OSU-pattern traces replayed on {SIMULATION_FABRIC}"


def step_compare(state: QuickstartState) -> str:
    worst = ""
    worst_ks = -1.0
    with Catalog(state.results) as cat:
        for measured_sql, replay_id, label in state.pairs:
            measured = resolve(measured_sql, cat).table.column("latency_us")
            simulated = resolve(replay_id, cat).table.column("latency_us")
            cmp = compare_samples(measured.to_numpy(), simulated.to_numpy())
            if cmp.ks_statistic > worst_ks:
                p99 = cmp.percentiles["p99"]
                worst_ks = cmp.ks_statistic
                worst = (
                    f"{label}: KS {cmp.ks_statistic:.2f}, p99 measured "
                    f"{p99['measured']:.1f} us vs simulated {p99['simulated']:.1f} us"
                )
    return f"{len(state.pairs)} comparisons; largest gap {worst}"


def step_correlate(state: QuickstartState) -> str:
    with Catalog(state.results) as cat:
        result = correlate(cat)
    best = max(
        (g for g in result.groups if g.spearman_rho_mean is not None),
        key=lambda g: abs(g.spearman_rho_mean or 0.0),
        default=None,
    )
    if best is None or best.spearman_p_mean is None or best.pearson_r_mean is None:
        return f"{len(result.runs)} runs; no group with enough distinct b"
    return (
        f"{len(result.groups)} groups; strongest: {best.benchmark} {best.msg_size_bytes} B "
        f"mean latency vs b: Spearman rho {best.spearman_rho_mean:.2f} "
        f"(p {best.spearman_p_mean:.3f}), Pearson r {best.pearson_r_mean:.2f}"
    )


def step_predict(state: QuickstartState) -> str:
    with Catalog(state.results) as cat:
        runs = load_run_stats(cat, "alltoall", 32 * 1024, "different_islands")
    b = float(runs.b.max()) if len(runs.b) else 0.0
    try:
        pred = predict_tail(runs, b, "alltoall", 32 * 1024, "different_islands")
    except TailcastError as err:
        return f"no prediction: {err}"
    verdict = "long tail expected" if pred.long_tail_expected else "no long tail expected"
    return f"alltoall 32 KiB different islands at b={b:.2f}: mean {pred.mean_us:.0f} us, {verdict}"


def step_report(state: QuickstartState) -> str:
    result = build_report(
        state.report_dir,
        results=state.results,
        fit_groups=1,
        fit_time_limit_s=1.0,
        compare=[(m, r) for m, r, _ in state.pairs[:3]],
    )
    state.report = result.html
    return f"{len(result.figures)} figures in {result.html}"


STEPS: list[tuple[str, Callable[[QuickstartState], str]]] = [
    ("load the bundled campaign", step_load),
    ("replay the captured application on every bundled fabric", step_replay_captured),
    ("simulate the measured benchmarks", step_simulate_benchmarks),
    ("compare measured and simulated tails", step_compare),
    ("correlate latency with b", step_correlate),
    ("predict a tail from b", step_predict),
    ("write the report", step_report),
]


def run_quickstart(
    results: ResultsDir | None = None,
    report_dir: Path | None = None,
    progress: Callable[[str], None] = print,
) -> QuickstartResult:
    results = results or ResultsDir()
    report_dir = report_dir or results.root / "report"
    out = QuickstartResult(results.root, None)
    with tempfile.TemporaryDirectory(prefix="tailcast-quickstart-") as scratch:
        state = QuickstartState(results, report_dir, Path(scratch))
        for name, step in STEPS:
            started = time.perf_counter()
            summary = step(state)
            seconds = time.perf_counter() - started
            out.steps.append((name, seconds, summary))
            progress(f"[{seconds:6.2f} s] {name}: {summary}")
    out.report = state.report
    return out
