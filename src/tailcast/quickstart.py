"""`tailcast quickstart`: the whole pipeline on bundled real data, offline, in ~21 CPU-seconds.

The bundled data (src/tailcast/data/quickstart, recorded by
scripts/record_quickstart_data.py on the network lab: the local Slurm + Open MPI with every
node in its own namespace on shaped links) is a small seed-001 campaign — bcast, reduce and
alltoall at 4 B, 32 KiB and 1 MiB, same-group and different-islands placements, beside 0–2
placed background alltoall jobs (slurm_jobs/lab-quickstart.toml) — and a 4-rank halo +
allreduce application captured with tailcast's PMPI tracer. The quickstart loads it into the
store, replays the captured trace on every bundled fabric, fits the `lab` fabric's host
model (o, link latency, host noise) to the campaign's 4 B runs without background and the
detours' growth with background traffic to its 4 B runs beside background that shares no
link (`tailcast calibrate --fit-phase none --fit-phase local-8`), replays every measured run
on the calibrated fabric (its nodes, its background jobs on theirs, its host's detours as
often as its background's traffic makes them), compares measured and simulated tails — on
the fitted runs, on the background phases the fit never saw, and on all 72 — correlates
latency with b, predicts a tail, and writes the HTML report.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tailcast.analysis.correlation import correlate
from tailcast.analysis.report import build_report
from tailcast.calibration.from_campaign import (
    CampaignCalibration,
    FitSelection,
    Validation,
    calibrate_campaign,
    validate,
)
from tailcast.errors import TailcastError
from tailcast.forecast.baseline import load_run_stats, predict_tail
from tailcast.replay.fabric import bundled_fabrics, load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import Catalog, ResultsDir

BUNDLED_TABLES = ("runs", "samples", "utilisation", "snapshots", "lab_runs")
SIMULATION_FABRIC = "lab"  # the network the bundled campaign was measured on, calibrated
# what the host model is fitted to: the campaign's phase without background jobs (its
# small-message runs); the phases with background are held out
# local-8's background shares no link with the foreground: what it changes is the host's
FIT = FitSelection(campaign="quickstart", phases=["none", "local-8"])


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
    calibration: CampaignCalibration | None = None
    validation: Validation | None = None
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


def step_calibrate(state: QuickstartState) -> str:
    """The lab fabric's host fitted to the quiet runs and the background's detours to the
    local-8 ones (tailcast calibrate)."""
    cal = calibrate_campaign(
        state.results, load_fabric(SIMULATION_FABRIC), FIT, state.scratch / "calibrate"
    )
    state.calibration = cal
    f, bg = cal.result.fit, cal.background_detours
    background = (
        f"beside background {bg.rate_per_s_per_mbps:g}/s more per MB/s of mean "
        f"{bg.length_ns / 1e3:.0f} us (sigma {bg.length_sigma:.1f})"
        if bg
        else "none more beside background"
    )
    return (
        f"host fitted to {len(cal.runs)} runs ({', '.join(FIT.phases)}, <= {FIT.max_bytes} B) "
        f"in {cal.result.replays} trial replays: o {f.overhead_ns / 1e3:.0f} us, link latency "
        f"{f.link_latency_ns / 1e3:.0f} us, detours {f.detour_share:.1%} of the time, "
        f"{f.rate_per_s:.0f}/s of mean "
        f"{f.length_ns / 1e3:.0f} us (lognormal sigma {f.length_sigma:.1f}), "
        f"{background}, eager threshold "
        f"{cal.eager_threshold_bytes} B; quantile loss {cal.result.loss:.3f}"
    )


def step_simulate_benchmarks(state: QuickstartState) -> str:
    """Every measured run as its OSU-pattern trace on its nodes of the calibrated lab
    fabric, beside its background jobs as background traces on theirs (tailcast lab
    compare's method)."""
    assert state.calibration is not None
    replayer = state.calibration.replayer(state.results, state.scratch / "lab", seed=0)
    state.validation = validate(replayer, state.results, state.calibration)
    for c in state.validation.rows:
        measured = f"SELECT latency_us FROM samples WHERE run_id = '{c.run_id}'"
        label = f"{c.benchmark} {c.msg_size_bytes} B {c.placement} {c.phase}"
        state.pairs.append((measured, c.replay_id, label))
    return f"{len(state.pairs)} measured runs replayed on the calibrated {SIMULATION_FABRIC}"


def step_compare(state: QuickstartState) -> str:
    """Issue 40's figures: runs within p50 ±15 % and p99 ±30 %, median KS, and per size
    class the median p99/p50 measured and simulated."""
    if state.validation is None or not state.validation.rows:
        return "no comparisons"
    return "\n  ".join(state.validation.lines())


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
        # three 1 MiB runs across the islands: alone, and beside background on the island link
        compare=[(m, r) for m, r, label in state.pairs if "1048576 B different_islands" in label][
            :3
        ],
    )
    state.report = result.html
    return f"{len(result.figures)} figures in {result.html}"


STEPS: list[tuple[str, Callable[[QuickstartState], str]]] = [
    ("load the bundled campaign", step_load),
    ("replay the captured application on every bundled fabric", step_replay_captured),
    ("calibrate the lab fabric's host on the quiet and local-8 runs", step_calibrate),
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
