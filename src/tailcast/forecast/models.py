"""The learned forecasters: per latency target a band around a boosted centre, and a
classifier for P(run lands in the long tail).

- Targets (per run): mean latency, p99 latency, p99/p50 (how heavy the tail is), each on a log
  scale: latencies are positive and their noise is multiplicative, so every band is a
  multiple of the centre and no bound can be negative or zero.
- Centre: a `HistGradientBoostingRegressor` (least squares) of log(target) on the features.
- Quantiles: the centre plus the conformal quantiles of out-of-fold residuals
  log y − centre(x) (split conformal prediction with a regression centre, Lei, G'Sell,
  Rinaldo, Tibshirani & Wasserman, JASA 2018, §2; residuals from K folds as in CV+, Barber,
  Candès, Ramdas & Tibshirani, Ann. Statist. 2021). The folds hold out whole Slurm jobs
  (`cv_groups`), so each residual is that of a job the model had not seen, at a b and
  placement it had seen other jobs at. The 50 %, 90 % and 99 % bands are q25–q75, q5–q95
  and q0.5–q99.5.
  Why not one quantile-loss model per τ (what this module fitted before): on a few hundred
  runs the boosted τ = 0.05 / 0.95 models start at the marginal quantiles of the whole store
  — 4 B to 1 MiB, three decades — and 150 rounds did not pull them in (in-sample q5–q95
  spans 30× on the quickstart data), while 27 models × 4 fits × 6 forecasters made `predict
  train` 49 CPU-s on 72 runs. One centre per target is ~10× fewer boosting rounds.
- Long tail (seed 001 Fig. 1, §5.3): a run is in the long tail when its mean exceeds the
  p85 of the run means of its (benchmark, size, locality) group — thresholds are taken from
  the training rows only. A `HistGradientBoostingClassifier` gives P(in the tail); its
  out-of-fold probabilities fit a Platt scaling (Platt 1999). P(mean > threshold) from the
  bands is the other candidate; the one with the lower out-of-fold Brier score is kept.
- b (eq. 1 and 2) is a monotone-increasing constraint in every model (seed 001 §5.2).
- Features without two distinct known values in the training rows (e.g. every topology
  feature when no topology is given), and time of day / weekday when the rows span less than
  a day / a week, are left out of the models (`informative_columns`); the forecaster keeps
  the columns it reads.

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

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]

QUANTILES: tuple[float, ...] = (0.005, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.995)
BANDS: dict[str, tuple[float, float]] = {
    "50%": (0.25, 0.75),
    "90%": (0.05, 0.95),
    "99%": (0.005, 0.995),
}
CALIBRATION_FOLDS = 5  # jobs held out in turn; each fold model sees ~80 % of the jobs
BOOSTING_ROUNDS = 100
MAX_LEAVES = 8
MIN_LEAF_RUNS = 5
LEARNING_RATE = 0.1
# The period a clock feature describes (s): the training runs must span it.
CLOCK_FEATURES = {"hour_sin": 86400.0, "hour_cos": 86400.0, "weekday": 7 * 86400.0}
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


def informative_columns(ts: TrainingSet) -> tuple[int, ...]:
    """Indices of the FEATURES columns the models may read: those with at least two distinct
    known values in these rows, and the clock features only when the rows span the period
    they describe. A column with no known value (no topology: every topology feature is
    NaN) or one value cannot split a tree, and scikit-learn ≥ 1.9 refuses the first kind;
    time of day over runs of a single hour, or weekday over a few days, only tells their
    order, and would turn any forecast's wall-clock time into an extrapolation."""
    span_s = float(ts.started.max() - ts.started.min()) if len(ts) else 0.0
    keep = []
    for j, name in enumerate(FEATURES):
        if CLOCK_FEATURES.get(name, 0.0) > span_s:
            continue
        known = ts.X[:, j][np.isfinite(ts.X[:, j])]
        if known.size and known.min() < known.max():
            keep.append(j)
    if not keep:
        raise NotAcceptedError("no feature varies across the training runs: nothing to learn")
    return tuple(keep)


