"""The learned forecasters: quantile gradient boosting for each latency target and a
classifier for P(run lands in the long tail).

- Targets (per run): mean latency, p99 latency, p99/p50 (how heavy the tail is). Each gets
  one `HistGradientBoostingRegressor(loss="quantile")` per quantile in QUANTILES, fitted on
  log(target): quantiles commute with a monotone map, and the log turns the multiplicative
  noise of latencies into additive noise. Predictions are sorted across quantiles per row
  (the rearrangement of Chernozhukov, Fernández-Val & Galichon, Econometrica 2010), so
  bands never cross.
- Bands: the 50 %, 90 % and 99 % central intervals (q25–q75, q5–q95, q0.5–q99.5).
- Calibration: gradient-boosted quantiles of a few hundred runs are too narrow out of
  sample. As in conformalized quantile regression (Romano, Patterson & Candès, NeurIPS
  2019, §3), the latest CALIBRATION_SHARE of the training jobs is held out, the models are
  fitted on the earlier ones, and each quantile is shifted (in log space) by the conformal
  quantile of its held-out residuals log y − log q̂_τ; the models are then refitted on all
  rows and keep the shifts (residuals of the smaller fit make them conservative).
- Long tail (seed 001 Fig. 1, §5.3): a run is in the long tail when its mean exceeds the
  p85 of the run means of its (benchmark, size, locality) group — thresholds are taken from
  the training rows only. A `HistGradientBoostingClassifier` gives P(in the tail).
- b (eq. 1 and 2) is a monotone-increasing constraint in every model (seed 001 §5.2).

scikit-learn is imported inside the functions (CLI start-up stays fast), and every fit and
prediction runs with one OpenMP thread: on a shared 2-core machine the default thread pool
made a 200-row fit 30 times slower.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tailcast.forecast.dataset import TARGETS, TrainingSet
from tailcast.forecast.features import CATEGORICAL, FEATURES, MONOTONE_INCREASING

FloatArray = npt.NDArray[np.float64]

QUANTILES: tuple[float, ...] = (0.005, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.995)
BANDS: dict[str, tuple[float, float]] = {
    "50%": (0.25, 0.75),
    "90%": (0.05, 0.95),
    "99%": (0.005, 0.995),
}
CALIBRATION_SHARE = 0.25
MIN_CALIBRATION_JOBS = 2
TAIL_QUANTILE = 85.0  # seed 001 Fig. 1: the long tail is what lies above p85
MIN_GROUP_RUNS = 3  # a p85 threshold needs a few runs of the group


_process_limited: list[Any] = []  # set once a long-lived process limited itself for good


def limit_threads_for_process() -> None:
    """For the warm service: one OpenMP/BLAS thread from now on, so no prediction pays for
    entering and leaving a limit (tens of ms on a loaded machine)."""
    from threadpoolctl import threadpool_limits

    if not _process_limited:
        _process_limited.append(threadpool_limits(limits=1))


@contextmanager
def one_thread() -> Iterator[None]:
    if _process_limited:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


def _estimator_options(n_rows: int) -> dict[str, Any]:
    """Small data: shallow trees, leaves of a few runs, a slow learning rate."""
    return {
        "max_iter": 150,
        "learning_rate": 0.05,
        "max_leaf_nodes": 8,
        "min_samples_leaf": max(3, min(20, n_rows // 15)),
        "l2_regularization": 1.0,
        "categorical_features": [name in CATEGORICAL for name in FEATURES],
        "monotonic_cst": [1 if name in MONOTONE_INCREASING else 0 for name in FEATURES],
        "random_state": 0,
    }


def tail_thresholds(ts: TrainingSet) -> dict[tuple[str, int, str], float]:
    """p85 of run means per (benchmark, size, locality) group with enough runs."""
    groups: dict[tuple[str, int, str], list[float]] = {}
    for key, mean in zip(ts.key, ts.targets["mean_us"], strict=True):
        groups.setdefault(key, []).append(float(mean))
    return {
        key: float(np.percentile(values, TAIL_QUANTILE))
        for key, values in groups.items()
        if len(values) >= MIN_GROUP_RUNS
    }


def tail_labels(
    ts: TrainingSet, thresholds: dict[tuple[str, int, str], float]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """(label, known): a run's label needs its group's threshold."""
    known = np.array([k in thresholds for k in ts.key])
    label = np.array(
        [known[i] and ts.targets["mean_us"][i] > thresholds[k] for i, k in enumerate(ts.key)]
    )
    return label, known


@dataclass
class Forecaster:
    """Fitted models plus what they need at prediction time."""

    quantile_models: dict[str, list[Any]]  # target -> one regressor per QUANTILES entry
    shifts: dict[str, FloatArray]  # target -> log-space shift per QUANTILES entry
    classifier: Any | None  # None when the training rows held one class only
    thresholds: dict[tuple[str, int, str], float]
    base_rate: float  # share of training runs in the long tail

    def quantiles(self, X: FloatArray) -> dict[str, FloatArray]:
        """Per target, rows × QUANTILES in the target's own unit, non-crossing."""
        out = {}
        with one_thread():
            for target, models in self.quantile_models.items():
                logs = np.column_stack([m.predict(X) for m in models]) + self.shifts[target]
                out[target] = np.exp(np.sort(logs, axis=1))
        return out

    def tail_probability(self, X: FloatArray) -> FloatArray:
        if self.classifier is None:
            return np.full(len(X), self.base_rate)
        with one_thread():
            proba: FloatArray = self.classifier.predict_proba(X)[:, 1]
        return proba

    def models(self) -> dict[str, Any]:
        """What goes into the model file (plain containers of estimators for skops)."""
        return {"quantile_models": self.quantile_models, "classifier": self.classifier}


