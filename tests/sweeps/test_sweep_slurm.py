"""A sweep as a real Slurm job array on the local cluster: 288 points (two fabrics, three
seeds) over 16 tasks equal the serial run point by point; a task scancelled mid-way leaves
its remaining points missing, `status` names them, `resume` runs only those, and every point
is stored exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tailcast.store import Catalog, ResultsDir
from tailcast.sweeps.plan import create_plan, done_points, load_plan
from tailcast.sweeps.runner import run_points
from tailcast.sweeps.spec import load_spec
from tests.sweeps.conftest import write_spec

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

COLS = "point, seed, fabric, params, total_time_ns, iteration_mean_us, iteration_p99_us, messages"


def _sweep(cluster: Any, home: Path, *args: str) -> dict[str, Any]:
    env = cluster.full_env(TAILCAST_HOME=str(home))
    proc = subprocess.run(
        [sys.executable, "-m", "tailcast", "replay", "sweep", *args, "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def _wait_idle(cluster: Any, home: Path, sweep_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = _sweep(cluster, home, "status", sweep_id)
        if not any(t["state"] in ("running", "pending") for t in st["tasks"]):
            return st
        time.sleep(2)
    raise TimeoutError(f"sweep {sweep_id} still running after {timeout} s")


def test_array_sweep_equals_serial_and_resumes_a_cancelled_task(
    slurm_cluster: Any, tmp_path: Path
) -> None:
    slurm_cluster.cancel_all()
    spec_path = write_spec(tmp_path, seeds=3)
    serial = ResultsDir(tmp_path / "serial")
    plan = create_plan(load_spec(spec_path), 1, serial)
    assert len(plan.points) >= 200
    run_points(plan, range(len(plan.points)), serial, "local", jobs=1)

    home = tmp_path / "array"
    out = _sweep(
        slurm_cluster,
        home,
        "run",
        str(spec_path),
        "--slurm",
        "--array-size",
        "16",
        "--parallel",
        "4",
    )
    sweep_id, job_id = out["sweep_id"], out["job_id"]
    results = ResultsDir(home)
    array_plan = load_plan(sweep_id, results)
    # Cancel one task mid-way: running, with some but not all of its points done (polled
    # directly, a CLI start-up being longer than a task here).
    cancelled = None
    deadline = time.monotonic() + 900
    while cancelled is None and time.monotonic() < deadline:
        running = slurm_cluster.run(
            ["squeue", "-h", "-r", "-j", job_id, "-t", "RUNNING", "-o", "%K"], check=False
        ).split()
        done = done_points(array_plan, results)
        for k in map(int, filter(str.isdigit, running)):
            shard = array_plan.shard(k)
            if 1 <= sum(1 for i in shard if i in done) < len(shard) - 1:
                slurm_cluster.run(["scancel", f"{job_id}_{k}"])
                cancelled = k
                break
        if not running and len(done) == len(array_plan.points):
            break
        time.sleep(0.1)
    assert cancelled is not None, "no task was caught mid-way"
    st = _wait_idle(slurm_cluster, home, sweep_id, 1800)
    failed = [t for t in st["tasks"] if t["state"] == "failed"]
    assert [t["task"] for t in failed] == [cancelled]
    lost = set(st["stranded"])
    assert lost and lost <= set(array_plan.shard(cancelled))
    assert lost == set(st["missing"])

    resumed = _sweep(slurm_cluster, home, "resume", sweep_id, "--slurm", "--array-size", "4")
    assert resumed["points"] == len(lost)
    st = _wait_idle(slurm_cluster, home, sweep_id, 1800)
    assert st["done"] == st["points"] == len(plan.points) and st["missing"] == []

    with Catalog(serial) as a, Catalog(results) as b:
        ra = a.rows(f"SELECT {COLS} FROM sweep_points ORDER BY point")
        rb = b.rows(f"SELECT {COLS} FROM sweep_points ORDER BY point")
        once = b.rows(
            "SELECT count(*) AS n, count(DISTINCT point) AS d FROM sweep_points "
            f"WHERE sweep_id = '{sweep_id}'"
        )
        tasks = b.rows("SELECT DISTINCT task FROM sweep_points")
        assert b.problems == []
    assert once[0]["n"] == once[0]["d"] == len(plan.points)
    assert ra == rb
    assert any(str(r["task"]).startswith("assign-1:") for r in tasks)
