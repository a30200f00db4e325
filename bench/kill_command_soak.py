"""`replay run`, `collect watch` and `replay sweep resume` killed with SIGKILL at random
points, `trials` times each (bench/kill_commands.py does the killing and the checks), for
bench/reliability_bench.py. `collect watch` reads a private 4-node Slurm started here
(scripts/slurm-local through the tests' fixture class) with two multi-node jobs queued."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pyarrow.parquet as pq
from kill_commands import KillCounts, check_replays, check_snapshots, check_sweep, kill_at_random

REPO = Path(__file__).resolve().parents[1]


def command_kill_figures(work: Path, trials: int) -> dict[str, object]:
    sys.path.insert(0, str(REPO))
    from tests.reliability.conftest import TAILCAST, write_halo
    from tests.slurm_fixture import LocalCluster
    from tests.sweeps.conftest import write_spec

    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import create_plan
    from tailcast.sweeps.spec import load_spec

    work.mkdir(parents=True)
    rng = random.Random(19)
    figures: dict[str, object] = {"trials_per_command": trials}

    trace = write_halo(work / "halo.parquet", 1500)
    home = work / "replay-home"
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    argv = [TAILCAST, "replay", "run", str(trace), "--fabric", "torus-4x4x4", "--no-messages"]
    whole = subprocess.run(["/usr/bin/time", "-f", "%e", *argv], env=env, check=True,
                           capture_output=True, text=True)  # fmt: skip
    whole_s = float(whole.stderr.strip().splitlines()[-1])
    counts = KillCounts(expected=1)
    for _ in range(trials):
        counts.trials += 1
        killed = kill_at_random(argv, env, rng, whole_s * 1.2)
        counts.killed += killed
        counts.expected += not killed
    rows = pq.ParquetFile(trace).metadata.num_rows
    figures["replay_run"] = asdict(check_replays(home, counts, rows))

    cluster = LocalCluster.start(work / "slurm", n_nodes=4)
    try:
        for nodes in ("2", "2"):
            cluster.sbatch(["-N", nodes, "--time=60"], "#!/bin/bash\nsleep 3600\n", work)
        home = work / "watch-home"
        env = cluster.full_env(TAILCAST_HOME=str(home))
        argv = [TAILCAST, "collect", "watch", "--interval", "0.2", "--duration", "60"]
        argv += ["--flush-every", "2", "--total-nodes", "4"]
        counts = KillCounts()
        for _ in range(trials):
            counts.trials += 1
            counts.killed += kill_at_random(argv, env, rng, 6.0)
        check_snapshots(home, counts)
        counts.expected = counts.found  # snapshots not yet flushed die with the process
        figures["collect_watch"] = asdict(counts)
    finally:
        cluster.stop()

    results = ResultsDir(work / "sweep-home")
    plan = create_plan(load_spec(write_spec(work, seeds=3, name="soak")), 1, results)
    env = {**os.environ, "TAILCAST_HOME": str(results.root)}
    argv = [TAILCAST, "replay", "sweep", "resume", plan.sweep_id, "--jobs", "2"]
    counts = KillCounts()
    for _ in range(trials):
        counts.trials += 1
        counts.killed += kill_at_random(argv, env, rng, 1.0)
    subprocess.run(argv, env=env, check=True, capture_output=True)  # the rerun finishes it
    figures["replay_sweep"] = asdict(
        check_sweep(results.root, plan.sweep_id, len(plan.points), counts)
    )
    return figures
