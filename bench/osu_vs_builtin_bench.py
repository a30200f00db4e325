"""Issue 15's comparison: the built-in mpi4py benchmark against the real OSU 7.4 binary, run
interleaved in one `sbatch -N 4` allocation of a private local Slurm (scripts/slurm-local),
for bcast / reduce / allreduce / alltoall at 4 B, 1 KiB, 32 KiB and 1 MiB.

Per (benchmark, size): the ratio built-in / OSU of the mean and of the p99 of the
per-iteration latency (max over ranks, the samples' `latency_us`), pooled over the rounds;
the same ratio between two OSU rounds, which is the machine's own noise; and the tracer's
cost: OSU's printed average with the timing-mode tracer over the one without. The goal is
≤ 5 % apart; the figures are what this machine measures.
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

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SLURM_LOCAL = REPO / "scripts" / "slurm-local"
ROUNDS = 2
JOB_TIMEOUT_S = 4 * 3600


def _env(cluster_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    env.update(cluster_env)
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,tcp"
    )
    return env


def _allocation_run(osu_home: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="tailcast-bench-slurm-") as tmp:
        cluster = Path(tmp) / "cluster"
        up = subprocess.run([str(SLURM_LOCAL), "up", str(cluster), "--nodes", "4"],
                            capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
        if up.returncode != 0:
            raise RuntimeError(f"slurm-local up failed: {up.stderr.strip()}")
        try:
            env = _env(json.loads(up.stdout.strip().splitlines()[-1]))
            script = Path(tmp) / "job.sh"
            script.write_text(
                "#!/bin/bash\nexport OMPI_MCA_btl=self,tcp\n"
                f"exec {sys.executable} {REPO / 'bench' / 'osu_vs_builtin_driver.py'} "
                f"--osu-dir {osu_home} --out {out} --rounds {ROUNDS}\n"
            )
            job = subprocess.run(
                ["sbatch", "--parsable", "-N", "4", "--ntasks-per-node=1", "-D", tmp,
                 f"--output={tmp}/job.log", str(script)],
                capture_output=True, text=True, env=env, check=True, timeout=60,
            ).stdout.strip()  # fmt: skip
            deadline = time.monotonic() + JOB_TIMEOUT_S
            while subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True,
                                 env=env, check=False).stdout.strip():  # fmt: skip
                if time.monotonic() > deadline:  # keep what the driver saved so far
                    subprocess.run(["scancel", job], env=env, check=False, timeout=60)
                    break
                time.sleep(2)
            if not out.exists():
                log = (Path(tmp) / "job.log").read_text(errors="replace")
                raise RuntimeError(f"driver job {job} wrote nothing: {log[-3000:]}")
        finally:
            subprocess.run([str(SLURM_LOCAL), "down", str(cluster)], capture_output=True,
                           timeout=180, check=False)  # fmt: skip


def _figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    done = {(r["benchmark"], r["size_bytes"]) for r in runs}
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault((run["benchmark"], run["size_bytes"]), []).append(run)
    rows = []
    for (name, size), group in sorted(groups.items()):
        built = np.concatenate([np.max(r["builtin_us"], axis=1) for r in group])
        osu = np.concatenate([np.max(r["osu_us"], axis=1) for r in group])
        first, second = (np.max(group[i]["osu_us"], axis=1) for i in (0, 1))
        traced = [r["osu_summary_traced"]["avg_latency_us"] for r in group]
        untraced = [r["osu_avg_untraced_us"] for r in group]
        rows.append(
            {
                "benchmark": name,
                "size_bytes": size,
                "iterations_per_round": group[0]["iterations"],
                "rounds": len(group),
                "builtin_mean_us": round(float(built.mean()), 3),
                "osu_mean_us": round(float(osu.mean()), 3),
                "builtin_p99_us": round(float(np.percentile(built, 99)), 3),
                "osu_p99_us": round(float(np.percentile(osu, 99)), 3),
                "ratio_mean_builtin_over_osu": round(float(built.mean() / osu.mean()), 3),
                "ratio_p99_builtin_over_osu": round(
                    float(np.percentile(built, 99) / np.percentile(osu, 99)), 3
                ),
                "noise_ratio_mean_osu_round2_over_round1": round(
                    float(second.mean() / first.mean()), 3
                ),
                "noise_ratio_p99_osu_round2_over_round1": round(
                    float(np.percentile(second, 99) / np.percentile(first, 99)), 3
                ),
                "tracer_cost_ratio_osu_avg_traced_over_untraced": round(
                    float(np.mean(traced) / np.mean(untraced)), 3
                ),
            }
        )
    within = [r for r in rows if abs(r["ratio_mean_builtin_over_osu"] - 1) <= 0.05]
    within_p99 = [r for r in rows if abs(r["ratio_p99_builtin_over_osu"] - 1) <= 0.05]
    return {
        "comparisons": rows,
        "mean_within_5pct": f"{len(within)} of {len(rows)}",
        "p99_within_5pct": f"{len(within_p99)} of {len(rows)}",
        "measured_pairs": f"{len(done)} of 16",
        "mpi_library": runs[0]["mpi_library"],
        "placement": "sbatch -N 4 --ntasks-per-node=1 on scripts/slurm-local (one host), btl tcp",
    }


def run() -> dict[str, Any]:
    osu_home = Path(
        subprocess.run([str(REPO / "scripts" / "build-third-party"), "osu"],
                       capture_output=True, text=True, check=True, timeout=3600).stdout.strip()
    )  # fmt: skip
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tailcast-bench-osu-") as tmp:
        out = Path(tmp) / "runs.json"
        _allocation_run(osu_home, out)
        runs = json.loads(out.read_text())
    # The machine is shared: its load (runnable processes, 1-min average) beside the figures.
    load = {
        "load_1min_before": round(load_before, 2),
        "load_1min_after": round(os.getloadavg()[0], 2),
    }
    return {**_figures(runs), **load}
