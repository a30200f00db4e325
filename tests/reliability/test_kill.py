"""Issue 19 §2: an agent job killed with SIGKILL mid-campaign (`scancel --signal=KILL
--full` on the real local Slurm: the batch script, the agent and its mpirun die at once).
Every run that completed is kept whole, the interrupted one leaves nothing visible, every
file is readable; the same job submitted again (`--resume`, as campaign scripts do) measures
only the points not yet stored."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tailcast.store import Catalog, ResultsDir

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

TAILCAST = f"{sys.executable} -m tailcast"
BENCHMARKS = ["bcast", "allreduce", "alltoall", "reduce"]
SIZES = ["4", "1K", "4K"]
ITERATIONS = 100  # what is checked is that each run is whole, not how long it is


def test_agent_killed_mid_campaign_keeps_every_completed_run(
    slurm_cluster: Any, tmp_path: Path, results_home: Path
) -> None:
    slurm_cluster.cancel_all()
    script = (
        "#!/bin/bash\nexport OMPI_MCA_btl=self,tcp\n"
        f"exec {TAILCAST} agent run --impl builtin --timeout 240 "
        f"--benchmarks {','.join(BENCHMARKS)} --sizes {','.join(SIZES)} "
        f"--iterations {ITERATIONS} --warmup 5 --resume-key kill-test --resume\n"
    )
    export = f"--export=ALL,TAILCAST_HOME={results_home}"
    job = slurm_cluster.sbatch(
        ["-N", "2", "--ntasks-per-node=1", "--time=10", export], script, tmp_path
    )
    results = ResultsDir()
    deadline = time.monotonic() + 400
    while len(results.files("runs")) < 2:  # two runs done: the third is being measured
        assert time.monotonic() < deadline, (tmp_path / f"slurm-{job}.out").read_text()
        assert slurm_cluster.job_state(job) in {"PENDING", "RUNNING", "CONFIGURING"}
        time.sleep(0.05)
    slurm_cluster.run(["scancel", "--signal=KILL", "--full", job])
    slurm_cluster.wait_state(job, {"CANCELLED", "FAILED", "COMPLETED", "GONE"}, 120)
    expected = len(BENCHMARKS) * len(SIZES)
    with Catalog() as catalog:
        assert all(info.problems == [] for info in catalog.tables.values())  # none corrupt
        runs = catalog.rows("SELECT run_id, iterations FROM runs")
        counts = {
            r["run_id"]: r["n"]
            for r in catalog.rows("SELECT run_id, count(*) AS n FROM samples GROUP BY run_id")
        }
        duplicated = catalog.rows("SELECT count(*) - count(DISTINCT run_id) AS n FROM runs")[0]["n"]
        pending = [p for info in catalog.tables.values() for p in info.pending]
    found = len(runs)
    print(
        f"runs expected/found/duplicated/corrupt = {expected}/{found}/{duplicated}/0 "
        f"(killed after {found}); pending parts hidden: {len(pending)}"
    )
    assert 2 <= found < expected and duplicated == 0
    # Each kept run is whole: all its samples; no sample of a run that was not completed.
    assert {r["run_id"]: ITERATIONS for r in runs} == counts

    rerun = slurm_cluster.sbatch(
        ["-N", "2", "--ntasks-per-node=1", "--time=10", export], script, tmp_path
    )
    state = slurm_cluster.wait_state(rerun, {"COMPLETED", "FAILED", "CANCELLED", "GONE"}, 600)
    log = (tmp_path / f"slurm-{rerun}.out").read_text()
    assert state in {"COMPLETED", "GONE"}, log
    assert log.count("stored by an earlier run, skipped") == found, log
    with Catalog() as catalog:
        assert all(info.problems == [] for info in catalog.tables.values())
        points = catalog.rows(
            "SELECT benchmark, msg_size_bytes, count(*) AS n FROM runs GROUP BY 1, 2"
        )
        after = {r["run_id"] for r in catalog.rows("SELECT run_id FROM runs")}
        whole = catalog.rows(
            "SELECT count(*) AS n FROM (SELECT run_id, count(*) AS k FROM samples "
            f"GROUP BY run_id) WHERE k = {ITERATIONS}"
        )[0]["n"]
    duplicated = sum(r["n"] - 1 for r in points)
    print(
        f"after the rerun: runs expected/found/duplicated/corrupt = {expected}/{len(points)}/"
        f"{duplicated}/0"
    )
    assert len(points) == expected and duplicated == 0 and whole == expected
    assert {r["run_id"] for r in runs} <= after  # the first job's runs are kept, not redone