def _estimator_options(n_rows: int, columns: Sequence[int]) -> dict[str, Any]:
    """Small data: shallow trees, leaves of a few runs, a moderate learning rate."""
    names = [FEATURES[j] for j in columns]
    return {
        "max_iter": BOOSTING_ROUNDS,
        "learning_rate": LEARNING_RATE,
        "max_leaf_nodes": MAX_LEAVES,
        "min_samples_leaf": max(MIN_LEAF_RUNS, min(20, n_rows // 10)),
        "l2_regularization": 1.0,
        "categorical_features": [name in CATEGORICAL for name in names],
        "monotonic_cst": [1 if name in MONOTONE_INCREASING else 0 for name in names],
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

    centres: dict[str, Any]  # target -> regressor of log(target)
    residual_quantiles: dict[str, FloatArray]  # target -> log residual at each QUANTILES entry
    classifier: Any | None  # None when the training rows held one class only
    thresholds: dict[tuple[str, int, str], float]
    base_rate: float  # share of training runs in the long tail
    platt: tuple[float, float] = (1.0, 0.0)  # calibrated logit = a · logit(p) + b
    tail_method: str = "classifier"  # or "quantiles": P(mean > threshold) from the bands
    columns: tuple[int, ...] = tuple(range(len(FEATURES)))  # the FEATURES the models read

    def centre(self, X: FloatArray) -> dict[str, FloatArray]:
        """Per target, log(target) at the centre of each row's band."""
        with one_thread():
            return {t: m.predict(X[:, self.columns]) for t, m in self.centres.items()}

    def quantiles(self, X: FloatArray) -> dict[str, FloatArray]:
        """Per target, rows × QUANTILES in the target's own unit (positive, non-crossing)."""
        return {
            t: np.exp(c[:, None] + self.residual_quantiles[t][None, :])
            for t, c in self.centre(X).items()
        }

    def classifier_probability(self, X: FloatArray) -> FloatArray:
        if self.classifier is None:
            return np.full(len(X), self.base_rate)
        with one_thread():
            proba: FloatArray = self.classifier.predict_proba(X[:, self.columns])[:, 1]
        a, b = self.platt
        return _sigmoid(a * _logit(proba) + b)

    def tail_probability(self, X: FloatArray, keys: Sequence[TailKey]) -> FloatArray:
        """P(run mean above its group's p85) by the method calibration chose; rows whose
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
        return {"centres": self.centres, "classifier": self.classifier}

    def feature_names(self) -> list[str]:
        return [FEATURES[j] for j in self.columns]


def _fit_centres(ts: TrainingSet, columns: Sequence[int]) -> dict[str, Any]:
    """Per target, the least-squares boosted model of log(target)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    opts = _estimator_options(len(ts), columns)
    X = ts.X[:, columns]
    with one_thread():
        return {
            target: HistGradientBoostingRegressor(loss="squared_error", **opts).fit(
                X, np.log(ts.targets[target])
            )
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
    ts: TrainingSet, thresholds: dict[tuple[str, int, str], float], columns: Sequence[int]
) -> tuple[Any | None, float]:
    """The tail classifier (None with one class only) and the training base rate."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    label, known = tail_labels(ts, thresholds)
    base_rate = float(label[known].mean()) if known.any() else 0.0
    if not known.any() or not 0 < label[known].sum() < known.sum():
        return None, base_rate
    with one_thread():
        opts = _estimator_options(int(known.sum()), columns)
        X = ts.X[known][:, columns]
        return HistGradientBoostingClassifier(**opts).fit(X, label[known]), base_rate


def _platt(p: FloatArray, label: npt.NDArray[np.bool_]) -> tuple[float, float]:
    if len(p) < MIN_PLATT_RUNS or label.all() or not label.any():
        return 1.0, 0.0
    from sklearn.linear_model import LogisticRegression

    fit = LogisticRegression(C=1.0).fit(_logit(p)[:, None], label)
    return float(fit.coef_[0, 0]), float(fit.intercept_[0])


def job_folds(ts: TrainingSet, n_folds: int) -> list[IndexArray]:
    """Held-out row sets: the Slurm jobs in start order dealt round-robin into n_folds
    (fewer with fewer jobs), so each fold spans the whole period and no job is split."""
    jobs: dict[str, list[int]] = {}
    for i, g in enumerate(ts.cv_groups):
        jobs.setdefault(g, []).append(i)
    order = sorted(jobs, key=lambda g: float(ts.started[jobs[g]].min()))
    k = min(n_folds, len(order))
    return [
        np.array(sorted(i for g in order[f::k] for i in jobs[g]), dtype=np.intp) for f in range(k)
    ]


def fit_forecaster(ts: TrainingSet) -> Forecaster:
    """Centres and classifier on every row; the band's residual quantiles, the Platt
    scaling and the choice of tail method from CALIBRATION_FOLDS job-held-out refits (with
    a single Slurm job nothing can be held out: in-sample residuals, which are too narrow)."""
    columns = informative_columns(ts)
    thresholds = tail_thresholds(ts)
    label, known = tail_labels(ts, thresholds)
    centres = _fit_centres(ts, columns)
    classifier, base_rate = _fit_classifier(ts, thresholds, columns)
    folds = job_folds(ts, CALIBRATION_FOLDS)
    residuals = {t: np.empty(len(ts)) for t in TARGETS}
    raw_p = np.full(len(ts), base_rate)
    if len(folds) < 2:
        whole = Forecaster(centres, {}, classifier, thresholds, base_rate, columns=columns)
        for t, c in whole.centre(ts.X).items():
            residuals[t] = np.log(ts.targets[t]) - c
        raw_p = whole.classifier_probability(ts.X)
    for held in folds if len(folds) >= 2 else []:
        keep = np.setdiff1d(np.arange(len(ts)), held)
        part = ts.subset(keep)
        cols = informative_columns(part)
        fold_clf, fold_rate = _fit_classifier(part, thresholds, cols)
        fold = Forecaster(
            _fit_centres(part, cols), {}, fold_clf, thresholds, fold_rate, columns=cols
        )
        for t, c in fold.centre(ts.X[held]).items():
            residuals[t][held] = np.log(ts.targets[t][held]) - c
        raw_p[held] = fold.classifier_probability(ts.X[held])
    shifts = {
        t: np.array([conformal_shift(residuals[t], tau) for tau in QUANTILES]) for t in TARGETS
    }
    fc = Forecaster(centres, shifts, classifier, thresholds, base_rate, columns=columns)
    if known.any():
        platt = _platt(raw_p[known], label[known])
        by_classifier = _sigmoid(platt[0] * _logit(raw_p[known]) + platt[1])
        # the bands of each held-out row around its fold model's centre
        oof_mean = np.exp(
            (np.log(ts.targets["mean_us"]) - residuals["mean_us"])[:, None]
            + shifts["mean_us"][None, :]
        )
        by_bands = np.array(
            [exceedance(oof_mean[i], thresholds[ts.key[i]]) for i in np.flatnonzero(known)]
        )
        fc.platt = platt
        if _brier(by_bands, label[known]) < _brier(by_classifier, label[known]):
            fc.tail_method = "quantiles"
    return fc


def band_of(quantiles: FloatArray, band: str) -> tuple[FloatArray, FloatArray]:
    lo, hi = BANDS[band]
    return quantiles[:, QUANTILES.index(lo)], quantiles[:, QUANTILES.index(hi)]
