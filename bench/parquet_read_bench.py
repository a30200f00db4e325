"""Whole commands that read or write trace Parquet (issue 38), CPU (wait4: user + sys of
the process tree) and wall seconds of each:

- `replay run --no-store BIG --fabric dfp-test`: BIG = `trace synth osu -n 64
  --iterations 2000 --sizes 4,1K,32K` (768,320 rows, streamed rank by rank);
- `replay run --no-store TIT --fabric crossbar`, streamed and `--in-memory`: TIT = the TiT
  halo trace of issue #16 (bench/tit_trace.py, 1,109,088 rows, peers, tags, times and
  request lists) converted by tailcast;
- `trace convert` of that TiT trace (tailcast's own Parquet writer) and of an OTF2
  archive written by the `otf2` wheel (16 ranks x 3,000 rounds, bench/trace_fuzz.py's
  shape: 352,064 calls; pyarrow's writer);
- the big OSU trace re-written by pyarrow with gzip and lz4 (codecs the hand-written
  reader refused) and replayed: what reading them costs beside zstd.

With TAILCAST_BENCH_BASELINE=SRC (a `src` directory holding another build's `tailcast`
package and its `_core`), every command also runs with that build, alternating with this
one command by command, ROUNDS times: the ratio of the medians (this / baseline) of CPU and
of wall is what to read (the shared 2-core VM moves single runs by tens of per cent).
Run alone: .venv/bin/python bench/parquet_read_bench.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from child_usage import run_measured
from tit_trace import write_tit_trace
from trace_fuzz import write_otf2_seed

THIS = str(Path(__file__).resolve().parents[1] / "src")
ROUNDS = 5


def measure(src: str, args: list[str], work: Path) -> tuple[float, float]:
    """(CPU s, wall s) of `tailcast ARGS` run from the package at `src`."""
    env = {"PYTHONPATH": src, "TAILCAST_HOME": str(work / "home")}
    started = time.perf_counter()
    run = run_measured([sys.executable, "-m", "tailcast", *args], work, env)
    return run.cpu_s, time.perf_counter() - started


def commands(work: Path) -> dict[str, list[str]]:
    """Name -> tailcast arguments; writes the inputs."""
    import pyarrow.parquet as pq

    big = work / "osu-64.parquet"
    synth = ["trace", "synth", "osu", "-n", "64", "--iterations", "2000"]
    measure(THIS, [*synth, "--sizes", "4,1K,32K", "-o", str(big)], work)
    table = pq.read_table(big)
    for codec in ("gzip", "lz4"):
        pq.write_table(table, work / f"osu-64-{codec}.parquet", compression=codec)
    index, _ = write_tit_trace(work / "tit")
    tit = work / "tit.parquet"
    measure(THIS, ["trace", "convert", str(index), str(tit)], work)
    otf2 = write_otf2_seed(work / "otf2", ranks=16, rounds=3000)
    replay = ["replay", "run", "--no-store"]
    return {
        "replay_osu64_dfp": [*replay, str(big), "--fabric", "dfp-test"],
        "replay_tit_streamed": [*replay, str(tit), "--fabric", "crossbar"],
        "replay_tit_in_memory": [*replay, str(tit), "--fabric", "crossbar", "--in-memory"],
        "convert_tit": ["trace", "convert", str(index), str(work / "tit-out.parquet")],
        "convert_otf2": ["trace", "convert", str(otf2), str(work / "otf2-out.parquet")],
        "replay_osu64_gzip": [*replay, str(work / "osu-64-gzip.parquet"), "--fabric", "dfp-test"],
        "replay_osu64_lz4": [*replay, str(work / "osu-64-lz4.parquet"), "--fabric", "dfp-test"],
    }


def summary(runs: list[tuple[float, float]]) -> dict[str, Any]:
    cpu = [c for c, _ in runs]
    wall = [w for _, w in runs]
    return {
        "cpu_s_median": round(statistics.median(cpu), 3),
        "wall_s_median": round(statistics.median(wall), 3),
        "cpu_s_runs": [round(c, 3) for c in cpu],
        "wall_s_runs": [round(w, 3) for w in wall],
    }


def run() -> dict[str, Any]:
    base = os.environ.get("TAILCAST_BENCH_BASELINE")
    builds = {"this": THIS, **({"baseline": base} if base else {})}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cmds = commands(work)
        runs: dict[str, dict[str, list[tuple[float, float]]]] = {b: {} for b in builds}
        refused: dict[str, dict[str, str]] = {b: {} for b in builds}
        for name, args in cmds.items():
            for b, src in builds.items():
                try:
                    measure(src, args, work)  # first run: bytecode cache, page cache
                except RuntimeError as exc:  # the baseline may refuse a codec
                    refused[b][name] = str(exc).strip().splitlines()[-1][-300:]
            for _ in range(ROUNDS):
                for b, src in builds.items():
                    if name not in refused[b]:
                        runs[b].setdefault(name, []).append(measure(src, args, work))
    out: dict[str, Any] = {"rounds": ROUNDS, "load_average": [round(x, 2) for x in os.getloadavg()]}
    for b in builds:
        out[b] = {name: summary(r) for name, r in runs[b].items()}
        out[b].update({name: {"refused": why} for name, why in refused[b].items()})
    if base:
        out["baseline_src"] = base
        ratios = {}
        for name, this in out["this"].items():
            old = out["baseline"].get(name, {})
            if "cpu_s_median" in old:
                ratios[name] = {
                    "cpu": round(this["cpu_s_median"] / old["cpu_s_median"], 3),
                    "wall": round(this["wall_s_median"] / old["wall_s_median"], 3),
                }
        out["median_ratio_this_to_baseline"] = ratios
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
