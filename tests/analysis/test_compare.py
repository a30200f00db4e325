from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tailcast.analysis.compare import compare_samples
from tailcast.cli.main import app
from tailcast.errors import UsageError
from tailcast.store import ResultsDir


def test_a_sample_against_itself() -> None:
    x = np.random.default_rng(2).lognormal(0, 0.5, 1000)
    res = compare_samples(x, x)
    assert res.ks_statistic == 0.0 and res.ks_pvalue == 1.0
    assert res.wasserstein == 0.0
    assert all(p["rel_error"] == 0.0 for p in res.percentiles.values())
    assert res.qq_measured == res.qq_simulated


def test_shifted_integers_give_the_exact_ks_and_wasserstein() -> None:
    # measured 0..99, simulated 10..109: the ECDFs differ by exactly 10/100 on [0, 110),
    # so D = 0.10, and every quantile moves by 10, so W1 = 10.
    measured = np.arange(100.0)
    res = compare_samples(measured, measured + 10.0)
    assert res.ks_statistic == pytest.approx(0.10, abs=1e-12)
    assert res.wasserstein == pytest.approx(10.0, abs=1e-12)
    p50 = res.percentiles["p50"]
    assert p50["measured"] == 49.5 and p50["simulated"] == 59.5
    assert p50["rel_error"] == pytest.approx(10 / 49.5)
    assert np.allclose(np.array(res.qq_simulated) - np.array(res.qq_measured), 10.0)


def test_empty_side_is_an_error() -> None:
    with pytest.raises(UsageError):
        compare_samples([], [1.0])


def test_cli_compare_parquet_against_replay(results_home: Path, tmp_path: Path) -> None:
    measured = tmp_path / "measured.parquet"
    pq.write_table(pa.table({"latency_us": np.arange(100.0)}), measured)
    rd = ResultsDir()
    rd.write("replays", [{"replay_id": "r1", "fabric": "ideal"}])
    rd.write(
        "replay_iterations",
        {
            "replay_id": ["r1"] * 100,
            "iteration": np.arange(100),
            "latency_us": np.arange(100.0) + 10,
        },
    )
    out = CliRunner().invoke(
        app, ["analyze", "compare", "--measured", str(measured), "--simulated", "r1", "--json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["ks_statistic"] == pytest.approx(0.10)
    assert doc["wasserstein"] == pytest.approx(10.0)
    assert doc["provenance"]["simulated"]["kind"] == "replay"
    assert doc["provenance"]["measured"]["files"] == [str(measured)]
    same = CliRunner().invoke(
        app, ["analyze", "compare", "--measured", "r1", "--simulated", "r1", "--json"]
    )
    assert json.loads(same.stdout)["ks_statistic"] == 0.0
