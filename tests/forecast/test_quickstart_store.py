"""`predict train / evaluate / tail` on the store a new user has first: the bundled quickstart
campaign (72 real runs of the network lab in 8 Slurm jobs, b 0–0.5, two placements), with and
without a topology, on the scikit-learn the venv holds (issue 41: 1.9 refused the all-NaN
topology columns, and training took 223 s)."""

from __future__ import annotations

import json
import resource
import shutil
from pathlib import Path

import numpy as np
import pytest

from tailcast.forecast.dataset import load_training_set
from tailcast.forecast.features import FEATURES
from tailcast.forecast.models import QUANTILES, fit_forecaster, informative_columns
from tailcast.forecast.summary import score_lines
from tailcast.quickstart import BUNDLED_TABLES, bundled_dir
from tailcast.store import Catalog, ResultsDir
from tests.forecast.conftest import TOPOLOGY, tailcast

TOPOLOGY_FEATURES = ("bg_share_in_groups", "bg_share_in_islands", "levels_spanned")


def _store(home: Path) -> Path:
    """The quickstart's first step: its bundled tables copied into a fresh store."""
    for table in BUNDLED_TABLES:
        shutil.copytree(bundled_dir() / table, home / table)
    return home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _store(tmp_path_factory.mktemp("quickstart") / "home")


def _run(home: Path, *args: str, env_extra: dict[str, str] | None = None) -> dict[str, object]:
    res = tailcast(*args, "--json", home=home, env_extra=env_extra)
    assert res.returncode == 0, res.stderr
    doc: dict[str, object] = json.loads(res.stdout)
    return doc


def test_feature_columns_without_values_are_left_out(home: Path) -> None:
    with Catalog(ResultsDir(home)) as cat:
        ts = load_training_set(cat, None)
    assert len(ts) == 72 and len(set(ts.cv_groups)) == 8
    assert np.isnan(ts.X[:, FEATURES.index("levels_spanned")]).all()  # no topology
    used = {FEATURES[j] for j in informative_columns(ts)}
    assert not used & set(TOPOLOGY_FEATURES)
    assert "ranks" not in used  # one value (4) in every run: nothing to split on
    # recorded within half an hour: time of day would only say which job came first
    assert not used & {"hour_sin", "hour_cos", "weekday"}
    assert {"b", "benchmark", "log2_msg_bytes", "locality"} <= used
    fc = fit_forecaster(ts)
    q = fc.quantiles(ts.X)
    for target, values in q.items():
        assert values.shape == (72, len(QUANTILES)) and (values > 0).all(), target
        assert (np.diff(values, axis=1) >= 0).all(), target


def test_train_evaluate_and_tail_without_topology(home: Path, tmp_path: Path) -> None:
    # No scontrol answers here (a Slurm of the test setup must not lend its topology).
    no_slurm = {"SLURM_CONF": str(tmp_path / "absent.conf")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    trained = _run(home, "predict", "train", "--model", "plain", env_extra=no_slurm)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # validation (5 folds) and the final fit: 49 CPU-s before one centre per target
    assert cpu < 25, cpu
    assert trained["topology"] is None
    used = trained["features_used"]
    assert isinstance(used, list) and not set(used) & set(TOPOLOGY_FEATURES)
    scores = _run(home, "predict", "evaluate", env_extra=no_slurm)
    assert scores["held_out_runs"] == 54
    targets = scores["targets"]
    assert isinstance(targets, dict)
    for target, rep in targets.items():
        model = rep["model"]
        # the band's empirical coverage is reported, and on these runs it is near nominal
        assert 0.8 <= model["coverage"]["90%"] <= 1.0, (target, model["coverage"])
        assert model["median_width_ratio"]["90%"] > 1.0
    band = next(line for line in score_lines(scores) if line.startswith("90% band"))
    assert "covered" in band and "of 54 held-out runs" in band
    tail = _run(
        home, "predict", "tail", "--model", "plain", "--benchmark", "alltoall", "--size", "1M",
        "--b", "0.5", "--locality", "different_islands",
    )  # fmt: skip
    learned, baseline = tail["learned"], tail["baseline"]
    assert isinstance(learned, dict) and isinstance(baseline, dict)
    for target, bands in learned["bands"].items():
        for lo, hi in bands.values():
            assert 0 < lo <= learned["median"][target] <= hi, (target, bands)
    assert learned["band_90_coverage"]["p99_us"] == targets["p99_us"]["model"]["coverage"]["90%"]
    # measured p99 at b = 0.5 across the islands: 0.36 s and 1.13 s
    assert 0.2e6 < learned["median"]["p99_us"] < 2.5e6
    # the log-linear baseline: a positive interval (a line in µs reached −249,652 µs here)
    assert 0 < baseline["mean_us_low"] < baseline["mean_us"] < baseline["mean_us_high"]


def test_train_and_tail_with_a_topology(home: Path) -> None:
    trained = _run(home, "predict", "train", "--folds", "0", "--topology", str(TOPOLOGY))
    assert trained["scores"] is None
    assert {"levels_spanned", "groups_spanned"} <= set(trained["features_used"])
    same = _run(
        home, "predict", "tail", "--benchmark", "bcast", "--size", "4", "--b", "0.0",
        "--nodelist", "node[01-04]",
    )  # fmt: skip
    learned = same["learned"]
    assert isinstance(learned, dict) and learned["locality"] == "same_group"
    assert learned["band_90_coverage"] is None  # trained with --folds 0
    lo, hi = learned["bands"]["p99_us"]["90%"]
    assert 0 < lo <= learned["median"]["p99_us"] <= hi
    # Without a queue there is nothing to place the job by: the placement must be given.
    res = tailcast(
        "predict", "tail", "--benchmark", "bcast", "--size", "4", "--b", "0.0", home=home
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tailcast: error: ") and "--locality" in lines[0]
