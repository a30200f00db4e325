"""`tailcast replay run` end to end: summary on stdout, the three result tables stored."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tailcast import _core
from tailcast.cli.main import app
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import ReplayFailed, load_columns, replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.schema import TraceBuilder
from tests.replay.conftest import osu_parquet


def test_cli_run_prints_summary_and_stores_tables(tmp_path: Path, results_home: Path) -> None:
    trace = osu_parquet(tmp_path, "allreduce", 16, 4096, iterations=5)
    result = CliRunner().invoke(
        app, ["replay", "run", str(trace), "--fabric", "fat-tree-16", "--seed", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["iterations"] == 5
    assert summary["ops"]["allreduce"]["count"] == 80
    assert summary["total_time_us"] > summary["iteration_p99_us"] > 0
    replays = pq.read_table(next((results_home / "replays").glob("*.parquet")))
    assert replays.column("fabric").to_pylist() == ["fat-tree-16"]
    assert replays.column("seed").to_pylist() == [3]
    ops = pq.read_table(next((results_home / "replay_ops").glob("*.parquet")))
    assert ops.num_rows == summary["actions"]
    iters = pq.read_table(next((results_home / "replay_iterations").glob("*.parquet")))
    assert iters.column("iteration").to_pylist() == [0, 1, 2, 3, 4]


def test_same_inputs_give_identical_results_and_seed_moves_random_placement(
    tmp_path: Path,
) -> None:
    trace = osu_parquet(tmp_path, "alltoall", 16, 65536)
    fabric = load_fabric("torus-4x4x4")
    a = replay_trace(trace, fabric, ReplayOptions(placement="random", seed=1))
    b = replay_trace(trace, fabric, ReplayOptions(placement="random", seed=1))
    c = replay_trace(trace, fabric, ReplayOptions(placement="random", seed=2))
    assert a.ops.equals(b.ops)
    assert not a.ops.equals(c.ops)


def test_deadlock_is_a_clear_error(tmp_path: Path) -> None:
    builder = TraceBuilder()
    for rank in (0, 1):
        builder.add(rank, "recv", peer=1 - rank, recv_bytes=8, tag=7)
        builder.add(rank, "send", peer=1 - rank, send_bytes=8, tag=7)
    path = write_trace(builder.table(), tmp_path / "dead.parquet", TraceMeta(ranks=2))
    with pytest.raises(ReplayFailed, match=r"deadlock: 2 rank\(s\) blocked.*recv"):
        replay_trace(path, load_fabric("ideal"), ReplayOptions())


def test_two_traces_share_one_fabric(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "alltoall", 8, 1 << 20)
    arrays = load_columns(trace).arrays()
    fabric = load_fabric("crossbar").spec

    def replay(*background: str) -> _core.ReplayResult:
        scenario = _core.Scenario(fabric, "linear", background_traces=list(background))
        return _core.replay(scenario, [arrays] + [arrays] * len(background))

    (alone,) = replay().jobs
    # A second copy on the same endpoints: every link carries twice the traffic.
    result = replay(",".join(map(str, range(8))))
    shared, stats = result.jobs, result.stats
    assert stats["actions"] > len(arrays["rank"])
    assert shared[0].total_time_ns > 1.5 * alone.total_time_ns
    # Placed apart (endpoints 8..15, the free ones from the lowest), they do not interfere.
    apart = replay("linear").jobs
    assert apart[0].total_time_ns == pytest.approx(alone.total_time_ns)
    assert np.array_equal(apart[1].endpoints, np.arange(8, 16, dtype=np.uint32))
