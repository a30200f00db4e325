"""Replays with several jobs: background generators and traces on free endpoints, placement
by locality class and by node names, per-message rows and fabric statistics in the store,
and the engine's errors as typed exceptions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from tailcast import _core
from tailcast.errors import UsageError
from tailcast.replay.background import BackgroundJob, BackgroundTrace, parse_job
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import ReplayFailed, load_columns, replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import ResultsDir
from tailcast.store.catalog import Catalog
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.schema import Op, TraceBuilder
from tailcast.traces.synth.program import Program
from tests.replay.conftest import osu_parquet


def _cli(*args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "tailcast", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out))


def _long_compute(tmp: Path, ms: int) -> Path:
    """A 2-rank trace: rank 0 computes `ms` milliseconds, then both synchronise."""
    b = TraceBuilder()
    end = ms * 1_000_000
    for rank in (0, 1):
        b.add(rank, Op.INIT, t_start_ns=0, t_end_ns=0)
        b.add(rank, Op.BARRIER, t_start_ns=end if rank == 0 else 0, t_end_ns=end, comm=0)
    return write_trace(b.table(), tmp / "compute.parquet", TraceMeta(ranks=2))


def test_offered_background_load_is_what_was_asked_within_2_percent(tmp_path: Path) -> None:
    trace = _long_compute(tmp_path, 20)
    cases = [
        ("uniform:nodes=12:load=0.5:bytes=8K", 0.5),
        ("all_to_all:nodes=6:load=0.25:bytes=64K:arrivals=periodic", 0.25),
    ]
    for spec, load in cases:
        s = _cli("replay", "run", str(trace), "--fabric", "crossbar", "--no-store", "--json",
                 "--background", spec)  # fmt: skip
        offered = s["fabric_stats"]["background_offered_load"]
        assert offered == pytest.approx(load, rel=0.02), spec
        assert s["background_messages"] > 100


def test_zero_background_load_changes_nothing(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "alltoall", 8, 1 << 16, iterations=3)
    fabric = load_fabric("crossbar")
    plain = replay_trace(trace, fabric, ReplayOptions())
    idle = BackgroundJob(pattern="uniform", nodes=8, load=0.0)
    quiet = replay_trace(trace, fabric, ReplayOptions(background=(idle,)))
    assert np.array_equal(plain.ops.column("sim_end_ns"), quiet.ops.column("sim_end_ns"))
    assert plain.total_time_ns == quiet.total_time_ns


def test_background_on_shared_links_slows_the_foreground(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "alltoall", 4, 1 << 20, iterations=3)
    tree = load_fabric("tree-2x2x4")
    base = ReplayOptions(placement="different_islands")
    alone = replay_trace(trace, tree, base)
    # Every other node sends across the islands: the island uplinks are shared.
    noisy = BackgroundJob(pattern="uniform", nodes=12, load=0.8, bytes=1 << 20)
    loaded = replay_trace(trace, tree, ReplayOptions(placement="different_islands",
                                                     background=(noisy,)))  # fmt: skip
    assert loaded.total_time_ns > 1.3 * alone.total_time_ns
    assert loaded.fabric_stats["background_delivered_load"] > 0.1


def test_background_traces_run_on_free_endpoints_and_are_cut_off(tmp_path: Path) -> None:
    fg = osu_parquet(tmp_path, "bcast", 4, 1 << 12)
    bg = osu_parquet(tmp_path, "alltoall", 8, 1 << 20, iterations=50)
    fabric = load_fabric("crossbar")
    alone = replay_trace(fg, fabric, ReplayOptions())
    opts = ReplayOptions(background_traces=(BackgroundTrace(bg, "linear"),))
    with_bg = replay_trace(fg, fabric, opts)
    # The crossbar isolates endpoints: a background job elsewhere changes nothing.
    assert with_bg.total_time_ns == alone.total_time_ns
    too_big = ReplayOptions(background_traces=(BackgroundTrace(bg, "random"),) * 8)
    with pytest.raises(UsageError, match="free endpoints"):
        replay_trace(fg, fabric, too_big)


def test_locality_classes_place_ranks_on_their_levels(tmp_path: Path) -> None:
    tree = load_fabric("tree-2x2x4")
    layout = tree.layout
    eight = load_columns(osu_parquet(tmp_path, "reduce", 8, 4)).arrays()
    for cls, groups, islands in [("same_group", 1, 1), ("same_island", 2, 1),
                                 ("different_islands", None, 2)]:  # fmt: skip
        for seed in range(5):
            scenario = _core.Scenario(tree.spec, f"locality:{cls}:4:{seed}")
            eps = list(_core.replay(scenario, [eight]).jobs[0].endpoints)
            g = {layout["group"][e] for e in eps}
            i = {layout["island"][e] for e in eps}
            assert len(i) == islands, (cls, eps)
            if groups is not None:
                assert len(g) == groups, (cls, eps)
            assert eps[0] == eps[1]  # 2 ranks per node, in blocks
    trace = osu_parquet(tmp_path, "reduce", 4, 1 << 20, iterations=2)
    times = {
        cls: replay_trace(trace, tree, ReplayOptions(placement=cls)).total_time_ns
        for cls in ("same_group", "same_island", "different_islands")
    }
    assert times["same_group"] < times["same_island"] < times["different_islands"], times
    with pytest.raises(UsageError, match="no groups or islands"):
        replay_trace(trace, load_fabric("crossbar"), ReplayOptions(placement="same_group"))


def test_node_names_place_ranks_like_a_measured_run(tmp_path: Path) -> None:
    tree = load_fabric("tree-2x2x4")
    trace = osu_parquet(tmp_path, "bcast", 8, 1024)
    out = replay_trace(trace, tree, ReplayOptions(placement="nodes:node[05-06,13-14]"))
    assert out.ranks == 8
    eps = _core.replay(_core.Scenario(tree.spec, "explicit:4,4,5,5,12,12,13,13"),
                       [load_columns(trace).arrays()]).jobs[0].endpoints  # fmt: skip
    assert list(eps) == [4, 4, 5, 5, 12, 12, 13, 13]
    with pytest.raises(UsageError, match="node99"):
        replay_trace(trace, tree, ReplayOptions(placement="nodes:node99"))


def test_messages_and_fabric_stats_are_stored(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "alltoall", 4, 1 << 14, iterations=2)
    results = ResultsDir(tmp_path / "store")
    out = replay_trace(trace, load_fabric("tree-2x2x4"),
                       ReplayOptions(record_messages=True), results)  # fmt: skip
    assert out.messages is not None
    assert out.messages.num_rows == out.stats["messages"]
    hops = out.ops.column("hops").to_pylist()
    sends = [op for op, h in zip(out.ops.column("op").to_pylist(), hops, strict=True) if h]
    assert set(sends) == {"alltoall"}
    with Catalog(results) as cat:
        n = cat.rows(
            f"SELECT count(*) AS n FROM replay_messages WHERE replay_id = '{out.replay_id}'"
        )
        assert n[0]["n"] == out.stats["messages"]
        stats = cat.rows(
            f"SELECT name, value FROM fabric_stats WHERE replay_id = '{out.replay_id}'"
        )
        names = {r["name"] for r in stats}
        assert {"engine_actions", "flows", "utilisation_level1_max"} <= names
    messages = pq.read_table(next((tmp_path / "store" / "replay_messages").glob("*.parquet")))
    for kind, size in zip(messages.column("kind").to_pylist(), messages.column("bytes").to_pylist(),
                          strict=True):  # fmt: skip
        assert kind == ("rendezvous" if size > 8192 else "eager")


def test_replay_errors_are_typed_with_fields(tmp_path: Path) -> None:
    p = Program(2)
    p.recv(0, 1, 8)
    p.recv(1, 0, 8)
    trace = write_trace(p.table(), tmp_path / "deadlock.parquet", TraceMeta(ranks=2))
    cols = load_columns(trace).arrays()
    with pytest.raises(_core.ReplayError) as info:
        _core.replay(_core.Scenario(load_fabric("ideal").spec, "linear"), [cols])
    err = info.value
    assert err.kind == "deadlock" and err.total_blocked == 2
    assert {b["rank"] for b in err.blocked} == {0, 1}
    assert "recv" in err.blocked[0]["waiting_for"]
    with pytest.raises(ReplayFailed, match="deadlock"):
        replay_trace(trace, load_fabric("ideal"), ReplayOptions())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ring:nodes=2:load=0.1", "pattern must be one of"),
        ("uniform:load=0.1", "nodes=… is required"),
        ("uniform:nodes=4:load=2", "load must be in"),
        ("uniform:nodes=4:load=0.1:speed=3", "unknown key 'speed'"),
        ("uniform:nodes=4:load=x", "is not a number"),
        ("uniform:nodes=4:load=0.1:bytes=4Q", "--background .*: bad message size '4Q'"),
    ],
)
def test_bad_background_specs_are_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_job(text)
