"""Tail prediction at job-submission time (seed 001 §5.2–5.3).

Seed 001 shows that mean and tail latency of a collective grow with the background-traffic
estimate b, and that b read from the queue *before* a job starts flags the runs that end up
in the long tail. From the store's accepted runs of one (benchmark, size, locality) we fit
the log of per-run mean and p99 latency against b by least squares, and classify a run as
"in the long tail" when its mean exceeds the 85th percentile of the group's run means (seed
001 reads the tail as what lies beyond p85, Fig. 1). For a new b we report the fitted
latencies, a Student-t prediction interval from the residuals, and the empirical share of
tail runs among the historical runs with b at least as high.

Why the log: latencies are positive and their run-to-run noise grows with their level, so
the fit, its residuals and the interval live on log(µs) and come back as multiples of the
fitted latency. A straight line in µs gave the quickstart's 1 MiB alltoall a 90 % interval
of [−249,652, 1,004,517] µs: a negative latency.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from tailcast.analysis.correlation import run_summaries
from tailcast.errors import NotAcceptedError, UsageError
from tailcast.store import Catalog

MIN_RUNS = 3
TAIL_QUANTILE = 85.0  # seed 001 Fig. 1: the tail is what lies above p85


@dataclass(frozen=True)
class RunStats:
    """Per-run latency statistics (µs) of one group, aligned with each run's b."""

    b: npt.NDArray[np.float64]
    mean_us: npt.NDArray[np.float64]
    p99_us: npt.NDArray[np.float64]


@dataclass(frozen=True)
class LinearFit:
    """log(latency in µs) = intercept + slope · b, with its residual standard deviation."""

    slope_log_per_b: float
    intercept_log_us: float
    pearson_r: float
    residual_sd_log: float

    def at(self, b: float) -> float:
        """The fitted log(µs) at b."""
        return self.intercept_log_us + self.slope_log_per_b * b


@dataclass(frozen=True)
class TailPrediction:
    benchmark: str
    msg_size_bytes: int
    locality: str | None
    b: float
    runs: int
    b_min: float
    b_max: float
    extrapolated: bool
    mean_us: float
    mean_us_low: float
    mean_us_high: float
    p99_us: float
    tail_threshold_mean_us: float
    long_tail_expected: bool
    tail_share_at_or_above_b: float | None
    mean_fit: LinearFit
    p99_fit: LinearFit

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_run_stats(
    catalog: Catalog, benchmark: str, msg_size_bytes: int, locality: str | None = None
) -> RunStats:
    """Accepted runs of the group with their b (mean of before/after) and per-run mean and
    p99 latency: the same run summaries `analyze correlate` uses."""
    runs, _ = run_summaries(catalog, only_accepted=True, b_mode="mean")
    group = sorted(
        (
            r
            for r in runs
            if r.benchmark == benchmark
            and r.msg_size_bytes == msg_size_bytes
            and r.mean_latency_us > 0
            and r.p99_latency_us > 0
            and (locality is None or r.locality == locality)
        ),
        key=lambda r: r.b,
    )
    return RunStats(
        np.array([r.b for r in group], dtype=np.float64),
        np.array([r.mean_latency_us for r in group], dtype=np.float64),
        np.array([r.p99_latency_us for r in group], dtype=np.float64),
    )


def fit_line(b: npt.NDArray[np.float64], latency_us: npt.NDArray[np.float64]) -> LinearFit:
    """Least squares of log(latency_us) on b."""
    y = np.log(latency_us)
    if np.ptp(b) == 0.0:  # all runs at one b: no slope can be learned
        return LinearFit(0.0, float(np.mean(y)), float("nan"), float(np.std(y, ddof=1)))
    res = stats.linregress(b, y)
    resid = y - (res.intercept + res.slope * b)
    dof = max(len(y) - 2, 1)
    return LinearFit(
        float(res.slope),
        float(res.intercept),
        float(res.rvalue),
        float(np.sqrt(np.sum(resid**2) / dof)),
    )


