"""`tailcast agent run --impl builtin` inside real `sbatch -N 4` jobs on the local Slurm,
launching the mpi4py benchmark with mpirun; checks the stored runs and samples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tailcast.store import ResultsDir, read_table

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

TAILCAST = f"{sys.executable} -m tailcast"


def _agent_job(
    cluster: Any, workdir: Path, home: Path, nodes: str, args: str, extra: tuple[str, ...] = ()
) -> tuple[str, str]:
    # Set in the script: sbatch --export splits values at commas ("self,tcp").
    script = (
        "#!/bin/bash\nexport OMPI_MCA_btl=self,tcp\n"
        f"exec {TAILCAST} agent run --impl builtin --json --timeout 240 {args}\n"
    )
    job = cluster.sbatch(
        [
            "-N",
            "4",
            "-w",
            nodes,
            "--ntasks-per-node=1",
            "--time=10",
            f"--export=ALL,TAILCAST_HOME={home}",
            *extra,
        ],
        script,
        workdir,
    )
    state = cluster.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, 300)
    return job, state


def _table(name: str) -> list[dict[str, Any]]:
    return [r for f in ResultsDir().files(name) for r in read_table(f, name).to_pylist()]


def test_agent_same_group(slurm_cluster: Any, tmp_path: Path, results_home: Path) -> None:
    slurm_cluster.cancel_all()
    job, state = _agent_job(
        slurm_cluster,
        tmp_path,
        results_home,
        "node[01-04]",
        "--benchmarks bcast,alltoall --sizes 4,1K --iterations 1000 --warmup 10",
    )
    log = (tmp_path / f"slurm-{job}.out").read_text()
    assert state == "COMPLETED", log
    runs = _table("runs")
    assert sorted((r["benchmark"], r["msg_size_bytes"]) for r in runs) == [
        ("alltoall", 4),
        ("alltoall", 1024),
        ("bcast", 4),
        ("bcast", 1024),
    ]
    samples = _table("samples")
    for run in runs:
        assert run["slurm_job_id"] == job and run["nodes"] == [f"node0{i}" for i in range(1, 5)]
        assert (run["ranks"], run["iterations"], run["locality"]) == (4, 1000, "same_group")
        assert run["launcher"] == "mpirun" and run["mpi_library"].startswith("Open MPI")
        assert run["b_before"] is not None and run["b_after"] is not None
        assert run["b_accepted"] is True  # nothing else runs: b stays 0 with own job excluded
        versions = json.loads(run["versions_json"])
        assert versions["slurm"] == "22.05.8" and "mpi4py" in versions
        mine = sorted(
            (s for s in samples if s["run_id"] == run["run_id"]), key=lambda s: s["iteration"]
        )
        assert [s["iteration"] for s in mine] == list(range(1000))
        for s in mine:
            assert len(s["rank_latency_us"]) == 4
            assert s["latency_us"] == pytest.approx(max(s["rank_latency_us"]))
            assert s["latency_us_mean"] == pytest.approx(sum(s["rank_latency_us"]) / 4)
    # Snapshots before and after each run are in the store too.
    assert len(_table("utilisation")) == 2 * len(runs)


def test_agent_different_islands_1000_samples(
    slurm_cluster: Any, tmp_path: Path, results_home: Path
) -> None:
    slurm_cluster.cancel_all()
    job, state = _agent_job(
        slurm_cluster,
        tmp_path,
        results_home,
        "node[01,05,09,13]",
        "--benchmarks bcast --sizes 4 --iterations 1000 --warmup 10 --interval-ms 1",
    )
    assert state == "COMPLETED", (tmp_path / f"slurm-{job}.out").read_text()
    (run,) = _table("runs")
    assert run["locality"] == "different_islands"
    assert run["nodes"] == ["node01", "node05", "node09", "node13"]
    samples = [s for s in _table("samples") if s["run_id"] == run["run_id"]]
    assert len(samples) == 1000 and run["iterations"] == 1000
    assert all(s["latency_us"] > 0 for s in samples)


def test_agent_submit_campaign(
    slurm_cluster: Any, tmp_path: Path, results_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-job campaign submitted for real; an inherited SBATCH_PARTITION naming a
    partition that does not exist would make sbatch fail unless it is scrubbed."""
    slurm_cluster.cancel_all()
    (tmp_path / "c.toml").write_text(
        "[campaign]\n"
        'name = "live"\nnodes = 2\npatterns = ["reduce"]\nsizes = ["1K"]\n'
        'placements = ["same_group"]\niterations = 20\nwarmup = 2\ntime_limit = "00:05:00"\n'
        f'tailcast = "{TAILCAST}"\n'
        'env = { OMPI_MCA_btl = "self,tcp", OMPI_ALLOW_RUN_AS_ROOT = "1", '
        'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = "1", TAILCAST_HOME = "' + str(results_home) + '" }\n'
    )
    monkeypatch.setenv("SBATCH_PARTITION", "no-such-partition")
    monkeypatch.chdir(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "tailcast", "agent", "submit", "c.toml", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    (job,) = json.loads(proc.stdout)["job_ids"]
    state = slurm_cluster.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED"}, 240)
    assert state == "COMPLETED", list((tmp_path / "logs").glob("*"))
    (run,) = _table("runs")
    assert (run["benchmark"], run["msg_size_bytes"], run["locality"]) == (
        "reduce",
        1024,
        "same_group",
    )
    assert len([s for s in _table("samples") if s["run_id"] == run["run_id"]]) == 20
