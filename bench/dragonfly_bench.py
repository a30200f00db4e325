"""Seed 001's set-up replayed on the bundled `marconi100` Dragonfly+ under background jobs
sized from b: a 16-rank, 1000-iteration, 1 MiB OSU trace (bcast, reduce, alltoall), nodes
on different islands, adaptive routing, b = 0.45 and 0.7. Each point is one whole
`tailcast replay run ... --no-store --json` command measured as a child process (CPU
seconds user + sys by wait4, peak RSS by GNU time); issue 12's goal is < 10 s CPU.

Alone: .venv/bin/python bench/dragonfly_bench.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from child_usage import run_measured

from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

RANKS, ITERATIONS, BYTES = 16, 1000, 1 << 20
GOAL_CPU_S = 10.0


def run() -> dict[str, Any]:
    tailcast = str(Path(sys.executable).with_name("tailcast"))
    points = []
    with tempfile.TemporaryDirectory(prefix="tailcast-dragonfly-bench-") as tmp:
        work = Path(tmp)
        for collective in ("bcast", "reduce", "alltoall"):
            table, meta = osu_trace(collective, RANKS, [BYTES], ITERATIONS)
            trace = write_trace(table, work / f"{collective}.parquet", meta)
            for b in (0.45, 0.7):
                argv = [tailcast, "replay", "run", str(trace), "--fabric", "marconi100"]
                argv += ["--background-b", str(b), "--placement", "different_islands"]
                argv += ["--seed", "3", "--no-store", "--json"]
                measured = run_measured(argv, work)
                out, cpu, rss = measured.stdout, measured.cpu_s, measured.peak_rss_mib
                summary = json.loads(out[out.index("{") :])
                row = {
                    "collective": collective,
                    "b": b,
                    "cpu_s": round(cpu, 3),
                    "peak_rss_mib": round(rss, 1),
                    "peak_rss_exact": measured.rss_exact,
                    "background_messages": summary["background_messages"],
                    "under_goal": cpu < GOAL_CPU_S,
                }
                print(json.dumps(row), file=sys.stderr, flush=True)
                points.append(row)
    return {
        "trace": f"OSU pattern, {RANKS} ranks, {ITERATIONS} iterations, {BYTES} B",
        "fabric": "marconi100 (adaptive), placement different_islands, seed 3",
        "goal_cpu_s": GOAL_CPU_S,
        "points": points,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
