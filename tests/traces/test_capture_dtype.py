"""A captured program's small-count allreduce falls back exactly as Open MPI 4.1.4 does
(issue 22): the tracer records MPI_Type_size and MPI_Op_commutative per collective, and the
replay judges `ompi_coll_base_allreduce_intra_redscat_allgather`'s test
`count < nprocs_pof2 || !ompi_op_is_commute(op)` → `allreduce_intra_basic_linear` on them.

16 real ranks (Open MPI 4.1.4, mpirun) run tests/traces/programs/small_allreduce.c; each
capture replays on the α-β-γ model without port limits (α = 1 µs, β = 1 ns/B,
γ = 0.5 ns/B, compute ignored), where the times are closed forms:
- basic_linear (reduce_intra_basic_linear to rank 0, then bcast_intra_basic_linear): the
  root's p-1 receives overlap; the last rank's vector lands in the result and the other
  p-1 operands are reduced in turn: 2(α + nβ) + (p-1)nγ;
- redscat_allgather at p = 16: 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ (Thakur et al. 2005).
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from tailcast.replay.fabric import parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.capture import capture_run
from tailcast.traces.io import read_trace
from tests.traces.test_capture import PROGRAMS, mpi_env  # noqa: F401 (fixture)

pytestmark = [pytest.mark.mpi]
P = 16
ALPHA, BETA, GAMMA = 1000.0, 1.0, 0.5
FABRIC = parse_fabric(
    f"model = 'alpha_beta'\nalpha_us = {ALPHA / 1000}\nbeta_ns_per_byte = {BETA}\n"
    f"gamma_ns_per_byte = {GAMMA}\nports = 0\n",
    "<test>",
)
N = 32  # bytes in every case


def basic_linear(n: int) -> float:
    return 2 * (ALPHA + n * BETA) + (P - 1) * n * GAMMA


def redscat_allgather(n: int) -> float:
    frac = (P - 1) / P
    return 2 * math.log2(P) * ALPHA + 2 * frac * n * BETA + frac * n * GAMMA


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory, mpi_env: dict[str, str]) -> Path:  # noqa: F811
    exe = tmp_path_factory.mktemp("bin") / "small_allreduce"
    source = PROGRAMS / "small_allreduce.c"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(source)], check=True, timeout=120)
    return exe


def _capture(tmp_path: Path, exe: Path, env: dict[str, str], what: str) -> Path:
    out = tmp_path / f"{what}.parquet"
    argv = ["mpirun", "--oversubscribe", "-np", str(P), str(exe), what]
    result = capture_run(argv, out, env=env, timeout=300)
    assert result.returncode == 0 and result.ranks == P
    return out


def _replay(trace: Path, algorithm: str) -> float:
    options = ReplayOptions(coll=f"allreduce={algorithm}", compute_scale=0.0)
    return replay_trace(trace, FABRIC, options).total_time_ns


@pytest.mark.parametrize(
    ("what", "dtype_bytes", "commutative", "falls_back"),
    [("double", 8, 1, True), ("char", 1, 1, False), ("noncommutative", 1, 0, True)],
)
def test_small_count_allreduce_falls_back_as_open_mpi_does(
    tmp_path: Path,
    program: Path,
    mpi_env: dict[str, str],  # noqa: F811
    what: str,
    dtype_bytes: int,
    commutative: int,
    falls_back: bool,
) -> None:
    trace = _capture(tmp_path, program, mpi_env, what)
    table, _ = read_trace(trace)
    rows = [r for r in table.to_pylist() if r["op"] == "allreduce"]
    assert len(rows) == P
    assert {(r["send_bytes"], r["dtype_bytes"], r["commutative"]) for r in rows} == {
        (N, dtype_bytes, commutative)
    }
    rabenseifner = _replay(trace, "rabenseifner")
    linear = _replay(trace, "linear")
    assert linear == pytest.approx(basic_linear(N), rel=1e-9)
    want = basic_linear(N) if falls_back else redscat_allgather(N)
    assert rabenseifner == pytest.approx(want, rel=1e-9), (what, rabenseifner, want)
