"""A seeded synthetic campaign written into a results directory through ResultsDir.

Stands in for a recorded campaign until the agent's real one is bundled: the OSU outputs in
shared/data/osu-7.4 are per-size summaries without b or per-iteration samples, so they cannot
feed a b-correlation. Shapes follow seed 001: latency grows with b, and at high b a second
(non-minimal route) mode appears.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from tailcast.store import ResultsDir

BENCHMARKS = {"osu_bcast": 0.6, "osu_reduce": 1.0, "osu_alltoall": 1.8}  # relative cost
SIZES = (4, 1024, 1 << 20)
LOCALITIES = ("same-group", "same-island", "different-islands")
START = datetime(2024, 5, 1, tzinfo=UTC)


def _latencies(rng: np.random.Generator, base_us: float, b: float, n: int) -> np.ndarray:
    body = base_us * (1.0 + 2.0 * b) * rng.lognormal(0.0, 0.25, n)
    slow = rng.random(n) < 0.4 * b  # non-minimal paths get likelier with b
    body[slow] *= 2.5
    return body


def write_campaign(
    results: ResultsDir, seed: int = 7, runs_per_group: int = 8, iterations: int = 200
) -> list[dict[str, Any]]:
    """Writes runs + samples (one file per run), osu_results and utilisation; returns runs."""
    rng = np.random.default_rng(seed)
    runs = []
    t = START
    for bench, cost in BENCHMARKS.items():
        for size in SIZES:
            base = cost * (2.0 + size / 5000.0)
            for i in range(runs_per_group):
                b_before = float(rng.uniform(0.1, 0.8))
                b_after = b_before + float(rng.normal(0, 0.01))
                locality = LOCALITIES[i % len(LOCALITIES)]
                run_id = str(uuid.UUID(int=int(rng.integers(0, 2**63))))
                run = {
                    "run_id": run_id,
                    "cluster": "synthetic",
                    "benchmark": bench,
                    "implementation": "builtin",
                    "pattern": bench.removeprefix("osu_"),
                    "msg_size_bytes": size,
                    "iterations": iterations,
                    "warmup": 10,
                    "locality": locality,
                    "b_before": b_before,
                    "b_after": b_after,
                    "b_accepted": abs(b_after - b_before) < 0.05,
                    "threshold": 0.05,
                    "ranks": 16,
                    "started_at": t,
                    "ended_at": t + timedelta(seconds=5),
                }
                run_noise = float(rng.lognormal(0.0, 0.2))  # what b does not explain
                lat = _latencies(rng, base * run_noise, (b_before + b_after) / 2, iterations)
                results.write("runs", [run], name=run_id)
                results.write(
                    "samples",
                    {
                        "run_id": [run_id] * iterations,
                        "iteration": np.arange(iterations, dtype=np.int32),
                        "latency_us": lat,
                        "latency_us_mean": lat * 0.8,
                    },
                    name=run_id,
                )
                results.write(
                    "osu_results",
                    [
                        {
                            "run_id": run_id,
                            "size_bytes": size,
                            "avg_latency_us": float(lat.mean()),
                            "min_latency_us": float(lat.min()),
                            "max_latency_us": float(lat.max()),
                            "p50_latency_us": float(np.percentile(lat, 50)),
                            "p90_latency_us": float(np.percentile(lat, 90)),
                            "p99_latency_us": float(np.percentile(lat, 99)),
                            "iterations": iterations,
                        }
                    ],
                    name=run_id,
                )
                results.write(
                    "utilisation",
                    [
                        {
                            "snapshot_id": run_id,
                            "taken_at": t,
                            "n_t": 16,
                            "n_c": int(b_before * 16),
                            "b": b_before,
                            "b_simple": b_before,
                        }
                    ],
                    name=run_id,
                )
                runs.append({**run, "latency": lat})
                t += timedelta(minutes=37)
    return runs


def write_replay(results: ResultsDir, seed: int = 3, n: int = 500) -> str:
    """One replay with per-iteration latencies; returns its id."""
    rng = np.random.default_rng(seed)
    replay_id = "replay-" + uuid.UUID(int=seed).hex[:8]
    results.write(
        "replays",
        [
            {
                "replay_id": replay_id,
                "trace_id": "synthetic-reduce",
                "fabric": "dragonfly_plus",
                "seed": seed,
                "background_b": 0.4,
                "created_at": START,
            }
        ],
        name=replay_id,
    )
    lat = 3.0 * rng.lognormal(0.0, 0.3, n)
    results.write(
        "replay_iterations",
        {
            "replay_id": [replay_id] * n,
            "iteration": np.arange(n, dtype=np.int32),
            "latency_us": lat,
        },
        name=replay_id,
    )
    return replay_id