def _fit_quantiles(ts: TrainingSet) -> dict[str, list[Any]]:
    from sklearn.ensemble import HistGradientBoostingRegressor

    opts = _estimator_options(len(ts))
    with one_thread():
        return {
            target: [
                HistGradientBoostingRegressor(loss="quantile", quantile=q, **opts).fit(
                    ts.X, np.log(ts.targets[target])
                )
                for q in QUANTILES
            ]
            for target in TARGETS
        }


def conformal_shift(residuals: FloatArray, tau: float) -> float:
    """The τ-quantile of n held-out residuals with split conformal prediction's finite-sample
    rank: the ⌈τ(n+1)⌉-th smallest above the median, the ⌊τ(n+1)⌋-th below it (clamped to
    the extremes, where the exact rule would give ±∞)."""
    ranked = np.sort(residuals)
    n = len(ranked)
    if tau > 0.5:
        return float(ranked[min(math.ceil(tau * (n + 1)), n) - 1])
    if tau < 0.5:
        return float(ranked[max(math.floor(tau * (n + 1)), 1) - 1])
    return float(np.median(ranked))


def calibration_split(ts: TrainingSet) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """(fit rows, calibration rows): the latest CALIBRATION_SHARE of the jobs, by start."""
    first: dict[str, float] = {}
    for g, t in zip(ts.cv_groups, ts.started, strict=True):
        first[g] = min(first.get(g, float(t)), float(t))
    order = sorted(first, key=first.__getitem__)
    n_cal = max(MIN_CALIBRATION_JOBS, round(CALIBRATION_SHARE * len(order)))
    if len(order) < 2 * n_cal:
        return np.arange(len(ts)), np.array([], dtype=np.intp)
    late = set(order[-n_cal:])
    cal = np.array([i for i, g in enumerate(ts.cv_groups) if g in late], dtype=np.intp)
    fit = np.array([i for i, g in enumerate(ts.cv_groups) if g not in late], dtype=np.intp)
    return fit, cal


def fit_forecaster(ts: TrainingSet) -> Forecaster:
    from sklearn.ensemble import HistGradientBoostingClassifier

    opts = _estimator_options(len(ts))
    shifts = {t: np.zeros(len(QUANTILES)) for t in TARGETS}
    fit_rows, cal_rows = calibration_split(ts)
    if len(cal_rows):
        early, late = ts.subset(fit_rows), ts.subset(cal_rows)
        held = Forecaster(_fit_quantiles(early), shifts, None, {}, 0.0).quantiles(late.X)
        for target in TARGETS:
            resid = np.log(late.targets[target])[:, None] - np.log(held[target])
            shifts[target] = np.array(
                [conformal_shift(resid[:, j], tau) for j, tau in enumerate(QUANTILES)]
            )
    quantile_models = _fit_quantiles(ts)
    with one_thread():
        thresholds = tail_thresholds(ts)
        label, known = tail_labels(ts, thresholds)
        base_rate = float(label[known].mean()) if known.any() else 0.0
        classifier = None
        if known.any() and 0 < label[known].sum() < known.sum():
            classifier = HistGradientBoostingClassifier(**opts).fit(ts.X[known], label[known])
    return Forecaster(quantile_models, shifts, classifier, thresholds, base_rate)


def band_of(quantiles: FloatArray, band: str) -> tuple[FloatArray, FloatArray]:
    lo, hi = BANDS[band]
    return quantiles[:, QUANTILES.index(lo)], quantiles[:, QUANTILES.index(hi)]
