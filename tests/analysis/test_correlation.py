"""`analyze correlate` against scipy computed independently from what was written."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from typer.testing import CliRunner

from tailcast.cli.main import app
from tailcast.store import ResultsDir
from tests.analysis.campaign import write_campaign


def test_correlate_reproduces_scipy(results_home: Path) -> None:
    runs = write_campaign(ResultsDir())
    # one run with an unstable b: must be left out unless --all-runs
    bad = dict(runs[0], run_id="unstable", b_after=runs[0]["b_before"] + 0.3, b_accepted=False)
    rd = ResultsDir()
    rd.write("runs", [{k: v for k, v in bad.items() if k != "latency"}])
    rd.write(
        "samples",
        {"run_id": ["unstable"] * 3, "iteration": [0, 1, 2], "latency_us": [1e6, 1e6, 1e6]},
    )

    out = CliRunner().invoke(app, ["analyze", "correlate", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["skipped_runs"] == 1
    got = {(g["benchmark"], g["msg_size_bytes"]): g for g in doc["groups"]}

    per_group: dict[tuple[str, int], list[tuple[float, float, float]]] = defaultdict(list)
    for r in runs:
        b = (r["b_before"] + r["b_after"]) / 2
        per_group[(r["benchmark"], r["msg_size_bytes"])].append(
            (b, float(np.mean(r["latency"])), float(np.percentile(r["latency"], 99)))
        )
    assert set(got) == set(per_group)
    for key, pts in per_group.items():
        b, mean, p99 = (np.array(c) for c in zip(*pts, strict=True))
        g = got[key]
        assert g["n_runs"] == len(pts)
        for stat, y in (("mean", mean), ("p99", p99)):
            pr, sr = scipy.stats.pearsonr(b, y), scipy.stats.spearmanr(b, y)
            assert g[f"pearson_r_{stat}"] == pytest.approx(pr.statistic, rel=1e-9)
            assert g[f"pearson_p_{stat}"] == pytest.approx(pr.pvalue, rel=1e-6)
            assert g[f"spearman_rho_{stat}"] == pytest.approx(sr.statistic, rel=1e-9)
            assert g[f"spearman_p_{stat}"] == pytest.approx(sr.pvalue, rel=1e-6, abs=1e-300)
    # latency grows with b in this campaign, as in seed 001 Fig. 4
    assert all(g["spearman_rho_mean"] > 0.5 for g in doc["groups"])
    assert len(doc["provenance"]["files"]) == 2 * len(runs) + 2

    everything = CliRunner().invoke(app, ["analyze", "correlate", "--all-runs", "--json"])
    first = json.loads(everything.stdout)
    assert first["skipped_runs"] == 0


def test_correlate_on_an_empty_store(results_home: Path) -> None:
    out = CliRunner().invoke(app, ["analyze", "correlate", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["groups"] == []
