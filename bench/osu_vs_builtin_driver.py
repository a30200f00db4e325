"""Runs inside one Slurm allocation (launched by osu_vs_builtin_bench.py): for each
(benchmark, size), rounds of the built-in mpi4py benchmark, the OSU binary under the tracer's
timing mode, and the plain OSU binary, interleaved so that both implementations see the same
machine state. Writes every run's per-iteration times (µs, iterations × ranks) as JSON.

    python bench/osu_vs_builtin_driver.py --osu-dir DIR --out FILE [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tailcast.agent.osu_runner import run_osu_benchmark
from tailcast.agent.runners import run_builtin
from tailcast.collectors.launcher import detect_launcher
from tailcast.collectors.osu_run import OsuRequest, find_osu_binary, osu_version, run_osu

BENCHMARKS = ("bcast", "reduce", "allreduce", "alltoall")
SIZES = (4, 1024, 32 * 1024, 1024 * 1024)
RANKS = 4


def _plan(size: int) -> tuple[int, int]:
    """(iterations, warm-up): OSU's own defaults shrink above 8 KiB; these keep each run
    a few seconds on a 2-core machine running 4 ranks."""
    return (500, 50) if size <= 32 * 1024 else (50, 5)


def _save(runs: list[dict[str, Any]], out: Path) -> None:
    """Rewrites the results after each (benchmark, size): a job cut short keeps them."""
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(runs))
    tmp.replace(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--osu-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    launcher = detect_launcher("mpirun")
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(dir=args.out.parent) as work:
        for name in BENCHMARKS:
            binary = find_osu_binary(name, args.osu_dir)
            version = osu_version(binary)
            for size in SIZES:
                iterations, warmup = _plan(size)
                for round_ in range(args.rounds):
                    builtin = run_builtin(
                        launcher, RANKS, name, size, iterations, warmup, 0.0, 600, True
                    )
                    osu = run_osu_benchmark(
                        launcher, RANKS, name, size, iterations, warmup, 600, Path(work),
                        args.osu_dir,
                    )  # fmt: skip
                    plain, _ = run_osu(
                        launcher, RANKS, binary, version,
                        OsuRequest(name, size, iterations, warmup), 600,
                    )  # fmt: skip
                    runs.append(
                        {
                            "benchmark": name,
                            "size_bytes": size,
                            "round": round_,
                            "iterations": iterations,
                            "builtin_us": [s["rank_latency_us"] for s in builtin.samples],
                            "osu_us": [s["rank_latency_us"] for s in osu.samples],
                            "osu_summary_traced": osu.osu_results[0],
                            "osu_avg_untraced_us": plain.rows[0].avg_latency_us,
                            "mpi_library": builtin.mpi_library,
                        }
                    )
                    print(f"{name} {size} round {round_} done", file=sys.stderr, flush=True)
                _save(runs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