def predictive_scale(
    b_hist: npt.NDArray[np.float64], fit: LinearFit, b: float
) -> tuple[int, float]:
    """Degrees of freedom and scale of the Student-t predictive distribution of one new
    run at `b` (the slope's own uncertainty is in the leverage term, which widens the
    interval away from the mean b)."""
    n = len(b_hist)
    b_mean = float(np.mean(b_hist))
    sxx = float(np.sum((b_hist - b_mean) ** 2)) or float("inf")
    return max(n - 2, 1), fit.residual_sd_log * float(np.sqrt(1 + 1 / n + (b - b_mean) ** 2 / sxx))


def linear_quantiles(
    b_hist: npt.NDArray[np.float64],
    y_hist: npt.NDArray[np.float64],
    b_new: npt.NDArray[np.float64],
    taus: tuple[float, ...],
) -> npt.NDArray[np.float64]:
    """Quantiles (rows: b_new, columns: taus) of the baseline's predictive distribution: the
    least-squares line of log y against b with Student-t errors, back in y's unit."""
    fit = fit_line(b_hist, y_hist)
    out = np.empty((len(b_new), len(taus)))
    for i, b in enumerate(b_new):
        dof, scale = predictive_scale(b_hist, fit, float(b))
        out[i] = np.exp(fit.at(float(b)) + stats.t.ppf(np.asarray(taus), dof) * scale)
    return out


def tail_probability(
    b_hist: npt.NDArray[np.float64],
    mean_hist: npt.NDArray[np.float64],
    b: float,
    threshold_us: float,
) -> float:
    """The baseline's P(run mean > threshold) under the same predictive distribution."""
    fit = fit_line(b_hist, mean_hist)
    dof, scale = predictive_scale(b_hist, fit, b)
    if not scale > 0:
        return float(fit.at(b) > np.log(threshold_us))
    return float(stats.t.sf((np.log(threshold_us) - fit.at(b)) / scale, dof))


def predict_tail(
    runs: RunStats,
    b: float,
    benchmark: str,
    msg_size_bytes: int,
    locality: str | None = None,
    interval: float = 0.9,
) -> TailPrediction:
    """Predicts mean/p99 latency at background traffic `b` from the group's history."""
    if not 0.0 <= b <= 10.0:
        raise UsageError(f"b must be a non-negative utilisation (got {b})")
    n = len(runs.b)
    if n < MIN_RUNS:
        raise NotAcceptedError(
            f"only {n} accepted runs of {benchmark} at {msg_size_bytes} B"
            + (f" ({locality})" if locality else "")
            + f" in the store; need at least {MIN_RUNS} to predict"
        )
    mean_fit = fit_line(runs.b, runs.mean_us)
    p99_fit = fit_line(runs.b, runs.p99_us)
    dof, scale = predictive_scale(runs.b, mean_fit, b)
    half = float(stats.t.ppf(0.5 + interval / 2, dof)) * scale
    threshold = float(np.percentile(runs.mean_us, TAIL_QUANTILE))
    log_predicted = mean_fit.at(b)
    predicted = float(np.exp(log_predicted))  # the predictive median of the run mean
    above = runs.b >= b
    share = float(np.mean(runs.mean_us[above] > threshold)) if above.any() else None
    return TailPrediction(
        benchmark=benchmark,
        msg_size_bytes=msg_size_bytes,
        locality=locality,
        b=b,
        runs=n,
        b_min=float(runs.b.min()),
        b_max=float(runs.b.max()),
        extrapolated=not (runs.b.min() <= b <= runs.b.max()),
        mean_us=predicted,
        mean_us_low=float(np.exp(log_predicted - half)),
        mean_us_high=float(np.exp(log_predicted + half)),
        p99_us=float(np.exp(p99_fit.at(b))),
        tail_threshold_mean_us=threshold,
        long_tail_expected=predicted > threshold,
        tail_share_at_or_above_b=share,
        mean_fit=mean_fit,
        p99_fit=p99_fit,
    )
