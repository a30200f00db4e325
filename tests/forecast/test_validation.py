"""Time-ordered, grouped validation on the recorded b-sweep campaign (168 real runs in 28
Slurm jobs, b 0–0.625): folds never train on the future, and the issue's acceptance
figures — the 90 % band covers 85–95 % of held-out runs — hold; the learned model's
pinball loss and Brier score are compared with the baseline's and the base rate's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tailcast.collectors.topology import load_topology_toml
from tailcast.forecast.dataset import load_training_set
from tailcast.forecast.folds import time_ordered_folds
from tailcast.store import Catalog, ResultsDir
from tests.forecast.conftest import RECORDED, TOPOLOGY, copy_store, tailcast

pytestmark = pytest.mark.slow


def test_folds_never_train_on_the_future() -> None:
    with Catalog(ResultsDir(RECORDED)) as cat:
        ts = load_training_set(cat, load_topology_toml(TOPOLOGY))
    assert len(ts) == 168 and len(set(ts.cv_groups)) == 28 and ts.without_snapshot == 0
    folds = time_ordered_folds(ts, 5)
    assert len(folds) == 5
    seen: set[int] = set()
    for fold in folds:
        assert ts.ended[fold.train].max() < ts.started[fold.test].min()
        train_jobs = {ts.cv_groups[i] for i in fold.train}
        test_jobs = {ts.cv_groups[i] for i in fold.test}
        assert not train_jobs & test_jobs
        # a job is never split between training and testing
        assert all(ts.cv_groups[i] in test_jobs for i in fold.test)
        assert not seen & set(fold.test.tolist())
        seen |= set(fold.test.tolist())
    # the shuffled phases put high and low b in every block after the first
    assert np.ptp(ts.b_submit[folds[-1].test]) > 0.3


def test_evaluate_meets_the_coverage_target_on_recorded_runs(tmp_path: Path) -> None:
    home = copy_store(tmp_path / "home")
    res = tailcast("predict", "evaluate", "--topology", str(TOPOLOGY), "--json", home=home)
    assert res.returncode == 0, res.stderr
    scores = json.loads(res.stdout)
    assert scores["held_out_runs"] == sum(f["test_runs"] for f in scores["folds"]) > 100
    for target, rep in scores["targets"].items():
        model, paired = rep["model"], rep["paired"]
        assert 0.85 <= model["coverage"]["90%"] <= 0.95, (target, model["coverage"])
        assert model["coverage"]["99%"] >= model["coverage"]["90%"] >= model["coverage"]["50%"]
        # On the runs both predict, the learned model's quantiles beat the baseline's in µs.
        # The baseline is a least-squares line of log latency on b per (benchmark, size,
        # locality) — in µs its intervals went negative — and on this recording (14 runs per
        # group) it has the lower log pinball: 0.076 vs 0.103 for the run mean, 0.100 vs 0.107
        # for the p99 (2026-11-29); in µs its Student-t tails at q0.5 / q99.5 of 12 residual
        # degrees of freedom cost it orders of magnitude.
        assert paired["runs"] > 100
        assert paired["model"]["pinball_us_mean"] < paired["baseline"]["pinball_us_mean"]
    tail = scores["tail"]
    assert tail["runs_labelled"] > 100 and 0 < tail["in_tail"] < tail["runs_labelled"]
    assert tail["model"]["brier"] < tail["base_rate"]["brier"]
