"""Sweep wall time, serially in one process vs as a 16-task Slurm job array on a private
local cluster (scripts/slurm-local), for the 288-point spec of the sweep tests (OSU-pattern
alltoall on 8 ranks; crossbar and tree-2x2x4; 3 seeds). Writes bench/results/sweep.json.

On this 2-core VM the array cannot beat the serial run by much: 16 emulated nodes share
two cores and every task pays a Python start-up. The ratio is what a real cluster's nodes
would each take off the serial time; the figure here is the overhead of the machinery.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def run() -> dict[str, Any]:
    from tests.sweeps.conftest import write_spec

    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import create_plan
    from tailcast.sweeps.runner import run_points
    from tailcast.sweeps.spec import load_spec

    with tempfile.TemporaryDirectory(prefix="tailcast-sweep-bench-") as tmp:
        root = Path(tmp)
        spec_path = write_spec(root, seeds=3)
        serial = ResultsDir(root / "serial")
        plan = create_plan(load_spec(spec_path), 1, serial)
        t0 = time.perf_counter()
        run_points(plan, range(len(plan.points)), serial, "local", jobs=1)
        serial_s = time.perf_counter() - t0
        cluster = root / "cluster"
        up = subprocess.run(
            [str(REPO / "scripts" / "slurm-local"), "up", str(cluster)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if up.returncode != 0:
            raise RuntimeError(f"slurm-local up failed: {up.stderr.strip()}")
        try:
            env_text = subprocess.run(
                [str(REPO / "scripts" / "slurm-local"), "env", str(cluster)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            env = {k: v for k, v in os.environ.items() if not k.startswith(("SBATCH_", "SLURM_"))}
            for line in env_text.splitlines():
                key, _, value = line.removeprefix("export ").partition("=")
                if key:
                    env[key] = value.strip("'\"")
            env["TAILCAST_HOME"] = str(root / "array")
            array_s = _array(spec_path, env, len(plan.points))
        finally:
            subprocess.run(
                [str(REPO / "scripts" / "slurm-local"), "down", str(cluster)],
                capture_output=True, timeout=300,
            )  # fmt: skip
    return {
        "points": len(plan.points),
        "serial_wall_s": round(serial_s, 2),
        "array_tasks": 16,
        "array_wall_s": round(array_s, 2),
        "array_over_serial": round(array_s / serial_s, 3),
        "note": "2-core VM: 16 emulated nodes share 2 cores; see the module doc",
    }


def _array(spec: Path, env: dict[str, str], points: int) -> float:
    cli = [sys.executable, "-m", "tailcast", "replay", "sweep"]
    t0 = time.perf_counter()
    out = subprocess.run(
        [*cli, "run", str(spec), "--slurm", "--array-size", "16", "--json"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    sweep_id = json.loads(out)["sweep_id"]
    while True:
        st = json.loads(
            subprocess.run(
                [*cli, "status", sweep_id, "--json"],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout
        )
        if st["done"] == points:
            return time.perf_counter() - t0
        if not any(t["state"] in ("running", "pending") for t in st["tasks"]):
            raise RuntimeError(f"sweep {sweep_id} stopped with {st['done']}/{points} points")
        time.sleep(1)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
