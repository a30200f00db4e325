"""Capture under the local Slurm: a 4-node batch job runs `tailcast trace capture -- mpirun`
on the known-calls C program; the trace has the known counts and the ranks ran on 4 distinct
emulated nodes."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast.traces.io import read_trace
from tailcast.traces.validate import validate_table
from tests.slurm_fixture import LocalCluster
from tests.traces.test_capture import C_EXPECTED, PROGRAMS, _per_op

pytestmark = [pytest.mark.slurm, pytest.mark.mpi]
TAILCAST = Path(sys.executable).with_name("tailcast")


def test_capture_in_a_four_node_batch_job(
    slurm_cluster: LocalCluster, mpi_available: None, tmp_path: Path
) -> None:
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc not installed")
    exe = tmp_path / "known_calls"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(PROGRAMS / "known_calls.c")],
                   check=True, timeout=120)  # fmt: skip
    out, log = tmp_path / "slurm.parquet", tmp_path / "job.out"
    capture = [str(TAILCAST), "trace", "capture", "-o", str(out), "--timeout", "240", "--",
               "mpirun", "-np", "4", str(exe), "where"]  # fmt: skip
    script = (
        "#!/bin/bash\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
        f"export XDG_CACHE_HOME={shlex.quote(str(tmp_path / 'cache'))}\n"
        f"{shlex.join(capture)}\n"
    )
    job = slurm_cluster.sbatch(["-N", "4", "-o", str(log), "-t", "10"], script, tmp_path)
    final = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}
    slurm_cluster.wait_state(job, final, timeout=300)
    text = log.read_text() if log.exists() else ""
    assert slurm_cluster.job_state(job) == "COMPLETED", text
    placed = dict(line.split()[1:3] for line in text.splitlines() if line.startswith("RANKNODE "))
    assert sorted(placed) == ["0", "1", "2", "3"], text
    assert len(set(placed.values())) == 4 and set(placed.values()) <= set(slurm_cluster.nodes)
    got = _per_op(out)
    assert got.pop("test")[0] >= 1  # the test loop spins a timing-dependent number of times
    assert got == C_EXPECTED
    table, meta = read_trace(out)
    assert meta.ranks == 4 and meta.extra["returncode"] == "0"
    assert validate_table(table, meta) == []
