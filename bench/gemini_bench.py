"""Seed 003's simulations on the `banyan_circuit` model: Poisson message arrivals at a
normalised offered load (Eq. 8) for the 4×4 to 32×32 Gemini networks, basic and VOQ
protocols, constant and exponential lengths (§4.3, §5; Figs. 14–16 and 18–20). Records per
point the mean optical message delay, control signal delay, blocking rate and throughput
normalised to Eq. 8, and the load where each network saturates. Measured as a whole child
process: CPU seconds and peak RSS. Writes bench/results/gemini.json.

`make bench` calls `run()`. Alone:
    .venv/bin/python bench/gemini_bench.py [--messages 100] [--store DIR]
runs the sweep in this process with a progress bar; `--store` keeps every replay in a
results directory (for `tailcast report`'s seed 003 section).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from itertools import product
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from child_usage import run_measured  # noqa: E402
from photonic_bench import progress  # noqa: E402

from tailcast.replay.photonic_setups import (  # noqa: E402
    PROTOCOLS,
    GeminiPoint,
    gemini_link,
    seed003_options,
    seed003_poisson_trace,
)
from tailcast.replay.run import replay_trace  # noqa: E402
from tailcast.store import ResultsDir  # noqa: E402
from tailcast.traces.io import TraceMeta, write_trace  # noqa: E402

PORTS = (4, 8, 16, 32)
LENGTHS = ("constant", "exponential")
LOADS = tuple(round(0.1 * i, 1) for i in range(1, 11))
MEAN_BYTES = 1 << 20  # Γ = 16384 with 64-byte signals (§4.3)
STATS = (
    "optical_delay_mean_ns",
    "control_delay_mean_ns",
    "control_delay_min_ns",
    "blocking_rate_per_s",
    "throughput_normalised",
)


def sweep(messages: int, store: Path | None) -> dict[str, Any]:
    """Every (protocol, ports, lengths, load) point, one replay each (seed 1)."""
    results = ResultsDir(store) if store else None
    grid = list(product(PROTOCOLS, PORTS, LENGTHS, LOADS))
    points: dict[str, Any] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for done, (protocol, ports, lengths, load) in enumerate(grid, start=1):
            fabric = GeminiPoint(ports, protocol).fabric()
            table = seed003_poisson_trace(ports, gemini_link(fabric), load=load,
                                          messages=messages, mean_bytes=MEAN_BYTES,
                                          lengths=lengths, seed=1)  # fmt: skip
            meta = TraceMeta(ranks=ports, application="seed003-poisson",
                             source_format="synthetic", clock="synthetic: Poisson arrivals",
                             extra={"seed": "1", "load": str(load), "lengths": lengths,
                                    "mean_bytes": str(MEAN_BYTES)})  # fmt: skip
            trace = write_trace(table, Path(tmp) / "p.parquet", meta)
            stats = replay_trace(trace, fabric, seed003_options(1), results).fabric_stats
            key = f"{protocol}/{ports}/{lengths}/{load}"
            points[key] = {s: round(float(stats[s]), 4) for s in STATS}
            progress(done, len(grid), started)
    return {"replays": len(grid), "messages_per_rank": messages, "points": points}


def saturation(points: dict[str, Any]) -> dict[str, float]:
    """Per (protocol, ports, lengths): the highest offered load whose measured throughput is
    still within 10 % of it (the knee of Figs. 14 / 18). Throughput is over the whole run,
    draining included: past the knee the backlog left at the horizon drains with fewer
    non-empty VOQs, so VOQ's figure grows with the run (N = 16, load 1.5: 0.72 with 100
    messages per rank, 0.84 with 400; basic stays at 0.38–0.41)."""
    out: dict[str, float] = {}
    for protocol, ports, lengths in product(PROTOCOLS, PORTS, LENGTHS):
        carried = [
            load
            for load in LOADS
            if points[f"{protocol}/{ports}/{lengths}/{load}"]["throughput_normalised"] >= 0.9 * load
        ]
        out[f"{protocol}/{ports}/{lengths}"] = max(carried, default=0.0)
    return out


def run(messages: int = 100) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        argv = [sys.executable, str(Path(__file__)), "--messages", str(messages),
                "--summary", str(summary)]  # fmt: skip
        wall0 = time.perf_counter()
        _, cpu_s, rss_mib, exact = run_measured(argv, HERE.parent)
        wall = time.perf_counter() - wall0
        doc = json.loads(summary.read_text())
    return {
        "sweep": "2 protocols x N = 4..32 x 2 length distributions x 10 loads, Poisson",
        "replays": doc["replays"],
        "messages_per_rank": messages,
        "cpu_s": round(cpu_s, 2),
        "wall_s": round(wall, 2),
        "cpu_ms_per_replay": round(1000 * cpu_s / doc["replays"], 2),
        "peak_rss_mib": round(rss_mib, 1),
        "peak_rss_exact": exact,
        "saturation_load": saturation(doc["points"]),
        "points": doc["points"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100, help="Poisson messages per rank")
    ap.add_argument("--store", type=Path, help="keep every replay in this results directory")
    ap.add_argument("--summary", type=Path, help="write the summary JSON here (else stdout)")
    args = ap.parse_args()
    doc = sweep(args.messages, args.store)
    text = json.dumps(doc, indent=1)
    if args.summary:
        args.summary.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
