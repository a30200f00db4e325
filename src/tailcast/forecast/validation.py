"""Honest validation of the forecasters: grouped, time-ordered cross-validation against the
linear baseline (`forecast.baseline`).

Folds (`forecast.folds`): grouped by Slurm job, time-ordered, never training on the future.

Scores on the pooled held-out runs, per target:
- pinball (quantile) loss per quantile, in µs and on log(target) (scale-free: a 4 ms
  alltoall and a 40 µs bcast weigh alike), averaged over the quantiles;
- coverage of the 50/90/99 % bands and calibration (share of runs at or below each
  predicted quantile, which should equal the quantile);
- the same for the baseline — per (benchmark, size, locality) least squares on b with a
  Student-t predictive distribution — on the held-out runs it can predict (its group has
  ≥ 3 training runs), with the model scored on exactly those runs beside it;
- for P(long tail): Brier score and log loss of the classifier, of the baseline's
  P(mean > threshold) and of the training base rate, and a reliability table.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from tailcast.forecast.baseline import MIN_RUNS, linear_quantiles, tail_probability
from tailcast.forecast.dataset import TARGETS, TrainingSet
from tailcast.forecast.folds import time_ordered_folds
from tailcast.forecast.models import BANDS, QUANTILES, band_of, fit_forecaster, tail_labels

FloatArray = npt.NDArray[np.float64]
RELIABILITY_BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)


def pinball(y: FloatArray, q: FloatArray, tau: float) -> float:
    """Mean pinball loss of quantile forecasts q for level tau (Koenker & Bassett 1978)."""
    diff = y - q
    return float(np.mean(np.maximum(tau * diff, (tau - 1) * diff)))


def quantile_scores(y: FloatArray, q: FloatArray) -> dict[str, Any]:
    """Pinball (µs and log), band coverage and calibration of rows × QUANTILES forecasts."""
    log_y, log_q = np.log(y), np.log(np.maximum(q, 1e-12))
    per_tau = {f"{t:g}": pinball(y, q[:, j], t) for j, t in enumerate(QUANTILES)}
    coverage, width, ratio = {}, {}, {}
    for band in BANDS:
        lo, hi = band_of(q, band)
        coverage[band] = float(np.mean((y >= lo) & (y <= hi)))
        width[band] = float(np.median(hi - lo))
        ratio[band] = float(np.median(hi / np.maximum(lo, 1e-12)))
    return {
        "runs": len(y),
        "pinball_us_mean": float(np.mean(list(per_tau.values()))),
        "pinball_log_mean": float(
            np.mean([pinball(log_y, log_q[:, j], t) for j, t in enumerate(QUANTILES)])
        ),
        "pinball_us": per_tau,
        "coverage": coverage,
        "median_width_us": width,
        "median_width_ratio": ratio,  # high / low: the learned bands are multiples of a centre
        "calibration": {f"{t:g}": float(np.mean(y <= q[:, j])) for j, t in enumerate(QUANTILES)},
    }


def _baseline_rows(
    train: TrainingSet, test: TrainingSet, target: str, thresholds: dict[Any, float]
) -> tuple[FloatArray, FloatArray]:
    """Baseline quantiles (NaN rows where its group has < MIN_RUNS training runs) and its
    P(long tail) (NaN where unknown) for every test row."""
    q = np.full((len(test), len(QUANTILES)), np.nan)
    p = np.full(len(test), np.nan)
    members: dict[Any, list[int]] = {}
    for i, k in enumerate(train.key):
        members.setdefault(k, []).append(i)
    for i, k in enumerate(test.key):
        rows = members.get(k, [])
        if len(rows) < MIN_RUNS:
            continue
        b_hist = train.b_run[rows]
        q[i] = linear_quantiles(
            b_hist, train.targets[target][rows], test.b_submit[i : i + 1], QUANTILES
        )[0]
        if k in thresholds:
            p[i] = tail_probability(
                b_hist, train.targets["mean_us"][rows], float(test.b_submit[i]), thresholds[k]
            )
    return q, p


def _brier(p: FloatArray, label: npt.NDArray[np.bool_]) -> float:
    return float(np.mean((p - label) ** 2))


def _log_loss(p: FloatArray, label: npt.NDArray[np.bool_]) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(np.where(label, np.log(p), np.log(1 - p))))


def _reliability(p: FloatArray, label: npt.NDArray[np.bool_]) -> list[dict[str, Any]]:
    out = []
    for lo, hi in itertools.pairwise(RELIABILITY_BINS):
        inside = (p >= lo) & ((p < hi) if hi < 1.0 else (p <= hi))
        if inside.any():
            out.append(
                {
                    "bin": [lo, hi],
                    "runs": int(inside.sum()),
                    "mean_predicted": float(p[inside].mean()),
                    "observed": float(label[inside].mean()),
                }
            )
    return out


def cross_validate(ts: TrainingSet, n_folds: int = 5) -> dict[str, Any]:
    """Scores of the learned models and of the baseline on time-ordered held-out runs."""
    folds = time_ordered_folds(ts, n_folds)
    y = {t: [] for t in TARGETS}  # type: dict[str, list[FloatArray]]
    q_model = {t: [] for t in TARGETS}  # type: dict[str, list[FloatArray]]
    q_base = {t: [] for t in TARGETS}  # type: dict[str, list[FloatArray]]
    p_model, p_clf, p_base, p_clim, labels, known = [], [], [], [], [], []
    fold_info: list[dict[str, Any]] = []
    for fold in folds:
        train, test = ts.subset(fold.train), ts.subset(fold.test)
        fc = fit_forecaster(train)  # calibrated on folds of its own training jobs only
        predicted = fc.quantiles(test.X)
        for target in TARGETS:
            y[target].append(test.targets[target])
            q_model[target].append(predicted[target])
            q_base[target].append(_baseline_rows(train, test, target, fc.thresholds)[0])
        label, has_label = tail_labels(test, fc.thresholds)
        labels.append(label)
        known.append(has_label)
        p_model.append(fc.tail_probability(test.X, test.key))
        p_clf.append(fc.classifier_probability(test.X))
        p_base.append(_baseline_rows(train, test, "mean_us", fc.thresholds)[1])
        p_clim.append(np.full(len(test), fc.base_rate))
        fold_info.append(
            {
                "train_runs": len(train),
                "test_runs": len(test),
                "train_jobs": len(set(train.cv_groups)),
                "test_jobs": len(set(test.cv_groups)),
                "test_b": [float(test.b_submit.min()), float(test.b_submit.max())],
                "tail_method": fc.tail_method,
            }
        )
    targets_report = {}
    for target in TARGETS:
        yt = np.concatenate(y[target])
        qm, qb = np.vstack(q_model[target]), np.vstack(q_base[target])
        paired = np.isfinite(qb).all(axis=1)
        targets_report[target] = {
            "model": quantile_scores(yt, qm),
            "paired": {
                "runs": int(paired.sum()),
                "model": quantile_scores(yt[paired], qm[paired]) if paired.any() else None,
                "baseline": quantile_scores(yt[paired], qb[paired]) if paired.any() else None,
            },
        }
    lab, kn = np.concatenate(labels), np.concatenate(known)
    pm, pb, pc = np.concatenate(p_model), np.concatenate(p_base), np.concatenate(p_clim)
    pk = np.concatenate(p_clf)
    both = kn & np.isfinite(pb)
    tail: dict[str, Any] = {"runs_labelled": int(kn.sum()), "in_tail": int(lab[kn].sum())}
    if kn.any():
        tail |= {
            "model": {"brier": _brier(pm[kn], lab[kn]), "log_loss": _log_loss(pm[kn], lab[kn])},
            "base_rate": {"brier": _brier(pc[kn], lab[kn])},
            "classifier_only": {"brier": _brier(pk[kn], lab[kn])},
            "reliability": _reliability(pm[kn], lab[kn]),
        }
    if both.any():
        tail["paired"] = {
            "runs": int(both.sum()),
            "model_brier": _brier(pm[both], lab[both]),
            "baseline_brier": _brier(pb[both], lab[both]),
        }
    return {
        "folds": fold_info,
        "held_out_runs": sum(len(f.test) for f in folds),
        "targets": targets_report,
        "tail": tail,
    }
