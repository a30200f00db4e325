"""`predict tail --simulate`: the benchmark replayed on a fabric beside the queue's running
jobs, on recorded queues of the local 16-node Slurm and on the live one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tailcast.store import Catalog, ResultsDir
from tests.forecast.conftest import copy_store, tailcast

# Different islands on the bundled tree-2x2x4 fabric (node01..node16, 2 islands x 2 groups x 4
# nodes): the candidate's traffic crosses the group and island uplinks other jobs share.
CANDIDATE = "node[01,05,09,13]"
ARGS = ("--benchmark", "alltoall", "--size", "1M", "--nodes", "4", "--nodelist", CANDIDATE)


def _simulated(home: Path, *args: str) -> dict[str, Any]:
    res = tailcast("predict", "tail", *ARGS, "--simulate", "tree-2x2x4", *args, "--json", home=home)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    sim: dict[str, Any] = doc["simulated"]
    assert sim["nodes"] == CANDIDATE and sim["ranks"] == 4 and sim["iterations"] == 200
    assert sim["p50_us"] <= sim["p99_us"]
    sim["b"] = doc["b"]
    return sim


def _snapshot_with_candidate(home: Path, quiet: bool) -> str:
    """A recorded snapshot taken for a run on CANDIDATE, at b = 0 or at the highest b."""
    order = "ASC" if quiet else "DESC"
    with Catalog(ResultsDir(home)) as cat:
        rows = cat.rows(
            "SELECT u.snapshot_id FROM utilisation u JOIN snapshots s "
            "ON s.snapshot_id = u.snapshot_id AND s.job_id = u.own_job_id "
            "WHERE list_sort(s.nodes) = ['node01', 'node05', 'node09', 'node13'] "
            f"ORDER BY u.b {order}, u.taken_at LIMIT 1"
        )
    return str(rows[0]["snapshot_id"])


def test_recorded_queues_quiet_and_loaded(tmp_path: Path) -> None:
    home = copy_store(tmp_path / "home")
    quiet = _simulated(home, "--snapshot", _snapshot_with_candidate(home, quiet=True))
    loaded = _simulated(home, "--snapshot", _snapshot_with_candidate(home, quiet=False))
    assert quiet["b"] == 0.0 and quiet["background_jobs"] == 0
    assert loaded["b"] > 0.5 and loaded["background_jobs"] >= 2
    # Nothing else on the fabric: every iteration is the same closed-form alltoall.
    assert quiet["p99_us"] == pytest.approx(quiet["p50_us"], rel=1e-9)
    # The queue's jobs share the candidate's uplinks: a tail appears and the median moves.
    assert loaded["p99_us"] > 1.5 * quiet["p99_us"]
    assert loaded["p50_us"] > quiet["p50_us"]


def test_text_output_and_bad_input(tmp_path: Path) -> None:
    home = copy_store(tmp_path / "home")
    snap = _snapshot_with_candidate(home, quiet=False)
    res = tailcast(
        "predict", "tail", *ARGS, "--snapshot", snap, "--simulate", "tree-2x2x4", home=home
    )
    assert res.returncode == 0, res.stderr
    assert any(
        line.startswith("simulated on tree-2x2x4 (node[01,05,09,13]")
        for line in res.stdout.splitlines()
    )
    # A value of b alone says nothing about where the jobs run.
    res = tailcast("predict", "tail", *ARGS, "--b", "0.5", "--simulate", "tree-2x2x4", home=home)
    assert res.returncode == 2 and "--snapshot" in res.stderr
    # A fabric whose endpoints are not the cluster's nodes.
    res = tailcast("predict", "tail", *ARGS, "--snapshot", snap, "--simulate", "ideal", home=home)
    assert res.returncode == 2 and "no `nodes` key" in res.stderr
    res = tailcast("predict", "tail", *ARGS, "--snapshot", snap, "--simulate", "nope", home=home)
    assert res.returncode == 2 and "nope" in res.stderr


@pytest.mark.slurm
def test_live_queue_p99_rises_with_b(slurm_cluster: Any, tmp_path: Path) -> None:
    """The live queue, empty and then with two 6-node jobs around the candidate."""
    home = tmp_path / "home"
    home.mkdir()
    slurm_cluster.cancel_all()
    env = {**slurm_cluster.full_env(), "TAILCAST_HOME": str(home)}

    def live() -> dict[str, Any]:
        res = subprocess.run(
            [sys.executable, "-m", "tailcast", "predict", "tail", *ARGS,
             "--simulate", "tree-2x2x4", "--json"],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["b_source"].startswith("live")
        sim: dict[str, Any] = doc["simulated"]
        sim["b"] = doc["b"]
        return sim

    for _ in range(100):  # other tests' jobs gone
        if not slurm_cluster.run(["squeue", "-h", "-t", "running"]).strip():
            break
        subprocess.run(["sleep", "0.2"], check=True)
    quiet = live()
    assert quiet["b"] == 0.0 and quiet["background_jobs"] == 0
    steps = [quiet]
    jobs: list[str] = []
    try:
        for nodes in ("node[02-04,06-08]", "node[10-12,14-16]"):
            script = "#!/bin/sh\nsleep 300\n"
            jobs.append(slurm_cluster.sbatch(["-N", "6", "-w", nodes, "-t", "5"], script, tmp_path))
            slurm_cluster.wait_state(jobs[-1], {"RUNNING"}, timeout=120)
            steps.append(live())
    finally:
        slurm_cluster.run(["scancel", *jobs], check=False)
    assert [s["b"] for s in steps] == pytest.approx([0.0, 6 / 16, 12 / 16])
    assert [s["background_nodes"] for s in steps] == [0, 6, 12]
    # Deterministic replays (seed 0): p99 and mean grow with every job that shares the
    # candidate's uplinks.
    p99 = [s["p99_us"] for s in steps]
    mean = [s["mean_us"] for s in steps]
    assert p99[0] < p99[1] < p99[2] and mean[0] < mean[1] < mean[2]
    assert p99[2] > 1.2 * p99[0]
