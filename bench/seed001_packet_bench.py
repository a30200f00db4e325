"""Seed 001 (Salimi Beni & Cosenza, Bench 2022, §5.3 / Fig. 5) on the bundled `marconi100` in
packet mode (issue 39): 16 ranks x 1000 iterations x 1 MiB OSU traces (bcast, reduce,
alltoall; Open MPI 4.1.4's default algorithms), nodes on different islands, progressive
adaptive routing, background sized from b = 0.2, 0.45, 0.7 (and 0 for reference).

- Hybrid (`[packet] background = "virtual"`): every 1000-iteration point is one whole
  `tailcast replay run` command measured as a child process (CPU user + sys by wait4);
  iteration latencies read back from its stored `replay_iterations`.
- Exact (`background = "explicit"`: every background packet simulated) at the few
  iterations it can afford (~2.5 CPU-s per iteration of a Reduce at b = 0.7).

Per point: mean, p50, p99, the dip test's p (Hartigan), the foreground's share of
non-minimal packets (fabric_stats), and CPU seconds. Alone: .venv/bin/python
bench/seed001_packet_bench.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import pyarrow.parquet as pq
from child_usage import run_measured

from tailcast.analysis.bimodality import dip_test
from tailcast.replay.fabric import bundled_fabrics
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

RANKS, ITERATIONS, BYTES = 16, 1000, 1 << 20
B_VALUES = (0.0, 0.2, 0.45, 0.7)
# Exact mode: iterations per collective it can afford (CPU grows with b: background packets).
EXACT_ITERATIONS = {"bcast": 5, "reduce": 5, "alltoall": 2}
GOAL_CPU_S = 10.0


def packet_fabric(background: str) -> str:
    """marconi100's TOML under packet contention with `background` as its [packet] mode."""
    text = bundled_fabrics()["marconi100"]
    head, sep, tables = text.partition("\n[")
    text = f'{head}\ncontention = "packet"\n{sep}{tables}'
    return text.replace("\n[packet]\n", f'\n[packet]\nbackground = "{background}"\n')


def point(tailcast: str, trace: Path, fabric: Path, b: float, home: Path) -> dict[str, Any]:
    argv = [tailcast, "replay", "run", str(trace), "--fabric", str(fabric)]
    argv += ["--background-b", str(b), "--placement", "different_islands", "--seed", "3"]
    argv += ["--json"]
    measured = run_measured(argv, home, env={"TAILCAST_HOME": str(home)})
    out = measured.stdout
    summary = json.loads(out[out.index("{") :])
    rid = summary["replay_id"]
    lat = pq.read_table(home / "replay_iterations" / f"{rid}.parquet").column("latency_us")
    x = np.asarray(lat.to_numpy(), dtype=float)
    fs = summary["fabric_stats"]
    minimal, detour = fs.get("packets_minimal", 0.0), fs.get("packets_non_minimal", 0.0)
    row = {
        "b": b,
        "iterations": len(x),
        "cpu_s": round(measured.cpu_s, 2),
        "mean_us": round(float(x.mean()), 1),
        "p50_us": round(float(np.median(x)), 1),
        "p99_us": round(float(np.percentile(x, 99)), 1),
        "non_minimal_packet_share": round(detour / max(minimal + detour, 1.0), 4),
        "credit_stalls": fs.get("credit_stalls", 0.0),
        "background_delivered_load": round(fs.get("background_delivered_load", 0.0), 3),
    }
    if len(x) >= 20:
        row["dip_p"] = round(float(dip_test(x)[1]), 4)
    return row


def ratio(rows: list[dict[str, Any]], key: str) -> float:
    by_b = {r["b"]: r[key] for r in rows}
    return round(by_b[0.7] / by_b[0.2], 3)


def run() -> dict[str, Any]:
    tailcast = str(Path(sys.executable).with_name("tailcast"))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tailcast-seed001-packet-") as tmp:
        work = Path(tmp)
        fabrics = {}
        for mode in ("virtual", "explicit"):
            fabrics[mode] = work / f"marconi100-{mode}.toml"
            fabrics[mode].write_text(packet_fabric(mode))
        for mode, label in (("virtual", "hybrid"), ("explicit", "exact")):
            for collective in ("bcast", "reduce", "alltoall"):
                n = ITERATIONS if mode == "virtual" else EXACT_ITERATIONS[collective]
                table, meta = osu_trace(collective, RANKS, [BYTES], n)
                trace = write_trace(table, work / f"{collective}-{n}.parquet", meta)
                rows = []
                for b in B_VALUES:
                    home = work / f"home-{label}-{collective}-{b}"
                    home.mkdir()
                    row = point(tailcast, trace, fabrics[mode], b, home)
                    print(json.dumps({"mode": label, "collective": collective, **row}),
                          file=sys.stderr, flush=True)  # fmt: skip
                    rows.append(row)
                results[f"{label}_{collective}"] = {
                    "points": rows,
                    "mean_ratio_b07_b02": ratio(rows, "mean_us"),
                    "p99_ratio_b07_b02": ratio(rows, "p99_us"),
                }
    return {
        "trace": f"OSU pattern, {RANKS} ranks, {BYTES} B; hybrid {ITERATIONS} iterations, "
        f"exact {EXACT_ITERATIONS} iterations",
        "fabric": "marconi100 under contention = packet (its [packet] table), adaptive "
        "routing, placement different_islands, seed 3",
        "goal_cpu_s_per_hybrid_point": GOAL_CPU_S,
        "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        **results,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
