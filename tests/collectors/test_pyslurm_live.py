"""The pyslurm backend against the real local Slurm 22.05 (pyslurm 22.5.3 built by the test
setup): the same jobs, N_t, N_c, N_c', N_a and b as `squeue --json` and `squeue -o`, on three
queue scenarios with shared nodes, pending, single-node, array and finished jobs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tailcast.collectors.jobs import QueueSnapshot
from tailcast.collectors.sinfo import total_nodes
from tailcast.collectors.squeue import read_queue
from tailcast.collectors.utilisation import compute_b

pytestmark = pytest.mark.slurm

SLEEP = "#!/bin/bash\nsleep 600\n"
BACKENDS = ("pyslurm", "squeue-json", "squeue-format")

# Each job: sbatch arguments; one core per node, so jobs pinned to one node share it.
SCENARIOS: dict[str, list[list[str]]] = {
    "shared node": [
        ["-N", "2", "-w", "node[01-02]"],
        ["-N", "3", "-w", "node[02-04]"],  # node02 is shared: counted twice in N_c'
        ["-N", "1", "-w", "node05"],  # single-node: only in N_a
        ["-N", "2", "--begin=now+3600"],  # pending: nowhere
    ],
    "array and single-node jobs": [
        ["-N", "2", "-w", "node[06-07]", "--array=0-1"],  # both tasks on node06-07
        ["-N", "1", "-w", "node08"],
        ["-N", "1", "-w", "node08"],  # two single-node jobs sharing node08
        ["-N", "4", "--begin=now+3600", "--array=0-2"],  # pending array
    ],
    "spread job beside finished ones": [
        ["-N", "6", "-w", "node[01,03,05,09,11,13]"],
        ["-N", "2", "-w", "node[13-14]"],  # shares node13 with the spread job
        ["-N", "1", "-w", "node16"],
    ],
}
# By hand for the first scenario: N_c = |{01..04}| = 4, N_c' = 2 + 3 = 5, N_a = 5 + 1 = 6.
SHARED_NODE_COUNTS = {"n_t": 16, "n_c": 4, "n_c_dup": 5, "n_a_dup": 6}


def _drain(cluster: Any) -> None:
    cluster.cancel_all()
    deadline = time.monotonic() + 60
    while cluster.run(["squeue", "-h", "-o", "%i"]).strip():
        if time.monotonic() > deadline:
            pytest.fail("queue did not drain before the scenario")
        time.sleep(0.5)


def _submit(cluster: Any, jobs: list[list[str]], workdir: Path) -> None:
    ids = [
        cluster.sbatch([*args, "--ntasks-per-node=1", "--cpus-per-task=1"], SLEEP, workdir)
        for args in jobs
    ]
    for job, args in zip(ids, jobs, strict=True):
        if any(a.startswith("--begin") for a in args):
            continue
        deadline = time.monotonic() + 60
        # one line per array task: every one must run
        while set(cluster.job_state(job).split()) != {"RUNNING"}:
            if time.monotonic() > deadline:
                pytest.fail(f"job {job} did not start: {cluster.job_state(job)}")
            time.sleep(0.2)


def _key(snap: QueueSnapshot) -> list[tuple[Any, ...]]:
    """Every job as b sees it. The id compared is the raw one: a pending array's meta job is
    "7_[0-2]" in `squeue -o %i` but 7 in the JSON and in pyslurm (b ignores pending jobs);
    running array tasks' shown ids are checked apart."""
    return sorted((j.raw_id, j.user, j.state, j.node_count, j.nodes) for j in snap.jobs)


def _tasks(snap: QueueSnapshot) -> list[str]:
    return sorted(j.job_id for j in snap.jobs if j.running and j.job_id != j.raw_id)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_backends_agree(
    slurm_cluster: Any, pyslurm_ready: None, tmp_path: Path, scenario: str
) -> None:
    _drain(slurm_cluster)
    if scenario == "spread job beside finished ones":
        # Finished jobs: 22.05 still lists them (squeue --json, pyslurm) until MinJobAge.
        done = slurm_cluster.sbatch(["-N", "2"], "#!/bin/bash\ntrue\n", tmp_path)
        slurm_cluster.wait_state(done, {"COMPLETED"}, timeout=60)
    _submit(slurm_cluster, SCENARIOS[scenario], tmp_path)
    n_t = total_nodes()
    snaps = {b: read_queue(b) for b in BACKENDS}
    again = read_queue("pyslurm")  # the queue did not move while we read it
    assert _key(again) == _key(snaps["pyslurm"])
    assert snaps["pyslurm"].source == "pyslurm"
    assert snaps["pyslurm"].slurm_version == snaps["squeue-json"].slurm_version == "22.05.8"
    assert snaps["pyslurm"].cluster == snaps["squeue-json"].cluster == "tailcast"
    utils = {b: compute_b(s.jobs, n_t) for b, s in snaps.items()}
    counts = {
        b: (u.n_t, u.n_c, u.n_c_dup, u.n_a_dup, u.b_simple, u.b, u.pending_jobs)
        for b, u in utils.items()
    }
    assert counts["pyslurm"] == counts["squeue-json"] == counts["squeue-format"], counts
    assert _key(snaps["pyslurm"]) == _key(snaps["squeue-json"]) == _key(snaps["squeue-format"])
    u = utils["pyslurm"]
    assert u.b == pytest.approx(u.n_c / u.n_t * u.n_c_dup / u.n_a_dup)
    if scenario == "shared node":
        assert {k: getattr(u, k) for k in SHARED_NODE_COUNTS} == SHARED_NODE_COUNTS
        assert u.pending_jobs == 1 and u.multi_node_jobs == 2
    if scenario == "array and single-node jobs":
        tasks = _tasks(snaps["pyslurm"])  # task 0 included (pyslurm 22.5 reads it as None)
        assert [t.split("_")[1] for t in tasks] == ["0", "1"], tasks
        assert tasks == _tasks(snaps["squeue-json"]) == _tasks(snaps["squeue-format"])
        assert u.n_c == 2 and u.n_c_dup == 4 and u.n_a_dup == 6  # 06,07 twice; 08 twice
    slurm_cluster.cancel_all()
