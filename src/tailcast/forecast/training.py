"""`predict train` and `predict evaluate`: the store's runs → time-ordered validation →
models fitted on every run → a model directory with its metadata record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tailcast import __version__
from tailcast.collectors.topology import Topology
from tailcast.forecast.dataset import (
    RUNS_QUERY,
    SNAPSHOT_JOBS_QUERY,
    SNAPSHOT_UTIL_QUERY,
    TARGETS,
    TrainingSet,
    load_training_set,
)
from tailcast.forecast.features import CATEGORICAL, FEATURES, MONOTONE_INCREASING, b_profiles
from tailcast.forecast.models import BANDS, CALIBRATION_FOLDS, TAIL_QUANTILE, fit_forecaster
from tailcast.forecast.persist import model_dir, save_model, topology_record
from tailcast.forecast.validation import cross_validate
from tailcast.store import Catalog


@dataclass(frozen=True)
class Trained:
    directory: Path
    meta: dict[str, Any]


def evaluate(
    catalog: Catalog, topo: Topology | None, n_folds: int
) -> tuple[TrainingSet, dict[str, Any]]:
    ts = load_training_set(catalog, topo)
    return ts, cross_validate(ts, n_folds)


def train(catalog: Catalog, topo: Topology | None, name: str, n_folds: int) -> Trained:
    """Validates (unless n_folds is 0), fits on all runs and saves; the scores go into the
    metadata record."""
    directory = model_dir(name, catalog.results)
    if n_folds > 0:
        ts, scores = evaluate(catalog, topo, n_folds)
    else:  # a quick refit, e.g. after new runs: the record says it was not validated
        ts, scores = load_training_set(catalog, topo), None
    fc = fit_forecaster(ts)
    meta = {
        "name": name,
        "created_at": datetime.now(UTC).isoformat(),
        "versions": {
            "tailcast": __version__,
            "scikit-learn": version("scikit-learn"),
            "skops": version("skops"),
            "numpy": version("numpy"),
        },
        "store": str(catalog.results.root),
        "training_query": {
            "runs": RUNS_QUERY.strip(),
            "snapshot_jobs": SNAPSHOT_JOBS_QUERY,
            "snapshot_utilisation": SNAPSHOT_UTIL_QUERY,
        },
        "features": list(FEATURES),
        "features_used": fc.feature_names(),
        "categorical_features": list(CATEGORICAL),
        "monotone_increasing": list(MONOTONE_INCREASING),
        "targets": list(TARGETS),
        "bands": {k: list(v) for k, v in BANDS.items()},
        "calibration_folds": CALIBRATION_FOLDS,
        "tail_rule": (
            f"run mean above the p{TAIL_QUANTILE:g} of the training run means of its "
            "(benchmark, msg_size_bytes, locality) group (seed 001 Fig. 1)"
        ),
        "data_range": ts.data_range(),
        "b_profiles": b_profiles(ts.X),
        "topology": topology_record(topo),
        "scores": scores,
    }
    save_model(fc, meta, directory)
    return Trained(directory, meta)
