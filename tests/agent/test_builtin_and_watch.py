"""Built-in benchmark (real mpirun + mpi4py), sample rows, size parsing, and `collect watch`
keeping every snapshot when SIGTERM arrives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tailcast.agent.loop import check_accepted, parse_benchmarks
from tailcast.agent.runners import load_builtin_result, sample_rows
from tailcast.collectors.snapshot import snapshot_of
from tailcast.collectors.squeue import load_queue_file
from tailcast.collectors.watch import watch
from tailcast.errors import InputError, NotAcceptedError, UsageError
from tailcast.store import ResultsDir, read_table
from tailcast.units import parse_sizes

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm-22.05"
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl": "self,vader",
}


def test_sizes_and_benchmarks_parse() -> None:
    assert parse_sizes("4,1K,32K,1M") == [4, 1024, 32768, 1048576]
    assert parse_sizes("2kib, 8") == [2048, 8]
    with pytest.raises(UsageError):
        parse_sizes("4,1Q")
    assert parse_benchmarks("bcast, Alltoall") == ["bcast", "alltoall"]
    with pytest.raises(UsageError):
        parse_benchmarks("bcast,gather")


def test_sample_rows_max_and_mean_over_ranks() -> None:
    times = np.array([[1.0, 3.0, 2.0], [5.0, np.nan, 1.0]])
    rows = sample_rows(times)
    assert [r["latency_us"] for r in rows] == [3.0, 5.0]
    assert [r["latency_us_mean"] for r in rows] == [2.0, 3.0]
    assert rows[0]["rank_latency_us"] == [1.0, 3.0, 2.0]
    assert "rank_latency_us" not in sample_rows(times, per_rank=False)[0]


def test_check_accepted_raises_exit_3() -> None:
    check_accepted([{"b_accepted": True, "benchmark": "bcast", "msg_size_bytes": 4}])
    with pytest.raises(NotAcceptedError, match="bcast@4") as err:
        check_accepted([{"b_accepted": False, "benchmark": "bcast", "msg_size_bytes": 4}])
    assert err.value.exit_code == 3


def test_bad_result_file_is_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "r.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(InputError) as err:
        load_builtin_result(bad)
    assert err.value.path == str(bad)


@pytest.mark.mpi
@pytest.mark.parametrize("benchmark", ["bcast", "reduce", "alltoall", "allgather", "latency"])
def test_builtin_under_mpirun(mpi_available: None, tmp_path: Path, benchmark: str) -> None:
    out = tmp_path / "r.npz"
    argv = [
        "mpirun",
        "--oversubscribe",
        "-np",
        "3",
        sys.executable,
        "-m",
        "tailcast.agent.builtin",
        "--benchmark",
        benchmark,
        "--size",
        "1024",
        "--iterations",
        "40",
        "--warmup",
        "3",
        "--interval-ms",
        "1",
        "--out",
        str(out),
    ]
    env = {**os.environ, **MPI_ENV}
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = load_builtin_result(out)
    assert result.times_us.shape == (40, 3)
    assert result.meta["mpi_library"].startswith("Open MPI")
    if benchmark == "latency":  # only ranks 0 and 1 ping-pong
        assert np.isnan(result.times_us[:, 2]).all()
        assert np.isfinite(result.times_us[:, :2]).all()
    else:
        assert np.isfinite(result.times_us).all()
    assert (np.nanmin(result.times_us, axis=1) > 0).all()
    rows = sample_rows(result.times_us)
    assert len(rows) == 40 and all(r["latency_us"] >= r["latency_us_mean"] for r in rows)


@pytest.mark.mpi
def test_builtin_refuses_one_rank(mpi_available: None, tmp_path: Path) -> None:
    argv = [
        "mpirun",
        "-np",
        "1",
        sys.executable,
        "-m",
        "tailcast.agent.builtin",
        "--benchmark",
        "bcast",
        "--out",
        str(tmp_path / "r.npz"),
    ]
    proc = subprocess.run(
        argv, env={**os.environ, **MPI_ENV}, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "at least two" in proc.stderr
    assert not (tmp_path / "r.npz").exists()


def test_watch_sigterm_keeps_every_snapshot(results_home: Path) -> None:
    queue = load_queue_file(DATA / "squeue-mix.json")
    taken = []

    def take():  # type: ignore[no-untyped-def]
        snap = snapshot_of(queue, 16)
        taken.append(snap.snapshot_id)
        return snap

    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.start()
    start = time.monotonic()
    result = watch(take, interval_s=0.1, duration_s=30, flush_every=1000, jitter=0.2)
    assert time.monotonic() - start < 5
    assert result.stopped_by == signal.SIGTERM
    assert len(taken) >= 3 and len(result.snapshots) == len(taken)
    stored = [
        r["snapshot_id"]
        for f in ResultsDir().files("utilisation")
        for r in read_table(f, "utilisation").to_pylist()
    ]
    assert sorted(stored) == sorted(taken)  # flushed on SIGTERM although < flush_every
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handler restored


def test_watch_flushes_every_n(results_home: Path) -> None:
    queue = load_queue_file(DATA / "squeue1.json")
    result = watch(lambda: snapshot_of(queue, 16), 0.05, 0.5, flush_every=2, jitter=0.0)
    n = len(result.snapshots)
    assert n >= 4
    assert len(ResultsDir().files("utilisation")) == (n + 1) // 2
    with pytest.raises(UsageError):
        watch(lambda: snapshot_of(queue, 16), 0, 1)
