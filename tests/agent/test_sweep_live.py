"""A small b-sweep campaign on the real local Slurm + Open MPI: background MPI jobs at the
planned levels, measurement jobs in the planned order, the end jobs cancel the background,
and a model trains on what was measured."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import hostlist
import pytest

from tailcast.store import ResultsDir, read_table

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
TAILCAST = [sys.executable, "-m", "tailcast"]
DONE = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "GONE"}
CAMPAIGN = """
[campaign]
name = "live"
nodes = 4
patterns = ["reduce"]
sizes = ["4", "1K"]
placements = ["different_islands"]
iterations = 30
warmup = 5
tailcast = "{tailcast}"
topology = "topology.example.toml"
time_limit = "00:10:00"

[campaign.env]
OMPI_MCA_btl = "self,tcp"
TAILCAST_HOME = "{home}"
OMPI_ALLOW_RUN_AS_ROOT = "1"
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = "1"

[background]
levels = [0.6, 0.0]
seed = 4
pause_ms = 5.0
settle_s = 2.0
"""


def test_b_sweep_runs_phases_at_planned_b_and_trains(
    slurm_cluster: Any, tmp_path: Path, results_home: Path
) -> None:
    slurm_cluster.cancel_all()
    shutil.copy(REPO / "slurm_jobs" / "topology.example.toml", tmp_path)
    camp = tmp_path / "live.toml"
    tailcast = f"{sys.executable} -m tailcast"
    camp.write_text(CAMPAIGN.format(tailcast=tailcast, home=results_home))
    res = subprocess.run(
        [*TAILCAST, "agent", "submit", str(camp), "--json"],
        cwd=tmp_path,
        env=slurm_cluster.full_env(TAILCAST_HOME=str(results_home)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    phases = json.loads(res.stdout)["phases"]
    assert [round(p["expected_b"], 3) for p in sorted(phases, key=lambda p: p["phase"])] in (
        [0.625, 0.0],
        [0.0, 0.625],
    )
    jobs = [j for p in phases for j in (*p["background_jobs"], p["measure_job"], p["end_job"])]
    jobs = [j for j in jobs if j]
    slurm_cluster.jobs.extend(jobs)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        states = {j: slurm_cluster.job_state(j) for j in jobs}
        if all(s in DONE for s in states.values()):
            break
        time.sleep(2)
    logs = "\n".join(p.read_text() for p in (tmp_path / "logs").glob("*.out"))
    for p in phases:
        assert states[p["measure_job"]] == "COMPLETED", logs
        for bg in p["background_jobs"]:
            assert states[bg] == "CANCELLED", (bg, logs)  # the end job stopped it
    runs = [r for f in ResultsDir().files("runs") for r in read_table(f, "runs").to_pylist()]
    assert len(runs) == 4
    by_job = {p["measure_job"]: p for p in phases}
    for run in runs:
        phase = by_job[run["slurm_job_id"]]
        assert run["b_before"] == pytest.approx(phase["expected_b"])
        assert run["b_accepted"] and run["locality"] == "different_islands"
        background = {n for bg in phase["background"] for n in hostlist.expand_hostlist(bg)}
        assert not set(run["nodes"]) & background
    first, second = sorted(phases, key=lambda p: p["phase"])
    first_runs = [r for r in runs if r["slurm_job_id"] == first["measure_job"]]
    second_runs = [r for r in runs if r["slurm_job_id"] == second["measure_job"]]
    # phases never overlap
    assert max(r["ended_at"] for r in first_runs) < min(r["started_at"] for r in second_runs)
    topo = tmp_path / "topology.example.toml"
    trained = subprocess.run(
        [*TAILCAST, "predict", "train", "--folds", "0", "--topology", str(topo), "--json"],
        env=slurm_cluster.full_env(TAILCAST_HOME=str(results_home)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert trained.returncode == 0, trained.stderr
    meta = json.loads(trained.stdout)
    assert meta["data_range"]["runs"] == 4 and meta["data_range"]["b"] == [0.0, 0.625]
    assert (results_home / "models" / "tail" / "model.skops").exists()
