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
  sample, and a boosted classifier too sure. Inside the training rows, INNER_FOLDS
  time-ordered folds (`forecast.folds`) give out-of-fold predictions for the later jobs.
  As in conformalized quantile regression (Romano, Patterson & Candès, NeurIPS 2019, §3),
  each quantile is shifted (in log space) by the conformal quantile of its out-of-fold
  residuals log y − log q̂_τ; the classifier's probabilities get Platt scaling (a logistic
  fit of the labels on the logit of the out-of-fold probabilities; Platt 1999). The models
  are then refitted on all rows and keep both corrections (residuals of the smaller inner
  fits make the shifts conservative).
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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tailcast.errors import NotAcceptedError
from tailcast.forecast.dataset import TARGETS, TrainingSet
from tailcast.forecast.features import CATEGORICAL, FEATURES, MONOTONE_INCREASING
from tailcast.forecast.folds import time_ordered_folds

FloatArray = npt.NDArray[np.float64]

QUANTILES: tuple[float, ...] = (0.005, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.995)
BANDS: dict[str, tuple[float, float]] = {
    "50%": (0.25, 0.75),
    "90%": (0.05, 0.95),
    "99%": (0.005, 0.995),
}
INNER_FOLDS = 3
MIN_PLATT_RUNS = 20  # fewer out-of-fold labels, or one class only: probabilities as fitted
TailKey = tuple[str, int, str]  # (benchmark, msg_size_bytes, locality)
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
        "min_samples_leaf": max(5, min(20, n_rows // 10)),
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
    platt: tuple[float, float] = (1.0, 0.0)  # calibrated logit = a · logit(p) + b
    tail_method: str = "classifier"  # or "quantiles": P(mean > threshold) from the bands

    def quantiles(self, X: FloatArray) -> dict[str, FloatArray]:
        """Per target, rows × QUANTILES in the target's own unit, non-crossing."""
        out = {}
        with one_thread():
            for target, models in self.quantile_models.items():
                logs = np.column_stack([m.predict(X) for m in models]) + self.shifts[target]
                out[target] = np.exp(np.sort(logs, axis=1))
        return out

    def classifier_probability(self, X: FloatArray) -> FloatArray:
        if self.classifier is None:
            return np.full(len(X), self.base_rate)
        with one_thread():
            proba: FloatArray = self.classifier.predict_proba(X)[:, 1]
        a, b = self.platt
        return _sigmoid(a * _logit(proba) + b)

    def tail_probability(self, X: FloatArray, keys: Sequence[TailKey]) -> FloatArray:
        """P(run mean above its group's p85) by the method validation chose; rows whose
        group has no threshold fall back to the classifier."""
        p = self.classifier_probability(X)
        if self.tail_method == "quantiles":
            q = self.quantiles(X)["mean_us"]
            for i, key in enumerate(keys):
                if key in self.thresholds:
                    p[i] = exceedance(q[i], self.thresholds[key])
        return p

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


def exceedance(quantiles: FloatArray, threshold: float) -> float:
    """P(Y > threshold) from one row of predicted quantiles (linear in log Y between them;
    beyond the outermost ones, half the remaining probability)."""
    lo, hi = QUANTILES[0] / 2, 1 - (1 - QUANTILES[-1]) / 2
    cdf = np.interp(math.log(threshold), np.log(quantiles), QUANTILES, left=lo, right=hi)
    return float(1.0 - cdf)


def _brier(p: FloatArray, label: npt.NDArray[np.bool_]) -> float:
    return float(np.mean((p - label) ** 2)) if len(p) else math.inf


def _logit(p: FloatArray) -> FloatArray:
    q = np.clip(p, 1e-6, 1 - 1e-6)
    out: FloatArray = np.log(q / (1 - q))
    return out


def _sigmoid(z: FloatArray) -> FloatArray:
    out: FloatArray = 1 / (1 + np.exp(-z))
    return out


def _fit_classifier(
    ts: TrainingSet, thresholds: dict[tuple[str, int, str], float]
) -> tuple[Any | None, float]:
    """The tail classifier (None with one class only) and the training base rate."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    label, known = tail_labels(ts, thresholds)
    base_rate = float(label[known].mean()) if known.any() else 0.0
    if not known.any() or not 0 < label[known].sum() < known.sum():
        return None, base_rate
    with one_thread():
        opts = _estimator_options(int(known.sum()))
        return HistGradientBoostingClassifier(**opts).fit(ts.X[known], label[known]), base_rate


def _platt(p: FloatArray, label: npt.NDArray[np.bool_]) -> tuple[float, float]:
    if len(p) < MIN_PLATT_RUNS or label.all() or not label.any():
        return 1.0, 0.0
    from sklearn.linear_model import LogisticRegression

    fit = LogisticRegression(C=1.0).fit(_logit(p)[:, None], label)
    return float(fit.coef_[0, 0]), float(fit.intercept_[0])


def fit_forecaster(ts: TrainingSet) -> Forecaster:
    """Corrections from time-ordered out-of-fold predictions, then every model refitted on
    all rows. Of the two tail probabilities (calibrated classifier, or the exceedance of the
    threshold by the calibrated bands of the run mean) the one with the lower out-of-fold
    Brier score is kept."""
    thresholds = tail_thresholds(ts)
    label, known = tail_labels(ts, thresholds)
    zero = {t: np.zeros(len(QUANTILES)) for t in TARGETS}
    try:
        folds = time_ordered_folds(ts, INNER_FOLDS)
    except NotAcceptedError:
        folds = []  # too few jobs to hold any out: no corrections
    held: dict[str, list[FloatArray]] = {t: [] for t in TARGETS}
    clf_p: list[FloatArray] = []
    for fold in folds:
        early, late = ts.subset(fold.train), ts.subset(fold.test)
        classifier, base_rate = _fit_classifier(early, thresholds)
        inner = Forecaster(_fit_quantiles(early), zero, classifier, thresholds, base_rate)
        for target, q in inner.quantiles(late.X).items():
            held[target].append(q)
        clf_p.append(inner.classifier_probability(late.X))
    shifts, platt, method = dict(zero), (1.0, 0.0), "classifier"
    if folds:
        rows = np.concatenate([f.test for f in folds])
        for target in TARGETS:
            resid = np.log(ts.targets[target][rows])[:, None] - np.log(np.vstack(held[target]))
            shifts[target] = np.array(
                [conformal_shift(resid[:, j], tau) for j, tau in enumerate(QUANTILES)]
            )
        mask = known[rows]
        oof_label = label[rows][mask]
        raw = np.concatenate(clf_p)[mask]
        platt = _platt(raw, oof_label)
        by_classifier = _sigmoid(platt[0] * _logit(raw) + platt[1])
        shifted = np.exp(np.sort(np.log(np.vstack(held["mean_us"])) + shifts["mean_us"], axis=1))
        keys = [ts.key[i] for i in rows[mask]]
        by_bands = np.array(
            [exceedance(shifted[mask][j], thresholds[k]) for j, k in enumerate(keys)]
        )
        if _brier(by_bands, oof_label) < _brier(by_classifier, oof_label):
            method = "quantiles"
    classifier, base_rate = _fit_classifier(ts, thresholds)
    quantile_models = _fit_quantiles(ts)
    return Forecaster(quantile_models, shifts, classifier, thresholds, base_rate, platt, method)


def band_of(quantiles: FloatArray, band: str) -> tuple[FloatArray, FloatArray]:
    lo, hi = BANDS[band]
    return quantiles[:, QUANTILES.index(lo)], quantiles[:, QUANTILES.index(hi)]
