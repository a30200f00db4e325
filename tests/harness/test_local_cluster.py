"""The local Slurm + Open MPI harness is real: jobs run on distinct emulated nodes, MPI ranks
land on those nodes, and teardown leaves no daemon behind."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import hostlist
import pytest

from tests.slurm_fixture import SCRIPT, LocalCluster

pytestmark = pytest.mark.slurm


def test_multinode_jobs_run_on_distinct_nodes(slurm_cluster: LocalCluster, tmp_path: Path) -> None:
    jobs = [
        slurm_cluster.sbatch(["-N", "4", "--exclusive"], "#!/bin/bash\nsleep 60\n", tmp_path)
        for _ in range(2)
    ]
    try:
        for job in jobs:
            slurm_cluster.wait_state(job, {"RUNNING"}, timeout=30)
        out = slurm_cluster.run(["squeue", "-h", "-t", "RUNNING", "-o", "%i|%T|%D|%N"])
        rows = {line.split("|")[0]: line.split("|") for line in out.splitlines()}
        seen: list[str] = []
        for job in jobs:
            _, state, count, nodelist = rows[job]
            nodes = hostlist.expand_hostlist(nodelist)
            assert state == "RUNNING" and count == "4" and len(set(nodes)) == 4
            assert set(nodes) <= set(slurm_cluster.nodes)
            seen += nodes
        assert len(set(seen)) == 8  # exclusive jobs never share an emulated node
    finally:
        slurm_cluster.run(["scancel", *jobs], check=False)


@pytest.mark.mpi
def test_mpi4py_ranks_land_on_four_emulated_nodes(
    slurm_cluster: LocalCluster, mpi_available: None, tmp_path: Path
) -> None:
    program = tmp_path / "where.py"
    program.write_text(
        "import os\nfrom mpi4py import MPI\n"
        "c = MPI.COMM_WORLD\n"
        "names = c.gather(os.environ.get('SLURMD_NODENAME', '?'), root=0)\n"
        "if c.rank == 0:\n    print('NODES', c.size, ' '.join(names))\n"
    )
    script = (
        "#!/bin/bash\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
        f"mpirun -np 4 {sys.executable} {program}\n"
    )
    job = slurm_cluster.sbatch(["-N", "4", "-o", str(tmp_path / "out.txt")], script, tmp_path)
    slurm_cluster.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, timeout=90)
    assert slurm_cluster.job_state(job) == "COMPLETED", (tmp_path / "out.txt").read_text()
    line = next(x for x in (tmp_path / "out.txt").read_text().splitlines() if x.startswith("NODES"))
    _, size, *names = line.split()
    assert size == "4"
    assert len(set(names)) == 4 and set(names) <= set(slurm_cluster.nodes)


def test_private_cluster_starts_refuses_clobber_and_stops_clean() -> None:
    directory = Path(tempfile.mkdtemp(prefix="tailcast-slurm-t-"))
    cluster = LocalCluster.start(directory, n_nodes=4)
    try:
        assert set(cluster.alive_pids()) == {"munged", "slurmctld"} | {
            f"slurmd-node0{i}" for i in range(1, 5)
        }
        sinfo = cluster.run(["sinfo", "-h", "-N", "-o", "%N %T"])
        assert sorted(line.split()[0] for line in sinfo.splitlines()) == cluster.nodes
        again = subprocess.run(
            [str(SCRIPT), "up", str(directory)], capture_output=True, text=True, timeout=60
        )
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        cluster.stop()
    assert cluster.alive_pids() == {}
