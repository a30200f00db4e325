"""Submission-time tail prediction from stored runs (seed 001 §5.2–5.3)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from tailcast.errors import NotAcceptedError
from tailcast.forecast.baseline import load_run_stats, predict_tail
from tailcast.store import Catalog, ResultsDir


def _campaign(results: ResultsDir, bs: list[float], accepted: bool = True) -> None:
    """Runs whose latency scales with b: sample i of a run is (100 + 400 b) * f_i."""
    rng = np.random.default_rng(7)
    for b in bs:
        run_id = uuid.uuid4().hex
        results.write(
            "runs",
            [
                {
                    "run_id": run_id,
                    "benchmark": "reduce",
                    "msg_size_bytes": 1 << 20,
                    "locality": "different_islands",
                    "b_before": b - 0.01,
                    "b_after": b + 0.01,
                    "b_accepted": accepted,
                }
            ],
        )
        lat = (100 + 400 * b) * rng.lognormal(0, 0.1, 200)
        results.write(
            "samples", {"run_id": [run_id] * 200, "iteration": list(range(200)), "latency_us": lat}
        )


def test_fit_and_tail_verdict_follow_the_history(results_home: Path) -> None:
    results = ResultsDir()
    bs = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    _campaign(results, bs)
    _campaign(results, [0.9], accepted=False)  # unstable b: must be ignored
    with Catalog(results) as cat:
        runs = load_run_stats(cat, "reduce", 1 << 20, "different_islands")
    assert len(runs.b) == len(bs)
    np.testing.assert_allclose(runs.b, bs)
    slope, intercept = np.polyfit(runs.b, np.log(runs.mean_us), 1)
    low = predict_tail(runs, 0.15, "reduce", 1 << 20)
    high = predict_tail(runs, 0.75, "reduce", 1 << 20)
    # least squares of log(mean) on b, back in µs
    assert low.mean_us == pytest.approx(np.exp(intercept + slope * 0.15), rel=1e-9)
    # the generating law 100 + 400 b rises ×2.71 from b = 0.1 to 0.7
    rise = (
        predict_tail(runs, 0.7, "reduce", 1 << 20).mean_us
        / predict_tail(runs, 0.1, "reduce", 1 << 20).mean_us
    )
    assert 2.4 < rise < 3.1, rise
    assert 0 < low.mean_us_low < low.mean_us < low.mean_us_high
    assert high.long_tail_expected and not low.long_tail_expected
    assert high.tail_share_at_or_above_b is None  # no run with b >= 0.75 in the history
    assert low.tail_share_at_or_above_b == pytest.approx(1 / 6)  # 6 runs at b >= 0.15
    assert not low.extrapolated and high.extrapolated


def test_interval_stays_positive_when_runs_spread_over_a_decade(results_home: Path) -> None:
    """Four runs of one group whose means spread over a decade, as the quickstart's 1 MiB
    alltoall across islands does (347 to 581 ms, the p99 369 ms to 1.1 s): a straight line in
    µs gave that group a 90 % interval reaching −249,652 µs."""
    results = ResultsDir()
    rng = np.random.default_rng(3)
    for b, scale in ((0.0, 1.0), (0.25, 3.0), (0.5, 10.0), (0.5, 0.8)):
        run_id = uuid.uuid4().hex
        results.write(
            "runs",
            [
                {
                    "run_id": run_id,
                    "benchmark": "alltoall",
                    "msg_size_bytes": 1 << 20,
                    "locality": "different_islands",
                    "b_before": b,
                    "b_after": b,
                    "b_accepted": True,
                }
            ],
        )
        lat = 3e5 * scale * rng.lognormal(0, 0.1, 200)
        results.write(
            "samples", {"run_id": [run_id] * 200, "iteration": list(range(200)), "latency_us": lat}
        )
    with Catalog(results) as cat:
        runs = load_run_stats(cat, "alltoall", 1 << 20, "different_islands")
    for b in (0.0, 0.5, 1.0):
        pred = predict_tail(runs, b, "alltoall", 1 << 20)
        assert 0 < pred.mean_us_low < pred.mean_us < pred.mean_us_high, pred
        assert pred.p99_us > 0


def test_too_little_history_is_not_accepted(results_home: Path) -> None:
    results = ResultsDir()
    _campaign(results, [0.3, 0.4])
    with Catalog(results) as cat:
        runs = load_run_stats(cat, "reduce", 1 << 20)
    with pytest.raises(NotAcceptedError, match="only 2 accepted runs"):
        predict_tail(runs, 0.5, "reduce", 1 << 20)


def test_predict_cli_json_and_exit_code_3(results_home: Path) -> None:
    _campaign(ResultsDir(), [0.2, 0.4, 0.6, 0.8])
    exe = [sys.executable, "-m", "tailcast", "predict", "tail"]
    out = subprocess.run(
        [*exe, "--benchmark", "reduce", "--size", "1M", "--b", "0.5", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["b_source"] == "--b" and doc["b"] == 0.5 and doc["learned"] is None
    assert doc["baseline"]["runs"] == 4 and doc["baseline"]["msg_size_bytes"] == 1 << 20
    assert any("no trained model" in n for n in doc["notes"])
    missing = subprocess.run(
        [*exe, "--benchmark", "bcast", "--size", "4", "--b", "0.5"], capture_output=True, text=True
    )
    assert missing.returncode == 3 and "only 0 accepted runs" in missing.stderr
