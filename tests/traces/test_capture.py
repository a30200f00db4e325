"""Capture of real 4-rank MPI programs (C and mpi4py) with the PMPI tracer, Open MPI local."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tailcast.traces.capture import build_tracer, capture_run
from tailcast.traces.info import summarize_table
from tailcast.traces.io import read_trace
from tailcast.traces.tit_export import export_tit, replay_in_simgrid
from tailcast.traces.validate import validate_table

pytestmark = [pytest.mark.mpi]
PROGRAMS = Path(__file__).parent / "programs"
MPIRUN = ["mpirun", "--oversubscribe", "-np", "4"]

# (calls, send bytes, recv bytes) per op, from reading known_calls.c
C_EXPECTED = {
    "init": (4, 0, 0), "finalize": (4, 0, 0),
    "isend": (17, 12 * 1000 + 8 + 4 * 32, 0), "irecv": (17, 0, 12 * 1000 + 8 + 4 * 32),
    "send": (1, 2048, 0), "recv": (1, 0, 2048), "sendrecv": (4, 4 * 256, 4 * 256),
    "waitall": (12, 0, 0), "wait": (1, 0, 0), "waitany": (8, 0, 0), "barrier": (8, 0, 0),
    "bcast": (8, 4 * 400 + 4 * 4, 0), "reduce": (4, 4 * 80, 0),
    "allreduce": (12, 8 * 4000 + 4 * 8, 0), "alltoall": (4, 4 * 32, 4 * 32),
    "alltoallv": (4, 64, 64), "allgather": (4, 64, 64), "allgatherv": (4, 10, 40),
    "gather": (4, 48, 12), "gatherv": (4, 10, 10), "scatter": (4, 20, 80),
    "scatterv": (4, 14, 14), "reduce_scatter": (4, 160, 40),
    "reduce_scatter_block": (4, 320, 80), "comm_split": (4, 0, 0), "comm_dup": (4, 0, 0),
    "comm_free": (8, 0, 0),
}  # fmt: skip
PY_EXPECTED = {
    "init": (4, 0, 0), "finalize": (4, 0, 0), "isend": (8, 6400, 0), "irecv": (8, 0, 6400),
    "waitall": (8, 0, 0), "send": (1, 80, 0), "recv": (1, 0, 80), "barrier": (4, 0, 0),
    "bcast": (4, 1600, 0), "allreduce": (16, 12 * 512 + 4 * 8, 0),
    "alltoall": (4, 128, 128), "gather": (4, 64, 16), "comm_split": (4, 0, 0),
    "comm_free": (4, 0, 0),
}  # fmt: skip


@pytest.fixture(scope="module")
def mpi_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("Open MPI (mpicc, mpirun) not installed")
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_rmaps_base_oversubscribe="1",
               XDG_CACHE_HOME=str(tmp_path_factory.mktemp("cache")))  # fmt: skip
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
    try:
        build_tracer()
        yield env
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="module")
def c_program(tmp_path_factory: pytest.TempPathFactory, mpi_env: dict[str, str]) -> Path:
    exe = tmp_path_factory.mktemp("bin") / "known_calls"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(PROGRAMS / "known_calls.c")],
                   check=True, timeout=120)  # fmt: skip
    return exe


def _per_op(path: Path) -> dict[str, tuple[int, int, int]]:
    table, meta = read_trace(path)
    info = summarize_table(table, meta)
    return {op: (s.calls, s.send_bytes, s.recv_bytes) for op, s in info.ops.items()}


def test_c_program_counts_and_bytes(
    tmp_path: Path, c_program: Path, mpi_env: dict[str, str]
) -> None:
    out = tmp_path / "c.parquet"
    result = capture_run([*MPIRUN, str(c_program)], out, env=mpi_env, timeout=300)
    assert result.returncode == 0 and result.ranks == 4
    got = _per_op(out)
    tests = got.pop("test")  # the test loop spins a timing-dependent number of times
    assert tests[0] >= 1
    assert got == C_EXPECTED
    table, meta = read_trace(out)
    assert validate_table(table, meta) == []
    rows = table.to_pylist()
    sub_bcast = [r for r in rows if r["op"] == "bcast" and r["comm"] != 0]
    assert {(r["rank"], r["root"]) for r in sub_bcast} == {(0, 2), (2, 2), (1, 3), (3, 3)}
    any_src = next(r for r in rows if r["op"] == "irecv" and r["tag"] == 99)
    assert any_src["peer"] == 0  # MPI_ANY_SOURCE resolved from the status at completion
    assert all(r["t_end_ns"] >= r["t_start_ns"] for r in rows)


def test_mpi4py_program_counts_and_bytes(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    out = tmp_path / "py.parquet"
    argv = [*MPIRUN, sys.executable, str(PROGRAMS / "known_calls_mpi4py.py")]
    result = capture_run(argv, out, env=mpi_env, timeout=300)
    assert result.returncode == 0
    assert _per_op(out) == PY_EXPECTED
    table, meta = read_trace(out)
    assert validate_table(table, meta) == []


def test_crashed_rank_leaves_partial_trace(
    tmp_path: Path, c_program: Path, mpi_env: dict[str, str]
) -> None:
    out = tmp_path / "crash.parquet"
    result = capture_run([*MPIRUN, str(c_program), "crash"], out, env=mpi_env, timeout=300)
    assert result.returncode != 0
    table, meta = read_trace(out)
    assert 2 in set(__import__("json").loads(meta.extra["partial_ranks"]))
    rank2 = [r["op"] for r in table.to_pylist() if r["rank"] == 2]
    assert rank2[:1] == ["init"] and rank2[-1] == "sendrecv"  # everything up to the crash


@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid (libsimgrid-dev) missing")
def test_tit_export_replays_in_simgrid(
    tmp_path: Path, c_program: Path, mpi_env: dict[str, str]
) -> None:
    out = tmp_path / "c.parquet"
    capture_run([*MPIRUN, str(c_program)], out, env=mpi_env, timeout=300)
    table, meta = read_trace(out)
    skipped = export_tit(table, meta, tmp_path / "tit" / "c.list")
    assert skipped == {"allreduce on a sub-communicator": 4, "bcast on a sub-communicator": 4}
    log = replay_in_simgrid(tmp_path / "tit" / "c.list", meta.ranks, tmp_path / "sg")
    assert "Simulation time" in log
