"""Training, persistence and `predict tail` on the recorded b-sweep campaign (real runs of the
local 16-node Slurm; tests/data/bsweep-16node)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import skops.io

from tailcast.errors import InputError
from tailcast.forecast.models import QUANTILES, conformal_shift
from tailcast.forecast.persist import META_FILE, MODEL_FILE, load_model
from tailcast.forecast.validation import pinball
from tailcast.store import Catalog, ResultsDir
from tests.forecast.conftest import tailcast

pytestmark = pytest.mark.slow


def test_pinball_and_conformal_shift_by_hand() -> None:
    y = np.array([1.0, 2.0, 3.0])
    assert pinball(y, np.full(3, 2.0), 0.9) == pytest.approx((0.1 + 0.0 + 0.9) / 3)
    residuals = np.arange(1.0, 20.0)  # 19 held-out residuals
    # above the median: the ⌈τ(n+1)⌉-th smallest; below: mirrored; τ=0.5 the median
    assert conformal_shift(residuals, 0.9) == 18.0
    assert conformal_shift(residuals, 0.1) == 2.0
    assert conformal_shift(residuals, 0.5) == 10.0
    assert conformal_shift(residuals, 0.995) == 19.0


def test_trained_model_record_and_round_trip(trained_home: Path) -> None:
    loaded = load_model("tail", ResultsDir(trained_home))
    meta = loaded.meta
    for key in ("training_query", "features", "data_range", "scores", "versions", "topology"):
        assert key in meta
    assert meta["scores"] is None  # trained with --folds 0
    assert meta["data_range"]["b"][0] == 0.0 and meta["data_range"]["b"][1] >= 0.6
    assert meta["versions"]["tailcast"] and meta["versions"]["scikit-learn"]
    used = meta["features_used"]
    assert set(used) <= set(meta["features"]) and "b" in used
    assert len(used) == loaded.forecaster.centres["p99_us"].n_features_in_
    assert all(len(v) == len(QUANTILES) for v in meta["residual_quantiles"].values())
    assert meta["topology"]["paths"]["node16"] == ["island2", "group4"]
    assert loaded.topology is not None and loaded.topology.classify(["node01", "node16"])


def _copy_model(trained_home: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(trained_home / "models", home / "models")
    return home


def test_damaged_or_foreign_model_files_are_refused(trained_home: Path, tmp_path: Path) -> None:
    home = _copy_model(trained_home, tmp_path)
    directory = home / "models" / "tail"
    with pytest.raises(InputError, match="no trained model"):
        load_model("other", ResultsDir(home))
    original = (directory / MODEL_FILE).read_bytes()
    (directory / MODEL_FILE).write_bytes(original[:-100])
    with pytest.raises(InputError, match="SHA-256 differs") as err:
        load_model("tail", ResultsDir(home))
    assert str(directory / MODEL_FILE) in str(err.value)
    # A well-formed skops file holding a type no forecast model has, with a matching record.
    from pathlib import PurePosixPath

    foreign = {"centres": {}, "classifier": PurePosixPath("/etc/passwd")}
    skops.io.dump(foreign, directory / MODEL_FILE)
    meta = json.loads((directory / META_FILE).read_text())
    meta["model_sha256"] = hashlib.sha256((directory / MODEL_FILE).read_bytes()).hexdigest()
    (directory / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(InputError, match="types a forecast model never has"):
        load_model("tail", ResultsDir(home))
    (directory / META_FILE).write_text("{not json")
    with pytest.raises(InputError, match="unreadable model metadata"):
        load_model("tail", ResultsDir(home))


def _tail(home: Path, *args: str) -> dict[str, object]:
    res = tailcast(
        "predict", "tail", "--benchmark", "alltoall", "--size", "32K", *args, "--json", home=home
    )
    assert res.returncode == 0, res.stderr
    doc: dict[str, object] = json.loads(res.stdout)
    return doc


def test_tail_forecast_rises_with_b_and_replays_a_snapshot(trained_home: Path) -> None:
    quiet = _tail(trained_home, "--b", "0.0", "--locality", "different_islands")
    loaded = _tail(trained_home, "--b", "0.6", "--locality", "different_islands")
    for doc in (quiet, loaded):
        learned = doc["learned"]
        assert isinstance(learned, dict) and doc["baseline"] is not None
        lo, hi = learned["bands"]["p99_us"]["90%"]
        assert lo <= learned["median"]["p99_us"] <= hi
        assert 0.0 <= learned["tail_probability"] <= 1.0
    q, lo_ = quiet["learned"], loaded["learned"]
    assert isinstance(q, dict) and isinstance(lo_, dict)
    # b is a monotone-increasing feature of every model
    assert lo_["median"]["p99_us"] >= q["median"]["p99_us"]
    assert lo_["median"]["mean_us"] > q["median"]["mean_us"]
    # A stored snapshot: the queue before a measured run at the highest level.
    with Catalog(ResultsDir(trained_home)) as cat:
        row = cat.rows(
            "SELECT snapshot_id, b FROM utilisation WHERE b > 0.6 ORDER BY taken_at LIMIT 1"
        )[0]
    replay = _tail(trained_home, "--snapshot", row["snapshot_id"], "--nodes", "4")
    assert replay["b"] == pytest.approx(row["b"])
    assert replay["b_source"] == f"snapshot {row['snapshot_id']}"
    learned = replay["learned"]
    assert isinstance(learned, dict) and learned["placement"] in {
        "likely placement",
        "job would wait",
    }


def test_tail_text_prints_the_hook_line_and_the_baseline(trained_home: Path) -> None:
    res = tailcast(
        "predict", "tail", "--benchmark", "reduce", "--size", "4", "--b", "0.5",
        "--locality", "same_group", home=trained_home,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.splitlines()[:2]
    assert first.startswith("reduce 4 B on 4 nodes (same group) now: p99 ≈ ")
    assert "long tail" in first and "(P = " in first
    assert second.startswith("baseline (log-linear in b, ")
