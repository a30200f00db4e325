"""The sweep specs a user copies from: the example in `tailcast.sweeps`' docstrings and the
specs shipped in slurm_jobs/ plan and run as written, and their axes are columns that
`analyze tails SWEEP_ID --by AXIS[,AXIS]` groups by."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tailcast.sweeps
from tailcast.store import ResultsDir
from tailcast.sweeps.plan import create_plan
from tailcast.sweeps.runner import run_points
from tailcast.sweeps.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
SLURM_JOBS = REPO / "slurm_jobs"
_TOML_BLOCK = re.compile(r"```toml\n(.*?)```", re.S)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "tailcast", *args],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip


def docstring_specs() -> list[tuple[str, str]]:
    """(module, TOML text) of every ```toml block in the docstrings of tailcast.sweeps."""
    found = []
    for info in pkgutil.iter_modules(tailcast.sweeps.__path__, "tailcast.sweeps."):
        module = importlib.import_module(info.name)
        for block in _TOML_BLOCK.findall(module.__doc__ or ""):
            found.append((info.name, block))
    return found


def test_the_docstring_examples_run_as_written(tmp_path: Path) -> None:
    specs = docstring_specs()
    assert [name for name, _ in specs] == ["tailcast.sweeps.spec"]
    for i, (_, text) in enumerate(specs):
        folder = tmp_path / f"spec{i}"
        folder.mkdir()
        # the traces it names, as OSU-pattern traces of a few iterations
        for trace in re.findall(r'"([^"]+\.parquet)"', text):
            collective = re.search(r"osu_(\w+)\.parquet", trace)
            assert collective, trace
            res = _cli(
                tmp_path, "trace", "synth", "osu", "--collective", collective.group(1),
                "-n", "8", "--sizes", "1K", "--iterations", "5", "-o", str(folder / trace),
            )  # fmt: skip
            assert res.returncode == 0, res.stderr
        (folder / "spec.toml").write_text(text)
        run = _cli(tmp_path / "home", "replay", "sweep", "run", str(folder / "spec.toml"),
                   "--jobs", "2", "--json")  # fmt: skip
        assert run.returncode == 0, run.stderr
        doc = json.loads(run.stdout)
        assert doc["ran"] == doc["points"] == 32
        tails = _cli(tmp_path / "home", "analyze", "tails", doc["sweep_id"],
                     "--by", "fabric,placement,coll,background", "--json")  # fmt: skip
        assert tails.returncode == 0, tails.stderr
        groups = json.loads(tails.stdout)["groups"]
        # `fabric` names the fabric with its overrides: 2 fabrics x 2 host.overhead_ns values
        assert len(groups) == 32 and "crossbar[host.overhead_ns=300.0]" in {
            g["fabric"] for g in groups
        }


def test_the_local_example_runs_and_its_axes_group_the_tails(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run = _cli(home, "replay", "sweep", "run", str(SLURM_JOBS / "sweep.example.toml"),
               "--jobs", "2", "--json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["ran"] == doc["points"] == 12
    tails = _cli(home, "analyze", "tails", doc["sweep_id"], "--by", "placement,background_b",
                 "--json")  # fmt: skip
    assert tails.returncode == 0, tails.stderr
    groups = {(g["placement"], g["background_b"]): g for g in json.loads(tails.stdout)["groups"]}
    assert set(groups) == {
        (p, b) for p in ("same_island", "different_islands") for b in (0.0, 0.25, 0.5)
    }
    assert all(g["n"] == 2 * 50 for g in groups.values())  # 2 seeds x 50 timed iterations
    # Background jobs sized from b share the island links only with a spread job.
    spread = [groups["different_islands", b]["p99"] for b in (0.0, 0.5)]
    assert spread[1] > spread[0], spread
    assert groups["different_islands", 0.5]["p99"] > groups["same_island", 0.5]["p99"]
    # An axis that is not there: one line naming the columns that are.
    bad = _cli(home, "analyze", "tails", doc["sweep_id"], "--by", "placement,bandwidth")
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tailcast: error: no column 'bandwidth'")
    assert "placement" in lines[0] and "background_b" in lines[0]


def test_the_array_example_plans_and_each_routing_runs(tmp_path: Path) -> None:
    """The Slurm-array example: planned whole (every value checked), then one point of each
    routing at b = 0.5 run here; `fabric.routing` is a column too."""
    spec = load_spec(SLURM_JOBS / "sweep-dragonfly.example.toml")
    results = ResultsDir(tmp_path / "home")
    plan = create_plan(spec, 8, results)
    assert len(plan.points) == 64 and plan.tasks == 8
    picked: dict[str, int] = {}
    for point in plan.points:
        if point.params["background_b"] == 0.5:
            picked.setdefault(point.params["fabric.routing"], point.index)
    assert sorted(picked) == ["adaptive", "fully_adaptive", "minimal", "valiant"]
    assert len(run_points(plan, picked.values(), results, "test")) == 4
    tails = _cli(tmp_path / "home", "analyze", "tails", plan.sweep_id,
                 "--by", "fabric.routing", "--json")  # fmt: skip
    assert tails.returncode == 0, tails.stderr
    rows = json.loads(tails.stdout)["groups"]
    assert sorted(r["fabric.routing"] for r in rows) == sorted(picked)


@pytest.mark.parametrize("spec", sorted(SLURM_JOBS.glob("sweep*.toml")), ids=lambda p: p.name)
def test_every_shipped_sweep_spec_is_exercised(spec: Path) -> None:
    tested = {"sweep.example.toml", "sweep-dragonfly.example.toml"}
    assert spec.name in tested, f"{spec.name}: add a test that runs it"
    assert load_spec(spec).points()
