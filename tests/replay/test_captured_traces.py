"""Traces captured by tailcast's PMPI tracer from real Open MPI runs replay to completion on
every bundled fabric (issue 5), with every captured call getting a simulated interval."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tailcast.replay.fabric import bundled_fabrics, load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.capture import capture_run
from tailcast.traces.io import read_trace
from tests.traces.test_capture import MPIRUN, PROGRAMS, c_program, mpi_env

pytestmark = [pytest.mark.mpi]
__all__ = ["c_program", "mpi_env"]  # fixtures used by name below


def _replay_everywhere(trace: Path) -> dict[str, float]:
    table, _ = read_trace(trace)
    totals = {}
    for name in bundled_fabrics():
        outcome = replay_trace(trace, load_fabric(name), ReplayOptions())
        assert outcome.ops.num_rows == table.num_rows
        starts = outcome.ops.column("sim_start_ns").to_numpy()
        ends = outcome.ops.column("sim_end_ns").to_numpy()
        assert (ends >= starts).all() and outcome.total_time_ns > 0
        totals[name] = outcome.total_time_ns
    return totals


def test_captured_c_program_replays_on_every_fabric(
    c_program: Path, mpi_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "c.parquet"
    result = capture_run([*MPIRUN, str(c_program)], out, env=mpi_env, timeout=120)
    assert result.returncode == 0
    totals = _replay_everywhere(out)
    assert set(totals) == set(bundled_fabrics())


def test_captured_mpi4py_program_replays_on_every_fabric(
    mpi_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "py.parquet"
    argv = [*MPIRUN, sys.executable, str(PROGRAMS / "known_calls_mpi4py.py")]
    result = capture_run(argv, out, env=mpi_env, timeout=120)
    assert result.returncode == 0
    _replay_everywhere(out)


def test_bundled_captured_halo_replays_on_every_fabric() -> None:
    from tailcast.quickstart import bundled_dir

    trace = bundled_dir() / "halo-4rank.parquet"
    if not trace.exists():
        pytest.fail(f"{trace} is missing: run scripts/record_quickstart_data.py")
    totals = _replay_everywhere(trace)
    assert len(totals) == len(bundled_fabrics())
