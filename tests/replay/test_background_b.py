"""Background jobs sized from b (seed 001 §5.1) on the Dragonfly+ fabrics: how many nodes,
which ones, job sizes from a stored snapshot, and `--from-run` taking a measured run's b,
nodes and locality; all through the real engine and store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tailcast import _core
from tailcast.errors import UsageError
from tailcast.replay.background_b import DEFAULT_JOB_SIZES, BackgroundB
from tailcast.replay.fabric import load_fabric
from tailcast.replay.measured_inputs import measured_run, run_placement, snapshot_job_sizes
from tailcast.replay.run import load_columns, replay_failed, replay_trace
from tailcast.replay.scenario import ReplayOptions, scenario_of
from tailcast.store import Catalog, ResultsDir
from tests.replay.conftest import osu_parquet


def _placed(
    tmp: Path, fabric_name: str, placement: str, b: BackgroundB | None = None, ranks: int = 16
) -> tuple[Any, list[int], list[list[int]]]:
    """The fabric, the foreground's endpoints and each background job's, as the engine
    places them for a short replay (seed 3)."""
    fabric = load_fabric(fabric_name)
    arrays = load_columns(osu_parquet(tmp, "reduce", ranks, 4)).arrays()
    options = ReplayOptions(placement=placement, seed=3, background_b=b)
    try:
        result = _core.replay(scenario_of(fabric, options, ranks), [arrays])
    except _core.ReplayError as err:
        raise replay_failed(tmp, err) from err
    return fabric, [int(e) for e in result.jobs[0].endpoints], result.background_endpoints


@pytest.mark.parametrize("how", ["scattered", "around"])
def test_b_sizes_the_background_to_b_times_nt_on_free_endpoints(tmp_path: Path, how: str) -> None:
    for b in (0.2, 0.45, 0.7):
        fabric, fg, jobs = _placed(tmp_path, "marconi100", "different_islands",
                                   BackgroundB(b=b, placement=how))  # fmt: skip
        nodes = [e for j in jobs for e in j]
        assert len(nodes) == round(b * 980)
        assert len(set(nodes)) == len(nodes) and not set(nodes) & set(fg)
        assert all(len(j) >= 2 for j in jobs)
        # Jobs of the default sizes, the last one cut to fit (and never leaving one node).
        assert all(len(j) in DEFAULT_JOB_SIZES for j in jobs[:-1])
    layout = fabric.layout
    # "around": the foreground's leaf switches fill first, then its islands.
    _, fg, jobs = _placed(tmp_path, "marconi100", "different_islands",
                          BackgroundB(b=0.2, placement="around"))  # fmt: skip
    nodes = [e for j in jobs for e in j]
    fg_leaves = {layout["group"][e] for e in fg}
    on_fg_leaves = sum(layout["group"][e] in fg_leaves for e in nodes)
    free_on_fg_leaves = sum(layout["group"][e] in fg_leaves and e not in fg for e in range(980))
    assert on_fg_leaves == min(free_on_fg_leaves, len(nodes))
    fg_islands = {layout["island"][e] for e in fg}
    order = [layout["group"][e] in fg_leaves or layout["island"][e] in fg_islands for e in nodes]
    assert order == sorted(order, reverse=True)  # no node outside before one inside
    # "scattered": about b of the foreground's leaf neighbours are busy.
    _, fg, jobs = _placed(tmp_path, "marconi100", "different_islands", BackgroundB(b=0.45))
    busy = {e for j in jobs for e in j}
    fg_leaves = {layout["group"][e] for e in fg}
    free_on_fg_leaves = sum(layout["group"][e] in fg_leaves and e not in fg for e in range(980))
    share = sum(layout["group"][e] in fg_leaves for e in busy) / free_on_fg_leaves
    assert 0.3 < share < 0.6


def test_b_needs_endpoints_and_room(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="fixed number of endpoints"):
        _placed(tmp_path, "ideal", "linear", BackgroundB(b=0.5))
    with pytest.raises(UsageError, match=r"80 background nodes .* only 64 are free"):
        _placed(tmp_path, "dfp-test", "linear", BackgroundB(b=1.0))
    with pytest.raises(UsageError, match="1 node"):  # b · N_t = 0.6: one node, no job
        _placed(tmp_path, "dfp-test", "linear", BackgroundB(b=0.0075))
    with pytest.raises(UsageError, match="pattern"):
        BackgroundB(b=0.5, pattern="zigzag")


def _store_snapshot(results: ResultsDir, snapshot: str, sizes: list[int]) -> None:
    now = datetime.now(UTC)
    rows = [
        {
            "snapshot_id": snapshot,
            "cluster": "m100",
            "taken_at": now,
            "job_id": str(i),
            "state": "RUNNING" if i % 5 else "PENDING",
            "node_count": n,
            "nodes": [f"n{i}-{k}" for k in range(n)],
        }
        for i, n in enumerate(sizes)
    ]
    results.write("snapshots", rows, name=snapshot)


def test_snapshot_sizes_are_its_running_multi_node_jobs(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "store")
    # job 0 and job 5 are pending; the 1-node jobs do not count (seed 001 §5.1).
    _store_snapshot(results, "snap1", [64, 1, 12, 12, 30, 8, 1, 2, 1])
    assert sorted(snapshot_job_sizes("snap1", results)) == [2, 12, 12, 30]
    with pytest.raises(UsageError, match="no such snapshot"):
        snapshot_job_sizes("nope", results)
    spec = BackgroundB(b=0.45, job_sizes=snapshot_job_sizes("snap1", results))
    _, _, jobs = _placed(tmp_path, "marconi100", "same_island", spec)
    assert {len(j) for j in jobs[:-1]} <= {2, 12, 30}
    assert sum(map(len, jobs)) == round(0.45 * 980)


def _store_run(results: ResultsDir, run_id: str, nodes: list[str], locality: str) -> None:
    results.write(
        "runs",
        [
            {
                "run_id": run_id,
                "cluster": "local",
                "nodes": nodes,
                "ranks": len(nodes),
                "benchmark": "reduce",
                "msg_size_bytes": 1 << 20,
                "locality": locality,
                "b_before": 0.3,
                "b_after": 0.32,
                "b_accepted": True,
            }
        ],
        name=run_id,
    )


def test_from_run_takes_b_nodes_and_locality(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "store")
    _store_run(results, "r1", [f"node{i:02d}" for i in (1, 2, 9, 10)], "different_islands")
    run = measured_run("r1", results)
    assert (run.b, run.locality, len(run.nodes)) == (0.3, "different_islands", 4)
    # tree-2x2x4 names its endpoints node01..node16: the very nodes.
    assert run_placement(run, load_fabric("tree-2x2x4")) == ("nodes:node[01-02,09-10]", None)
    # marconi100 names none of them: the run's locality class, as many nodes.
    assert run_placement(run, load_fabric("marconi100")) == ("different_islands", 4)
    with pytest.raises(UsageError, match="no such run"):
        measured_run("r2", results)


def test_cli_background_b_and_from_run_end_to_end(tmp_path: Path, monkeypatch: Any) -> None:
    from typer.testing import CliRunner

    from tailcast.cli.main import app

    home = tmp_path / "home"
    monkeypatch.setenv("TAILCAST_HOME", str(home))
    results = ResultsDir(home)
    _store_run(results, "m1", [f"x{i}" for i in range(16)], "same_island")
    trace = osu_parquet(tmp_path, "reduce", 16, 1 << 20, iterations=20)
    runner = CliRunner()
    args = ["replay", "run", str(trace), "--fabric", "marconi100", "--json"]
    out = runner.invoke(
        app,
        [*args, "--background-b", "0.45", "--background-pattern", "uniform",
         "--placement", "different_islands"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    first = json.loads(out.stdout)
    assert first["background_messages"] > 0
    out = runner.invoke(app, [*args, "--from-run", "m1"])
    assert out.exit_code == 0, out.output
    second = json.loads(out.stdout)
    with Catalog(results) as cat:
        rows = {
            r["replay_id"]: r
            for r in cat.rows("SELECT replay_id, background_b, background, placement FROM replays")
        }
    assert rows[first["replay_id"]]["background_b"] == 0.45
    assert rows[first["replay_id"]]["placement"] == "different_islands"
    again = rows[second["replay_id"]]
    assert (again["background_b"], again["placement"]) == (0.3, "same_island")
    assert json.loads(again["background"])["from_run"] == "m1"
    bad = runner.invoke(app, [*args, "--background-snapshot", "s"])
    assert isinstance(bad.exception, UsageError)
    assert "--background-b" in str(bad.exception)


def test_background_b_slows_a_reduce_across_islands(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "reduce", 16, 1 << 20, iterations=30)
    fabric = load_fabric("marconi100")
    base = ReplayOptions(placement="different_islands", seed=2)
    quiet = replay_trace(trace, fabric, base)
    loaded = replay_trace(
        trace, fabric, ReplayOptions(placement="different_islands", seed=2,
                                     background_b=BackgroundB(b=0.7))
    )  # fmt: skip
    assert loaded.iteration_latency_us.mean() > 1.02 * quiet.iteration_latency_us.mean()
    assert loaded.stats["background_messages"] > 0
