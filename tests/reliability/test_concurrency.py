"""Issue 19 §1: 16 agent jobs at once on the real local Slurm (an 8-task job array and 8
separate jobs) write one results directory while `collect watch` writes snapshots into it
and a reader queries it throughout (and `report` runs once mid-campaign): every completed run
is present exactly once, every file is readable, no query ever sees a run without its samples
or samples without their run, the watch's snapshots are all there."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tailcast.store import Catalog

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

TAILCAST = f"{sys.executable} -m tailcast"
ITERATIONS = 100
RUNS_PER_JOB = 2  # bcast and reduce, one size
JOBS = 16
DONE = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "GONE", "NODE_FAIL", "OUT_OF_MEMORY"}

CONSISTENT = (
    "SELECT (SELECT count(*) FROM runs WHERE iterations != coalesce((SELECT count(*) "
    "FROM samples s WHERE s.run_id = runs.run_id), 0)) AS runs_without_all_samples, "
    "(SELECT count(*) FROM samples WHERE run_id NOT IN (SELECT run_id FROM runs)) "
    "AS samples_without_run, (SELECT count(*) FROM runs) AS runs"
)


def test_sixteen_agents_one_results_directory(
    slurm_cluster: Any, tmp_path: Path, results_home: Path
) -> None:
    slurm_cluster.cancel_all()
    script = (
        "#!/bin/bash\nexport OMPI_MCA_btl=self,tcp\n"
        f"exec {TAILCAST} agent run --impl builtin --ranks 2 --timeout 600 "
        f"--benchmarks bcast,reduce --sizes 1K --iterations {ITERATIONS} --warmup 2\n"
    )
    common = ["-N", "1", "-n", "2", "--time=20", f"--export=ALL,TAILCAST_HOME={results_home}"]
    jobs = [slurm_cluster.sbatch([*common, "--array=0-7"], script, tmp_path)]
    jobs += [slurm_cluster.sbatch(common, script, tmp_path) for _ in range(JOBS - 8)]
    watch = subprocess.Popen(
        [sys.executable, "-m", "tailcast", "collect", "watch", "--interval", "0.5",
         "--duration", "1500", "--flush-every", "3", "--json"],
        env=slurm_cluster.full_env(TAILCAST_HOME=str(results_home)), stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    queries, seen_max, reported = 0, 0, False
    deadline = time.monotonic() + 1500
    while True:
        states = [slurm_cluster.job_state(j) for j in jobs]
        with Catalog() as catalog:  # a reader throughout, as `db sql` would be
            row = catalog.rows(CONSISTENT)[0]
            assert all(info.problems == [] for info in catalog.tables.values())
        queries += 1
        assert (row["runs_without_all_samples"], row["samples_without_run"]) == (0, 0), row
        seen_max = max(seen_max, row["runs"])
        if not reported and row["runs"] >= JOBS:  # half the runs in: a report meanwhile
            report = subprocess.run(
                [sys.executable, "-m", "tailcast", "report", "--out",
                 str(tmp_path / "report")],
                env=slurm_cluster.full_env(TAILCAST_HOME=str(results_home)),
                capture_output=True, text=True,
            )  # fmt: skip
            assert report.returncode == 0, report.stderr
            reported = True
        if all(all(s in DONE for s in state.split()) for state in states):
            break
        assert time.monotonic() < deadline, states
        time.sleep(0.5)
    watch.send_signal(signal.SIGTERM)
    out, _ = watch.communicate(timeout=120)
    assert watch.returncode == 0, out
    with Catalog() as catalog:
        runs = catalog.rows("SELECT run_id, slurm_job_id FROM runs")
        pending = [p for info in catalog.tables.values() for p in info.pending]
        snapshots = catalog.rows("SELECT count(*) AS n FROM utilisation")[0]["n"]
        ids = [r["run_id"] for r in runs]
        jobs_seen = {r["slurm_job_id"] for r in runs}
    expected = JOBS * RUNS_PER_JOB
    duplicated = len(ids) - len(set(ids))
    print(
        f"runs expected/found/duplicated/corrupt = {expected}/{len(set(ids))}/{duplicated}/0; "
        f"{queries} consistent reads during the campaign, from {len(jobs_seen)} jobs"
    )
    logs = "\n".join(p.read_text() for p in sorted(tmp_path.glob("slurm-*.out")))
    assert (len(set(ids)), duplicated, len(jobs_seen)) == (expected, 0, JOBS), logs[-3000:]
    assert pending == [] and reported
    # Each agent run stores 2 snapshots; the watch's are the rest, every one it reported.
    watched = json.loads(out)
    print(f"watch: {watched['snapshots']} snapshots, {len(watched['failures'])} failed polls")
    assert watched["snapshots"] > 0 and watched["stopped_by_signal"] == signal.SIGTERM
    assert snapshots == 2 * expected + watched["snapshots"]
