"""Correlation of background utilisation b with latency (seed 001 §5.2, Fig. 4): per
(benchmark, message size), Pearson's r (linear) and Spearman's ρ (monotonic) with their
two-sided p-values, of b against each run's mean and p99 latency.

A run's b is the mean of b_before and b_after when both were taken (either one otherwise);
runs whose b was not accepted (b_accepted = false, |Δb| ≥ threshold) are left out by default,
as in the seed, where b is "captured only if the difference … is less than a threshold".
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

from tailcast.analysis.tails import clean
from tailcast.errors import UsageError
from tailcast.store import Catalog

RUN_SAMPLES_QUERY = (
    "SELECT r.run_id, r.benchmark, r.msg_size_bytes, r.locality, r.b_before, r.b_after, "
    "r.b_accepted, r.started_at, s.latency_us "
    "FROM runs r JOIN samples s USING (run_id) ORDER BY r.run_id, s.iteration"
)
B_MODES = ("mean", "before", "after")
MIN_RUNS = 3  # r and ρ of two points are ±1 with p = 1: meaningless


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    benchmark: str | None
    msg_size_bytes: int | None
    locality: str | None
    b: float
    n: int
    mean_latency_us: float
    p99_latency_us: float
    started_at: datetime | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Correlation:
    benchmark: str | None
    msg_size_bytes: int | None
    n_runs: int
    pearson_r_mean: float | None = None
    pearson_p_mean: float | None = None
    spearman_rho_mean: float | None = None
    spearman_p_mean: float | None = None
    pearson_r_p99: float | None = None
    pearson_p_p99: float | None = None
    spearman_rho_p99: float | None = None
    spearman_p_p99: float | None = None
    slope_mean_us_per_b: float | None = None  # least-squares line, drawn in Fig. 4
    intercept_mean_us: float | None = None
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CorrelationResult:
    runs: list[RunSummary]
    groups: list[Correlation]
    query: str
    files: list[Path] = field(default_factory=list)
    skipped_runs: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "groups": [g.as_dict() for g in self.groups],
            "runs": [r.as_dict() for r in self.runs],
            "skipped_runs": self.skipped_runs,
            "provenance": {"query": self.query, "files": [str(p) for p in self.files]},
        }


def _run_b(before: float | None, after: float | None, mode: str) -> float | None:
    if mode == "before":
        return before
    if mode == "after":
        return after
    present = [b for b in (before, after) if b is not None and math.isfinite(b)]
    return sum(present) / len(present) if present else None


def run_summaries(
    catalog: Catalog, only_accepted: bool = True, b_mode: str = "mean"
) -> tuple[list[RunSummary], int]:
    """One summary per run that has samples and a b; also the number of runs skipped."""
    if b_mode not in B_MODES:
        raise UsageError(f"b mode must be one of {', '.join(B_MODES)}, got {b_mode!r}")
    table = catalog.sql(RUN_SAMPLES_QUERY)
    if table.num_rows == 0:
        return [], 0
    ids = table.column("run_id").to_pylist()
    lat = np.asarray(table.column("latency_us").to_numpy(zero_copy_only=False), dtype=float)
    meta = table.select(
        [
            "benchmark",
            "msg_size_bytes",
            "locality",
            "b_before",
            "b_after",
            "b_accepted",
            "started_at",
        ]
    ).to_pylist()
    # rows are ordered by run_id: split at changes
    starts = [0] + [i for i in range(1, len(ids)) if ids[i] != ids[i - 1]] + [len(ids)]
    out: list[RunSummary] = []
    skipped = 0
    for a, z in itertools.pairwise(starts):
        m = meta[a]
        b = _run_b(m["b_before"], m["b_after"], b_mode)
        values = clean(lat[a:z])
        if b is None or values.size == 0 or (only_accepted and m["b_accepted"] is False):
            skipped += 1
            continue
        out.append(
            RunSummary(
                run_id=ids[a],
                benchmark=m["benchmark"],
                msg_size_bytes=m["msg_size_bytes"],
                locality=m["locality"],
                b=float(b),
                n=int(values.size),
                mean_latency_us=float(values.mean()),
                p99_latency_us=float(np.percentile(values, 99)),
                started_at=m["started_at"],
            )
        )
    return out, skipped


def _pair(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float] | None:
    if x.size < MIN_RUNS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = scipy.stats.pearsonr(x, y)
        sr = scipy.stats.spearmanr(x, y)
    return float(pr.statistic), float(pr.pvalue), float(sr.statistic), float(sr.pvalue)


def correlate_runs(runs: Sequence[RunSummary]) -> list[Correlation]:
    """Per (benchmark, size) correlations of b with mean and p99 latency."""
    groups: dict[tuple[str | None, int | None], list[RunSummary]] = {}
    for r in runs:
        groups.setdefault((r.benchmark, r.msg_size_bytes), []).append(r)
    out = []
    for (bench, size), members in sorted(
        groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)
    ):
        b = np.array([r.b for r in members])
        mean = np.array([r.mean_latency_us for r in members])
        p99 = np.array([r.p99_latency_us for r in members])
        row = Correlation(bench, size, len(members))
        on_mean, on_p99 = _pair(b, mean), _pair(b, p99)
        if on_mean is None or on_p99 is None:
            row.note = f"needs ≥ {MIN_RUNS} runs with varying b and latency"
        if on_mean is not None:
            row.pearson_r_mean, row.pearson_p_mean, row.spearman_rho_mean, row.spearman_p_mean = (
                on_mean
            )
            slope, intercept = np.polyfit(b, mean, 1)
            row.slope_mean_us_per_b, row.intercept_mean_us = float(slope), float(intercept)
        if on_p99 is not None:
            row.pearson_r_p99, row.pearson_p_p99, row.spearman_rho_p99, row.spearman_p_p99 = on_p99
        out.append(row)
    return out


def correlate(
    catalog: Catalog | None = None, only_accepted: bool = True, b_mode: str = "mean"
) -> CorrelationResult:
    """`tailcast analyze correlate`: from the store's runs + samples."""
    own = catalog is None
    cat = catalog or Catalog()
    try:
        runs, skipped = run_summaries(cat, only_accepted, b_mode)
        files = [p for t in ("runs", "samples") for p in cat.tables[t].files]
    finally:
        if own:
            cat.close()
    return CorrelationResult(runs, correlate_runs(runs), RUN_SAMPLES_QUERY, files, skipped)
