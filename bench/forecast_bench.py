"""Issue 17's figures: the learned tail forecasts and the submission-time hook.

1. `tailcast predict train` (5-fold time-ordered CV + the final fit) on the recorded b-sweep
   campaign (tests/data/bsweep-16node, real runs on the local 16-node Slurm): whole-command
   CPU and peak RSS, and the validation scores against the linear baseline.
2. On a private local Slurm with the cli_filter hook: the hook client's answer time against
   a warm `predict serve` (repeated and new requests), and `sbatch` wall time with and
   without the hook. The budget is 300 ms per submission.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from child_usage import run_measured

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "tests" / "data" / "bsweep-16node"
TOPOLOGY = REPO / "slurm_jobs" / "topology.example.toml"
CLIENT = REPO / "src" / "tailcast" / "forecast" / "hook_client.py"
CALLS = 40


def _train(home: Path) -> dict[str, Any]:
    for table in ("runs", "samples", "snapshots", "utilisation"):
        shutil.copytree(RECORDED / table, home / table)
    argv = [sys.executable, "-m", "tailcast", "predict", "train"]
    argv += ["--folds", "5", "--topology", str(TOPOLOGY), "--json"]
    previous = os.environ.get("TAILCAST_HOME")
    os.environ["TAILCAST_HOME"] = str(home)  # run_measured's child inherits the environment
    try:
        out, cpu_s, rss_mib, exact = run_measured(argv, home)
    finally:
        if previous is None:
            del os.environ["TAILCAST_HOME"]
        else:
            os.environ["TAILCAST_HOME"] = previous
    meta = json.loads(out[out.index("{") :])
    scores = meta["scores"]
    figures: dict[str, Any] = {
        "train_cpu_s": round(cpu_s, 2),
        "train_peak_rss_mib": round(rss_mib, 1),
        "train_peak_rss_exact": exact,
        "runs": meta["data_range"]["runs"],
        "slurm_jobs": meta["data_range"]["cv_groups"],
        "held_out_runs": scores["held_out_runs"],
        "folds": len(scores["folds"]),
    }
    for target, rep in scores["targets"].items():
        m, paired = rep["model"], rep["paired"]
        figures[target] = {
            "coverage_50_90_99": [round(m["coverage"][b], 3) for b in ("50%", "90%", "99%")],
            "pinball_log": round(m["pinball_log_mean"], 4),
            "paired_runs": paired["runs"],
            "paired_pinball_log_model_vs_baseline": [
                round(paired["model"]["pinball_log_mean"], 4),
                round(paired["baseline"]["pinball_log_mean"], 4),
            ]
            if paired["runs"]
            else None,
            "paired_pinball_us_model_vs_baseline": [
                round(paired["model"]["pinball_us_mean"], 2),
                round(paired["baseline"]["pinball_us_mean"], 2),
            ]
            if paired["runs"]
            else None,
            "paired_coverage_90_model_vs_baseline": [
                round(paired["model"]["coverage"]["90%"], 3),
                round(paired["baseline"]["coverage"]["90%"], 3),
            ]
            if paired["runs"]
            else None,
        }
    tail = scores["tail"]
    if "model" in tail:
        figures["tail_brier_model_vs_base_rate"] = [
            round(tail["model"]["brier"], 4),
            round(tail["base_rate"]["brier"], 4),
        ]
    if "paired" in tail:
        figures["tail_brier_model_vs_baseline"] = [
            round(tail["paired"]["model_brier"], 4),
            round(tail["paired"]["baseline_brier"], 4),
        ]
    return figures


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 1),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max_ms": round(1000 * ordered[-1], 1),
    }


def _hook(home: Path, work: Path) -> dict[str, Any]:
    cluster = Path(tempfile.mkdtemp(prefix="tc-bench-", dir="/tmp"))
    sock = cluster / "f.sock"
    lua = work / "cli_filter.lua"
    tc = [sys.executable, "-m", "tailcast", "predict"]
    subprocess.run(
        [*tc, "install-cli-filter", "--socket", str(sock), "--no-autostart", "--out", str(lua)],
        check=True,
        capture_output=True,
    )
    up = [str(REPO / "scripts" / "slurm-local"), "up", str(cluster), "--cli-filter", str(lua)]
    subprocess.run(up, check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    env.update(json.loads((cluster / "cluster.json").read_text())["env"])
    env["TAILCAST_HOME"] = str(home)
    service = subprocess.Popen(
        [*tc, "serve", "--socket", str(sock), "--refresh", "5"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        options = {"comment": "tailcast: alltoall 32K", "nodes": "4"}
        client = [sys.executable, "-I", "-S", str(CLIENT), "--socket", str(sock)]
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            out = subprocess.run([*client, json.dumps(options)], capture_output=True, text=True)
            if out.stdout.startswith("tailcast: "):
                break
            time.sleep(1)
        repeated, fresh = [], []
        for i in range(CALLS):
            t0 = time.perf_counter()
            subprocess.run([*client, json.dumps(options)], capture_output=True, check=True)
            repeated.append(time.perf_counter() - t0)
            new = {"comment": f"tailcast: bcast {4 << (i % 12)}", "nodes": str(2 + i % 9)}
            t0 = time.perf_counter()
            subprocess.run([*client, json.dumps(new)], capture_output=True, check=True)
            fresh.append(time.perf_counter() - t0)
        script = work / "job.sh"
        script.write_text("#!/bin/bash\n#TAILCAST alltoall 32K\ntrue\n")
        plain = work / "plain.sh"
        plain.write_text("#!/bin/bash\ntrue\n")
        with_hook, without, printed = [], [], 0
        for _ in range(CALLS // 2):
            for path, bucket in ((script, with_hook), (plain, without)):
                t0 = time.perf_counter()
                res = subprocess.run(
                    ["sbatch", "--parsable", "-N", "4", "-t", "1", "-D", str(work), str(path)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                bucket.append(time.perf_counter() - t0)
                printed += res.stderr.startswith("tailcast: ")
        return {
            "client_repeated_request": _percentiles(repeated),
            "client_new_request": _percentiles(fresh),
            "sbatch_with_forecast": _percentiles(with_hook),
            "sbatch_undeclared_job": _percentiles(without),
            "sbatch_forecasts_printed": f"{printed}/{len(with_hook)}",
            "budget_ms": 300,
        }
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=60)
        subprocess.run([str(REPO / "scripts" / "slurm-local"), "down", str(cluster)], check=False)
        shutil.rmtree(cluster, ignore_errors=True)


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tailcast-forecast-bench-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        work.mkdir()
        figures = {"train": _train(home)}
        figures["hook"] = _hook(home, work)
    return figures
