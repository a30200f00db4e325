"""Sweeps on one machine: a spec checked whole before anything runs (exit 2, one line),
points with seeds from (sweep seed, index), each stored once, resumable, readable by id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast.analysis.sources import resolve
from tailcast.store import Catalog, ResultsDir
from tailcast.sweeps.plan import create_plan, done_points, load_plan, point_path
from tailcast.sweeps.runner import run_points
from tailcast.sweeps.spec import load_spec, point_seed
from tests.replay.conftest import osu_parquet
from tests.sweeps.conftest import write_spec


def _cli(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "tailcast", "replay", "sweep", *args],
        capture_output=True, text=True, env=env, check=check,
    )  # fmt: skip


def test_points_are_the_product_of_the_axes_with_seeds_from_the_index(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path))
    points = spec.points()
    assert len(points) == 2 * 2 * 3 * 2 * 2 * 2 * 3 == 288
    assert [p.index for p in points] == list(range(288))
    assert points[5].seed == point_seed(7, 5) and len({p.seed for p in points}) == 288
    assert points[0].params["fabric"] == "crossbar" and points[-1].params["fabric"] == "tree-2x2x4"


@pytest.mark.parametrize(
    ("axes", "fragment"),
    [
        ('"fabric.link_bandwidth_mbps" = [1.0]', "key axes.fabric = crossbar with overrides"),
        ('"fabric.host.overhead_ns" = [-1.0]', "overhead_ns"),
        ('placement = ["diagonal"]', "key axes.placement"),
        ('background = ["ring:nodes=2:load=0.1"]', "key axes.background"),
        ("speed = [1]", "key axes.speed: unknown axis"),
        ("background_b = [1.5]", "key axes.background_b"),
    ],
)
def test_a_bad_spec_exits_2_with_one_line_before_anything_runs(
    tmp_path: Path, axes: str, fragment: str
) -> None:
    spec = write_spec(tmp_path)
    text = spec.read_text().split("[axes]")[0] + "[axes]\nfabric = ['crossbar']\n" + axes + "\n"
    spec.write_text(text)
    proc = _cli(tmp_path / "home", "run", str(spec), check=False)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and str(spec) in lines[0], proc.stderr
    assert not (tmp_path / "home" / "sweeps").exists()  # nothing planned


def test_missing_trace_and_unknown_sweep_exit_2(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    spec.write_text(spec.read_text().replace('traces = ["', 'traces = ["nope-'))
    proc = _cli(tmp_path / "home", "run", str(spec), check=False)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    for command in ("status", "resume", "cancel"):
        proc = _cli(tmp_path / "home", command, "no-such-sweep-1", check=False)
        assert proc.returncode == 2, (command, proc.stderr)
        assert (
            proc.stderr.strip().splitlines() == [proc.stderr.strip().splitlines()[0]]
            and "does not exist" in proc.stderr
        )


def test_local_sweep_runs_resumes_and_reads_by_id(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "home")
    plan = create_plan(load_spec(write_spec(tmp_path, seeds=1, name="small")), 1, results)
    first = run_points(plan, range(0, 40), results, "local", jobs=2)
    assert len(first) == 40 and done_points(plan, results) == set(range(40))
    # A point stored again (a task killed after its files, resumed) replaces its files.
    before = point_path(results, plan.sweep_id, 3).read_bytes()
    again = run_points(plan, [3], results, "local")
    assert again == [] and point_path(results, plan.sweep_id, 3).read_bytes() == before
    proc = _cli(tmp_path / "home", "resume", plan.sweep_id, "--jobs", "2", "--json")
    assert json.loads(proc.stdout)["points"] == len(plan.points) - 40
    status = json.loads(_cli(tmp_path / "home", "status", plan.sweep_id, "--json").stdout)
    assert status["done"] == status["points"] == 96 and status["missing"] == []
    with Catalog(results) as cat:
        rows = cat.rows(f"SELECT count(*) AS n, count(DISTINCT point) AS d FROM sweep_points "
                        f"WHERE sweep_id = '{plan.sweep_id}'")  # fmt: skip
        assert rows[0]["n"] == rows[0]["d"] == 96
        replays = cat.rows(f"SELECT count(*) AS n FROM replays WHERE replay_id LIKE "
                           f"'{plan.sweep_id}-p%'")  # fmt: skip
        assert replays[0]["n"] == 96
        src = resolve(plan.sweep_id, cat)
        assert src.kind == "sweep" and src.table.num_rows == 96 * 5
    # The plan is what tasks read, whatever happens to the spec file afterwards.
    write_spec(tmp_path, seeds=9)
    assert len(load_plan(plan.sweep_id, results).points) == 96


def test_results_do_not_depend_on_sharding(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, seeds=1))
    a = ResultsDir(tmp_path / "a")
    b = ResultsDir(tmp_path / "b")
    pa_, pb = create_plan(spec, 1, a), create_plan(spec, 7, b)
    subset = list(range(0, 96, 5))
    run_points(pa_, subset, a, "local")
    for task in range(7):
        run_points(pb, [i for i in pb.shard(task) if i in subset], b, f"plan:{task}")
    cols = "point, seed, total_time_ns, iteration_p50_us, iteration_p99_us, messages"
    with Catalog(a) as ca, Catalog(b) as cb:
        ra = ca.rows(f"SELECT {cols} FROM sweep_points ORDER BY point")
        rb = cb.rows(f"SELECT {cols} FROM sweep_points ORDER BY point")
    assert ra == rb and len(ra) == len(subset)


def test_background_b_and_routing_axes_on_a_dragonfly(tmp_path: Path) -> None:
    """Issue 12's sweep: b × locality × routing (a fabric override) on the bundled dfp-test;
    each point's replay records its b, and more b slows the mean."""
    trace = osu_parquet(tmp_path, "reduce", 16, 1 << 18, iterations=20)
    spec_path = tmp_path / "b.toml"
    spec_path.write_text(
        f"""[sweep]
name = "b"
traces = ["{trace.name}"]
seeds = 1
seed = 3

[axes]
fabric = ["dfp-test"]
placement = ["different_islands"]
background_b = [0.1, 0.6]
"fabric.routing" = ["minimal", "adaptive"]
"""
    )
    results = ResultsDir(tmp_path / "home")
    plan = create_plan(load_spec(spec_path), 1, results)
    assert len(plan.points) == 4
    assert len(run_points(plan, range(4), results, "local")) == 4
    with Catalog(results) as cat:
        rows = cat.rows(
            "SELECT p.params, p.iteration_mean_us AS mean, r.background_b AS b "
            "FROM sweep_points p JOIN replays r USING (replay_id) ORDER BY p.point"
        )
    assert [r["b"] for r in rows] == [json.loads(r["params"])["background_b"] for r in rows]
    by = {(json.loads(r["params"])["fabric.routing"], r["b"]): r["mean"] for r in rows}
    for routing in ("minimal", "adaptive"):
        assert by[(routing, 0.6)] > by[(routing, 0.1)], by
