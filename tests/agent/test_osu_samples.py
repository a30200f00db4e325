"""Per-iteration times of real OSU runs recorded under the tracer's timing mode
(scripts/record_osu_outputs.py --timing: the ranks' files and OSU's stdout of the same run):
the split into warm-up and timed iterations, and that the times reproduce what OSU printed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tailcast.agent.osu_samples import iteration_times
from tailcast.collectors.osu_parse import parse_osu_output
from tailcast.collectors.osu_suite import SUITE
from tailcast.errors import InputError
from tailcast.traces.capture.timing import RECORD, read_timing_dir

DATA = Path(__file__).resolve().parents[1] / "data" / "osu-7.4" / "timing"
ITERATIONS, WARMUP = 40, 5


def _load(name: str, bench: str, size: int) -> tuple[object, object]:
    times = iteration_times(SUITE[bench], read_timing_dir(DATA / name), WARMUP, ITERATIONS, size)
    out = parse_osu_output((DATA / name / "stdout.txt").read_text())
    return times, out.rows[0]


def test_blocking_collective_reproduces_osu_row() -> None:
    times, row = _load("osu_bcast_np4__m_1024", "bcast", 1024)
    assert times.warmup_us.shape == (WARMUP, 4) and times.timed_us.shape == (ITERATIONS, 4)
    per_rank = times.timed_us.mean(axis=0)
    # OSU prints two decimals of exactly these quantities (osu_bcast.c, osu_util_mpi.c)
    assert round(float(times.timed_us.mean()), 2) == pytest.approx(row.avg_latency_us, abs=0.011)
    assert round(float(per_rank.min()), 2) == pytest.approx(row.min_latency_us, abs=0.011)
    assert round(float(per_rank.max()), 2) == pytest.approx(row.max_latency_us, abs=0.011)
    means = np.sort(times.timed_us.mean(axis=1))
    for p in (50, 90, 99):
        index = ITERATIONS * p // 100 - 1
        assert means[index] == pytest.approx(row.tail_latency_us[p], abs=0.011)


def test_nonblocking_pure_communication_loop() -> None:
    times, row = _load("osu_ibcast_np4__m_64", "ibcast", 64)
    per_rank = times.timed_us.mean(axis=0)
    assert round(float(times.timed_us.mean()), 2) == pytest.approx(row.pure_comm_us, abs=0.011)
    assert round(float(per_rank.min()), 2) == pytest.approx(row.min_comm_us, abs=0.011)
    assert round(float(per_rank.max()), 2) == pytest.approx(row.max_comm_us, abs=0.011)


def test_latency_halves_the_round_trip_of_two_ranks() -> None:
    times, row = _load("osu_latency_np2__m_8", "latency", 8)
    assert times.timed_us.shape == (ITERATIONS, 2)
    assert round(float(times.timed_us[:, 0].mean()), 2) == pytest.approx(
        row.avg_latency_us, abs=0.011
    )
    rank0 = np.sort(times.timed_us[:, 0])
    assert rank0[ITERATIONS // 2 - 1] == pytest.approx(row.tail_latency_us[50], abs=0.011)


def test_bandwidth_windows() -> None:
    times, row = _load("osu_bw_np2__m_4096", "bw", 4096)
    bw = times.bandwidth_mb_s()
    assert bw is not None and times.bytes_per_iteration == 4096 * 64  # OSU's default window
    # OSU: all timed bytes over their total time, i.e. the harmonic mean of the iterations
    assert ITERATIONS / np.sum(1 / bw) == pytest.approx(row.bandwidth_mb_s, abs=0.011)
    assert np.sort(bw)[ITERATIONS // 2 - 1] == pytest.approx(row.tail_bandwidth_mb_s[50], abs=0.011)


def test_wrong_counts_and_partial_runs(tmp_path: Path) -> None:
    ranks = read_timing_dir(DATA / "osu_bcast_np4__m_1024")
    with pytest.raises(InputError, match=r"rank 0: 45 timed MPI_Bcast iterations.*5 warm-up \+ 50"):
        iteration_times(SUITE["bcast"], ranks, WARMUP, 50, 1024)
    # A rank stopped early (its file cut after 30 records): partial keeps what all finished.
    copy = tmp_path / "cut"
    shutil.copytree(DATA / "osu_bcast_np4__m_1024", copy)
    victim = copy / "rank-000002.bin"
    victim.write_bytes(victim.read_bytes()[: 24 + 30 * RECORD.itemsize])
    cut = read_timing_dir(copy)
    with pytest.raises(InputError, match="rank 2"):
        iteration_times(SUITE["bcast"], cut, WARMUP, ITERATIONS, 1024)
    partial = iteration_times(SUITE["bcast"], cut, WARMUP, ITERATIONS, 1024, partial=True)
    assert not partial.complete and 0 < partial.timed_us.shape[0] < ITERATIONS
    assert not np.isnan(partial.timed_us).any()
