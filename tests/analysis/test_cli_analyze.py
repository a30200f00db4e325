"""The thin CLI layer: tails / bimodality / plot through the Typer app."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tailcast.cli.main import app


@pytest.fixture()
def parquet(tmp_path: Path) -> Path:
    rng = np.random.default_rng(4)
    path = tmp_path / "lat.parquet"
    pq.write_table(
        pa.table(
            {
                "locality": ["near"] * 300 + ["far"] * 300,
                "latency_us": np.r_[rng.normal(10, 1, 300), rng.normal(30, 1, 300)],
            }
        ),
        path,
    )
    return path


def test_tails_by_group_json(parquet: Path) -> None:
    out = CliRunner().invoke(
        app, ["analyze", "tails", str(parquet), "--by", "locality", "--hill-k", "50", "--json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    groups = {g["locality"]: g for g in doc["groups"]}
    assert set(groups) == {"near", "far"} and groups["far"]["n"] == 300
    assert groups["near"]["median"] == pytest.approx(10, abs=0.3)
    assert groups["far"]["hill_k"] == 50
    assert doc["provenance"] == {
        "source": str(parquet),
        "kind": "parquet",
        "query": None,
        "files": [str(parquet)],
        "rows": 600,
    }
    text = CliRunner().invoke(app, ["analyze", "tails", str(parquet), "--by", "locality"])
    assert text.exit_code == 0 and "p99_over_p50" in text.stdout


def test_bimodality_of_the_mixed_sample(parquet: Path) -> None:
    out = CliRunner().invoke(app, ["analyze", "bimodality", str(parquet), "--json"])
    assert out.exit_code == 0, out.output
    (group,) = json.loads(out.stdout)["groups"]
    assert group["verdict"] == "bimodal" and group["dip_pvalue"] < 0.01


def test_plots_from_the_cli(parquet: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (
        ["frequency", str(parquet), "--by", "locality"],
        ["ccdf", str(parquet), "--by", "locality"],
        ["qq", "--measured", str(parquet), "--simulated", str(parquet)],
    ):
        out_dir = tmp_path / args[0]
        res = runner.invoke(app, ["analyze", "plot", *args, "--out", str(out_dir)])
        assert res.exit_code == 0, res.output
        written = [Path(line) for line in res.stdout.split()]
        assert {p.suffix for p in written} == {".png", ".svg"}
        assert all(p.stat().st_size > 1000 for p in written)


def test_bad_column_is_a_usage_error(parquet: Path) -> None:
    out = CliRunner().invoke(app, ["analyze", "tails", str(parquet), "--column", "nope"])
    assert out.exit_code != 0
    assert "no column 'nope'" in str(out.exception)
