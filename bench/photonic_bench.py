"""Seed 000's sweep on the `benes_psf` model: the nine workloads × 7 arbitration policies ×
3 routings × 2 switchings × SEEDS seeds at 16 ports (3,780 replays with 10 seeds), replayed
through `replay_trace` in a loop (the generic `tailcast replay sweep` of issue 23 is not on
main yet). Measured as a whole child process: CPU seconds and peak RSS. Also records each
point's communication time and energy per bit normalised to the best policy (Figs. 5, 6,
10, 11 of seed 000). Writes bench/results/photonic.json.

`make bench` calls `run()`. Alone:
    .venv/bin/python bench/photonic_bench.py [--seeds 10] [--store DIR]
runs the sweep in this process with a progress bar; `--store` keeps every replay in a
results directory (for `tailcast report`'s photonic section).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from itertools import product
from pathlib import Path
from statistics import mean
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from child_usage import run_measured  # noqa: E402

from tailcast.replay.photonic_setups import (  # noqa: E402
    IRREGULAR,
    POLICIES,
    REGULAR,
    ROUTINGS,
    SWITCHINGS,
    PsfPoint,
    seed000_options,
)
from tailcast.replay.run import replay_trace  # noqa: E402
from tailcast.store import ResultsDir  # noqa: E402
from tailcast.traces.io import TraceMeta, write_trace  # noqa: E402
from tailcast.traces.synth import WorkloadParams, workload_trace  # noqa: E402

WORKLOADS = REGULAR + IRREGULAR


def progress(done: int, total: int, started: float) -> None:
    frac = done / total
    eta = (time.perf_counter() - started) * (1 - frac) / frac if done else 0.0
    bar = "#" * int(30 * frac)
    sys.stderr.write(f"\r[{bar:<30}] {done}/{total} replays, eta {eta:5.0f} s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def sweep(seeds: int, store: Path | None) -> dict[str, Any]:
    """Runs every point; returns per (switching, routing, workload) the mean communication
    time and energy per bit of each policy, normalised to the best policy."""
    results = ResultsDir(store) if store else None
    fabrics = {
        (s, r, p): PsfPoint(16, p, r, s).fabric()
        for s, r, p in product(SWITCHINGS, ROUTINGS, POLICIES)
    }
    total = len(WORKLOADS) * seeds * len(fabrics)
    rows: dict[tuple[str, str, str, str], list[tuple[float, float]]] = defaultdict(list)
    started, done = time.perf_counter(), 0
    with tempfile.TemporaryDirectory() as tmp:
        for w, seed in product(WORKLOADS, range(seeds)):
            trace = Path(tmp) / f"{w}-{seed}.parquet"
            meta = TraceMeta(ranks=16, application=f"seed000-{w}", source_format="synthetic",
                             extra={"seed": str(seed)})  # fmt: skip
            write_trace(workload_trace(w, WorkloadParams(16, seed=seed)), trace, meta)
            for (s, r, p), fabric in fabrics.items():
                o = replay_trace(trace, fabric, seed000_options(seed), results)
                rows[(s, r, w, p)].append(
                    (o.total_time_ns, o.fabric_stats["mzi_energy_pj_per_bit"])
                )
                done += 1
                progress(done, total, started)
    points: dict[str, Any] = {}
    for s, r, w in product(SWITCHINGS, ROUTINGS, WORKLOADS):
        t = {p: mean(x[0] for x in rows[(s, r, w, p)]) for p in POLICIES}
        e = {p: mean(x[1] for x in rows[(s, r, w, p)]) for p in POLICIES}
        points[f"{s}/{r}/{w}"] = {
            "time_normalised": {p: round(v / min(t.values()), 4) for p, v in t.items()},
            "energy_normalised": {p: round(v / min(e.values()), 4) for p, v in e.items()},
            "best_time": min(t, key=t.__getitem__),
            "mzi_energy_pj_per_bit_best": round(min(e.values()), 4),
        }
    return {"replays": total, "seeds": seeds, "points": points}


def run(seeds: int = 10) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        argv = [
            sys.executable,
            str(Path(__file__)),
            "--seeds",
            str(seeds),
            "--summary",
            str(summary),
        ]
        wall0 = time.perf_counter()
        _, cpu_s, rss_mib, exact = run_measured(argv, HERE.parent)
        wall = time.perf_counter() - wall0
        doc = json.loads(summary.read_text())
    return {
        "sweep": "9 workloads x 7 policies x 3 routings x 2 switchings, 16 ports",
        "replays": doc["replays"],
        "seeds": seeds,
        "cpu_s": round(cpu_s, 2),
        "wall_s": round(wall, 2),
        "cpu_ms_per_replay": round(1000 * cpu_s / doc["replays"], 2),
        "peak_rss_mib": round(rss_mib, 1),
        "peak_rss_exact": exact,
        "points": doc["points"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--store", type=Path, help="keep every replay in this results directory")
    ap.add_argument("--summary", type=Path, help="write the summary JSON here (else stdout)")
    args = ap.parse_args()
    doc = sweep(args.seeds, args.store)
    text = json.dumps(doc, indent=1)
    if args.summary:
        args.summary.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
