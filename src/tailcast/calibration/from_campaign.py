"""A calibration from a lab campaign in the store: which runs it is fitted to (the fitting
phases' small-message runs), the protocol threshold their records give, the host fit
(host_fit.py) on the base fabric's network, and the fabric file that results; then the
same fabric replaying every run of the campaign, split into the runs it was fitted to,
the runs of the phases it never saw (out of sample) and all of them (validation.py).

The network part — each tree level's rate — is the base fabric's, measured by `lab
calibrate`'s ping-pong and streams; this fit replaces its per-link latency and its host.
When every fitting run recorded the noise profiles of its nodes (`tailcast agent
noise-profile`), the host's noise is those profiles pooled, as measured, and only o and the
link latency are fitted; otherwise the detours are fitted too, to the fitting runs without
background; then, when some fitting runs had background jobs, the background's own detour
source (its rate per MB/s of background traffic and its lengths, lab/host_load.py), on
those runs with the host just fitted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.calibration.fabric_out import calibrated_fabric, calibrated_text
from tailcast.calibration.host_fit import (
    GRIDS,
    START,
    FitResult,
    HostFit,
    fit_host,
    pattern_search,
    quantile_loss,
)
from tailcast.calibration.validation import Figures, figures
from tailcast.collectors.mpi_protocol import MpiProtocol
from tailcast.collectors.noise_profile import NoiseProfile, host_noise_toml, stored_profiles
from tailcast.errors import UsageError
from tailcast.lab.compare import (
    LAB_PROTOCOL,
    LabReplayer,
    RunComparison,
    compare_runs,
    lab_runs,
    measured_latencies,
)
from tailcast.lab.host_load import BackgroundDetours, background_mbps
from tailcast.replay.eager_limit import eager_threshold
from tailcast.replay.fabric import Fabric
from tailcast.store import Catalog, ResultsDir

SMALL_MAX_BYTES = 1024  # "small message": the host, not the links' rate, sets its latency


@dataclass(frozen=True)
class FitSelection:
    campaign: str | None
    phases: list[str]
    max_bytes: int = SMALL_MAX_BYTES


@dataclass
class CampaignCalibration:
    selection: FitSelection
    base: Fabric
    result: FitResult
    runs: list[dict[str, Any]]  # the fitting runs (lab_runs rows)
    eager_threshold_bytes: int | None  # the one every fitting run's record gives
    seed: int
    background_detours: BackgroundDetours | None = None  # lab/host_load.py
    measured_noise: str | None = None  # pooled [host.noise] of the runs' stored profiles
    noise_profiles: list[str] = field(default_factory=list)  # their ids
    fabric_text: str = ""
    notes: list[str] = field(default_factory=list)

    def provenance(self) -> list[str]:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        fit = self.result.fit
        lines = [
            f"{self.base.name}: network from {self.base.source}; host fitted by `tailcast "
            f"calibrate` ({when})",
            f"to {len(self.runs)} runs of campaign {self.selection.campaign or '(any)'}, "
            f"phases {', '.join(self.selection.phases)}, <= {self.selection.max_bytes} B "
            f"(seed {self.seed}):",
        ]
        lines += [
            f"  {r['benchmark']} {r['msg_size_bytes']} B {r['placement']} {r['phase']} "
            f"run {r['run_id'][:8]}: loss {self.result.run_losses[r['run_id']]:.3f}"
            for r in self.runs
        ]
        noise = (
            f"noise measured: profiles {', '.join(p[:8] for p in self.noise_profiles)}"
            if self.measured_noise
            else f"detours {fit.detour_share:.1%} of the time: {fit.rate_per_s:.0f}/s of mean "
            f"{fit.length_ns:.0f} ns (lognormal sigma {fit.length_sigma:.2f})"
            + (
                f" without background; beside it, {bg.rate_per_s_per_mbps:g}/s more per MB/s "
                f"of its traffic, of mean {bg.length_ns:.0f} ns (lognormal sigma "
                f"{bg.length_sigma:.2f}; lab compare --background-detours {bg.option()})"
                if (bg := self.background_detours)
                else ""
            )
        )
        lines += [
            f"loss (mean |ln sim/meas| at p10..p99) {self.result.loss:.3f} after "
            f"{self.result.replays} trial replays of the set;",
            f"link latency {fit.link_latency_ns:.0f} ns, o {fit.overhead_ns:.0f} ns, {noise}, "
            f"eager threshold {self.eager_threshold_bytes}",
        ]
        return lines

    def fabric(self) -> Fabric:
        return calibrated_fabric(
            self.base, self.result.fit, self.eager_threshold_bytes, self.measured_noise
        )

    def replayer(self, results: ResultsDir | None, workdir: Path, seed: int) -> LabReplayer:
        """Replays lab runs on the calibrated fabric, each beside its background."""
        return LabReplayer(self.fabric(), results, workdir, seed, self.background_detours)

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_fabric": self.base.source,
            "campaign": self.selection.campaign,
            "fit_phases": self.selection.phases,
            "fit_max_bytes": self.selection.max_bytes,
            "seed": self.seed,
            "fit": self.result.fit.as_dict(),
            "loss": self.result.loss,
            "replays": self.result.replays,
            "profiles": {k: [list(p) for p in v] for k, v in self.result.profiles.items()},
            "eager_threshold_bytes": self.eager_threshold_bytes,
            "background_detours": bg.as_dict() if (bg := self.background_detours) else None,
            "noise_profiles": self.noise_profiles,
            "runs": [
                {
                    "run_id": r["run_id"],
                    "benchmark": r["benchmark"],
                    "msg_size_bytes": r["msg_size_bytes"],
                    "placement": r["placement"],
                    "phase": r["phase"],
                    "loss": self.result.run_losses[r["run_id"]],
                }
                for r in self.runs
            ],
        }


def _threshold(runs: list[dict[str, Any]]) -> int | None:
    """The eager threshold the runs' protocol records agree on (runs stored before the
    record: the lab's Open MPI TCP defaults, as lab compare takes them); None if they
    differ (each replay still takes its own run's)."""
    found = {
        eager_threshold(MpiProtocol.from_json(r["protocol_json"]) if r.get("protocol_json")
                        else LAB_PROTOCOL)
        for r in runs
    }  # fmt: skip
    return found.pop() if len(found) == 1 else None


def measured_noise(results: ResultsDir, runs: list[dict[str, Any]]) -> tuple[str, list[str]] | None:
    """The pooled `[host.noise]` table of the profiles the runs recorded, and their ids;
    None when a run recorded none (one host model per fabric: all or nothing)."""
    ids: set[str] = set()
    for r in runs:
        if not r.get("noise_profiles"):
            return None
        ids |= set(json.loads(r["noise_profiles"]).values())
    rows = {row["profile_id"]: row for row in stored_profiles(results)}
    missing = sorted(ids - set(rows))
    if missing:
        raise UsageError(
            f"the fitting runs name noise profiles the store lacks: {', '.join(missing)}"
        )
    fields = NoiseProfile.__dataclass_fields__
    profiles = [
        NoiseProfile(**{k: v for k, v in rows[i].items() if k in fields}) for i in sorted(ids)
    ]
    return host_noise_toml(profiles), sorted(ids)


def calibrate_campaign(
    results: ResultsDir,
    base: Fabric,
    selection: FitSelection,
    workdir: Path,
    seed: int = 0,
    progress: Callable[[str], None] = lambda _: None,
) -> CampaignCalibration:
    with Catalog(results) as cat:
        runs = [
            r
            for r in lab_runs(cat, selection.campaign, None, selection.phases)
            if int(r["msg_size_bytes"]) <= selection.max_bytes
        ]
        if not runs:
            raise UsageError(
                f"no lab runs of <= {selection.max_bytes} B in phases "
                f"{', '.join(selection.phases)} of campaign {selection.campaign or '(any)'}"
            )
        measured = measured_latencies(cat, runs)
    threshold = _threshold(runs)
    profiled = measured_noise(results, runs)
    noise, profile_ids = profiled if profiled else (None, [])
    # with measured noise only o and the link latency are searched
    grids = {k: GRIDS[k] for k in ("overhead_ns", "link_latency_ns")} if noise else GRIDS
    start = replace(START, detour_share=0.0) if noise else START
    quiet = [r for r in runs if background_mbps(r) == 0.0] or runs
    beside = [r for r in runs if r not in quiet]

    def replays(
        fit: HostFit, detours: BackgroundDetours | None, these: list[dict[str, Any]]
    ) -> dict[str, Any]:
        fabric = calibrated_fabric(base, fit, threshold, noise)
        replayer = LabReplayer(fabric, None, workdir, seed, detours)
        return {r["run_id"]: replayer.replay_run(r)[1] for r in these}

    progress(f"fitting the host to {len(quiet)} runs")
    fitted = {r["run_id"]: measured[r["run_id"]] for r in quiet}
    result = fit_host(lambda fit: replays(fit, None, quiet), fitted, start, grids, progress)
    detours = None
    if beside and noise is None:
        progress(f"fitting the background's detours to {len(beside)} runs")
        detours, losses = _fit_background_detours(
            lambda d: replays(result.fit, d, beside), measured, progress
        )
        result = replace(result, run_losses={**result.run_losses, **losses})
    cal = CampaignCalibration(
        selection, base, result, runs, threshold, seed, detours, noise, profile_ids
    )
    cal.fabric_text = calibrated_text(base, result.fit, threshold, cal.provenance(), noise)
    return cal


# The background's detour source: rates per MB/s from none to ~8000/s at the lab's heaviest
# background (~50 MB/s), lengths from a scheduler wake-up to a slice (µs to ~100 µs).
BACKGROUND_GRIDS: dict[str, tuple[float, ...]] = {
    "rate_per_s_per_mbps": (0.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0),
    "length_ns": (5e3, 10e3, 20e3, 40e3, 80e3),
    "length_sigma": (0.5, 1.0, 1.5, 2.0),
}
BACKGROUND_START = BackgroundDetours(rate_per_s_per_mbps=20.0, length_ns=20e3, length_sigma=1.0)


def _fit_background_detours(
    simulate: Callable[[BackgroundDetours | None], dict[str, np.ndarray]],
    measured: dict[str, np.ndarray],
    progress: Callable[[str], None],
) -> tuple[BackgroundDetours | None, dict[str, float]]:
    """The background's detour source whose replays of the runs `simulate` replays (with
    the host fitted) have the least mean quantile loss, by the host fit's pattern search on
    BACKGROUND_GRIDS (None when no source beats none), and each run's loss there."""
    # every point of rate 0 is the same replay (no source): one cache entry, None
    cache: dict[BackgroundDetours | None, dict[str, float]] = {}

    def losses(d: BackgroundDetours) -> dict[str, float]:
        key = d if d.rate_per_s_per_mbps > 0.0 else None
        if key not in cache:
            sim = simulate(key)
            cache[key] = {rid: quantile_loss(measured[rid], sim[rid]) for rid in sim}
        return cache[key]

    best, _ = pattern_search(
        BACKGROUND_START,
        BACKGROUND_GRIDS,
        lambda d: float(np.mean(list(losses(d).values()))),
        progress,
    )
    return (best if best.rate_per_s_per_mbps > 0.0 else None), losses(best)


@dataclass(frozen=True)
class Validation:
    fitted: Figures  # the runs the fit saw
    held_out: Figures  # the phases it did not
    all_runs: Figures
    rows: list[RunComparison]

    def lines(self) -> list[str]:
        return [*self.fitted.lines(), *self.held_out.lines(), *self.all_runs.lines()]

    def as_dict(self) -> dict[str, Any]:
        return {
            "fitted": self.fitted.as_dict(),
            "held_out": self.held_out.as_dict(),
            "all_runs": self.all_runs.as_dict(),
            "runs": [r.as_dict() for r in self.rows],
        }


def validate(
    replayer: LabReplayer,
    results: ResultsDir,
    cal: CampaignCalibration,
    progress: Callable[[str], None] = lambda _: None,
) -> Validation:
    """Every run of the campaign replayed on `replayer` (the calibrated fabric)."""
    rows = compare_runs(replayer, cal.selection.campaign, progress=progress, results=results)
    fitted = {r["run_id"] for r in cal.runs}
    phases = set(cal.selection.phases)
    return Validation(
        fitted=figures("fitted runs", [r for r in rows if r.run_id in fitted]),
        held_out=figures(
            "held-out phases (out of sample)", [r for r in rows if r.phase not in phases]
        ),
        all_runs=figures("all runs", rows),
        rows=rows,
    )
