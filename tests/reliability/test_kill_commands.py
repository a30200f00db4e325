"""Issue 19 §2: real commands killed with SIGKILL at random points (bench/kill_commands.py;
the bench does 100 trials per command, these a few): `replay run`, `collect watch` on the
local Slurm, and `replay sweep resume`, which a last resume then finishes. Every file stays
readable, nothing partial is visible, nothing is duplicated."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tailcast.store import ResultsDir
from tailcast.sweeps.plan import create_plan
from tailcast.sweeps.spec import load_spec
from tests.conftest import REPO
from tests.reliability.conftest import TAILCAST, write_halo
from tests.sweeps.conftest import write_spec

sys.path.insert(0, str(REPO / "bench"))
from kill_commands import (  # bench/ shares the harness with this test
    KillCounts,
    check_replays,
    check_snapshots,
    check_sweep,
    kill_at_random,
)

sys.path.remove(str(REPO / "bench"))

TRIALS = 4


def _report(what: str, c: KillCounts) -> None:
    print(
        f"{what}: runs expected/found/duplicated/corrupt = {c.expected}/{c.found}/"
        f"{c.duplicated}/{c.corrupt}; {c.killed}/{c.trials} killed mid-way; "
        f"incomplete {c.incomplete}; pending parts hidden {c.pending_hidden}"
    )


def test_replay_run_killed_at_random_points(tmp_path: Path) -> None:
    trace = write_halo(tmp_path / "halo.parquet", 1500)
    home = tmp_path / "home"
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    argv = [TAILCAST, "replay", "run", str(trace), "--fabric", "torus-4x4x4", "--no-messages"]
    t0 = time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True)  # one whole replay
    whole_s = time.monotonic() - t0
    rng = random.Random(19)
    counts = KillCounts(expected=1)
    for _ in range(TRIALS):
        counts.trials += 1
        killed = kill_at_random(argv, env, rng, whole_s)
        counts.killed += killed
        counts.expected += not killed
    check_replays(home, counts, ops_per_replay=pq.ParquetFile(trace).metadata.num_rows)
    _report("replay run", counts)
    assert counts.corrupt == counts.duplicated == counts.incomplete == 0, asdict(counts)
    assert counts.found == counts.expected  # killed ones: nothing visible


@pytest.mark.slurm
def test_collect_watch_killed_at_random_points(slurm_cluster: Any, tmp_path: Path) -> None:
    slurm_cluster.cancel_all()
    for nodes in ("2", "3"):  # jobs for the snapshots to list
        slurm_cluster.sbatch(["-N", nodes, "--time=5"], "#!/bin/bash\nsleep 120\n", tmp_path)
    home = tmp_path / "home"
    env = slurm_cluster.full_env(TAILCAST_HOME=str(home))
    argv = [TAILCAST, "collect", "watch", "--interval", "0.2", "--duration", "60"]
    argv += ["--flush-every", "2", "--total-nodes", "16"]
    rng = random.Random(7)
    counts = KillCounts()
    for _ in range(TRIALS):
        counts.trials += 1
        counts.killed += kill_at_random(argv, env, rng, 6.0)
    check_snapshots(home, counts)
    counts.expected = counts.found  # unflushed snapshots die with the process, by design
    _report("collect watch", counts)
    assert counts.killed == TRIALS and counts.found > 0
    assert counts.corrupt == counts.duplicated == counts.incomplete == 0, asdict(counts)
    slurm_cluster.cancel_all()


def test_sweep_killed_at_random_points_then_resumed(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "home")
    # 4 seeds (384 points): one seed's 96 points could all finish before the first kill
    # (1.4 s in) on a fast moment of the machine, leaving nothing to interrupt
    plan = create_plan(load_spec(write_spec(tmp_path, seeds=4, name="kill")), 1, results)
    env = {**os.environ, "TAILCAST_HOME": str(results.root)}
    argv = [TAILCAST, "replay", "sweep", "resume", plan.sweep_id, "--jobs", "2"]
    rng = random.Random(3)
    counts = KillCounts()
    for _ in range(TRIALS):
        counts.trials += 1
        counts.killed += kill_at_random(argv, env, rng, 6.0)
    subprocess.run(argv, env=env, check=True, capture_output=True)  # the rerun finishes it
    check_sweep(results.root, plan.sweep_id, len(plan.points), counts)
    _report("replay sweep", counts)
    assert counts.killed > 0
    assert counts.corrupt == counts.duplicated == counts.incomplete == 0, asdict(counts)
    assert counts.found == counts.expected == len(plan.points)
