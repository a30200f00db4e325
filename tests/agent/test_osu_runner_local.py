"""The agent's OSU runner with the real OSU 7.4 binaries on local Open MPI (no Slurm): samples
of a sampled benchmark, a benchmark OSU alone measures, and a run stopped by its time limit
(what the ranks finished is kept, marked partial)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tailcast.agent.osu_runner import run_osu_benchmark
from tailcast.collectors.launcher import Launcher
from tests.slurm_fixture import MPI_ROOT_ENV

pytestmark = [pytest.mark.mpi]


@pytest.fixture()
def launcher(monkeypatch: pytest.MonkeyPatch, mpi_available: None, tmp_path: Path) -> Launcher:
    for key, value in {**MPI_ROOT_ENV, "OMPI_MCA_btl": "self,vader"}.items():
        monkeypatch.setenv(key, value)
    for key in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        monkeypatch.delenv(key, raising=False)
    path = shutil.which("mpirun")
    assert path
    return Launcher("mpirun", path, ("--oversubscribe",))


def test_samples_and_summary(launcher: Launcher, osu_home: Path, tmp_path: Path) -> None:
    out = run_osu_benchmark(launcher, 4, "allreduce", 64, 200, 20, 300, tmp_path, osu_home)
    assert not out.partial and out.ranks == 4 and len(out.warmup_samples) == 20
    (summary,) = out.osu_results
    times = np.array([s["rank_latency_us"] for s in out.samples])
    assert times.shape == (200, 4)
    assert abs(times.mean() - summary["avg_latency_us"]) <= 0.02 * summary["avg_latency_us"] + 0.005
    assert not list(tmp_path.glob(".osu-timing-*"))  # the tracer's files are removed
    alone = run_osu_benchmark(launcher, 4, "put_latency", 8, 50, 5, 300, tmp_path, osu_home)
    assert alone.samples == [] and alone.osu_results[0]["avg_latency_us"] > 0
    assert alone.ranks == 2 and "osu_samples" not in alone.versions


def test_timed_out_run_keeps_finished_iterations(
    launcher: Launcher, osu_home: Path, tmp_path: Path
) -> None:
    out = run_osu_benchmark(launcher, 4, "alltoall", 1 << 20, 1_000_000, 10, 8, tmp_path, osu_home)
    assert out.partial and out.osu_results == []  # stopped inside its only size
    assert 0 < len(out.samples) < 1_000_000 and len(out.warmup_samples) == 10
    assert "timed out" in out.versions["partial_reason"]
    assert all(np.isfinite(s["latency_us"]) for s in out.samples)


def test_every_built_binary_is_found(osu_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tailcast.collectors.osu_run import find_osu_binary
    from tailcast.collectors.osu_suite import PERSISTENT_COLLECTIVES, SUITE

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("OSU_HOME", raising=False)
    for name in set(SUITE) - set(PERSISTENT_COLLECTIVES):
        found = find_osu_binary(name, osu_home)  # an install prefix, as $OSU_HOME may be
        assert found.name == f"osu_{name}" and found.is_file()
    monkeypatch.setenv("OSU_HOME", str(osu_home))
    assert find_osu_binary("osu_ineighbor_alltoallw").parent.name == "collective"
