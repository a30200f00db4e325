"""Replay-engine throughput: actions per CPU-second on `ideal` (α-β) and flow fabrics for
synthetic halo + allreduce traces (1-D halo: 2 irecv, 2 isend, waitall, then an 8-byte
allreduce; ~1.6 M actions per trace), plus peak RSS. Writes bench/results/replay.json.

`make bench` calls `run()`; alone: .venv/bin/python bench/replay_bench.py [--actions N]

A/B of engine builds (`--ab NAME=SRC ...`, SRC a `src` directory holding a `tailcast`
package with its built `_core`, e.g. an older commit's tree): every configuration is
replayed by each build in turn, in child processes interleaved round by round, so that the
builds share the machine's load; writes bench/results/replay_ab.json with each build's best
CPU time, its ratio to the first build, and whether the simulated times agree bit for bit.
On a shared VM CPU times of builds a few per cent apart swing by ±10 % from run to run;
`--ab ... --instructions` counts instead, with callgrind, the instructions each build
executes inside `_core.replay` (deterministic) and writes bench/results/replay_ab_instructions.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from tailcast import _core
from tailcast.replay.fabric import load_fabric

PER_ITERATION = 6  # rows per rank per iteration


def halo_allreduce(ranks: int, iterations: int, halo_bytes: int) -> dict[str, Any]:
    """Engine columns of the synthetic trace, rows grouped by rank in seq order."""
    codes = _core.op_codes()
    n = ranks * iterations * PER_ITERATION
    rank = np.repeat(np.arange(ranks, dtype=np.uint32), iterations * PER_ITERATION)
    slot = np.tile(np.arange(PER_ITERATION), ranks * iterations)
    it = np.tile(np.repeat(np.arange(iterations), PER_ITERATION), ranks)
    left = ((rank.astype(np.int64) - 1) % ranks).astype(np.int32)
    right = ((rank.astype(np.int64) + 1) % ranks).astype(np.int32)
    op_of_slot = np.array(
        [codes[o] for o in ("irecv", "irecv", "isend", "isend", "waitall", "allreduce")],
        dtype=np.uint8,
    )
    peer = np.full(n, -2, dtype=np.int32)
    peer[slot == 0], peer[slot == 2] = left[slot == 0], left[slot == 2]
    peer[slot == 1], peer[slot == 3] = right[slot == 1], right[slot == 3]
    nbytes = np.where(slot < 4, halo_bytes, np.where(slot == 5, 8, 0)).astype(np.int64)
    request = np.where(slot < 4, slot, -1).astype(np.int64)
    zeros32, zeros64 = np.zeros(n, np.int32), np.zeros(n, np.int64)
    same = np.full(n, np.iinfo(np.int32).min, dtype=np.int32)
    return {
        "rank": rank,
        "seq": np.tile(np.arange(iterations * PER_ITERATION, dtype=np.int64), ranks),
        "op": op_of_slot[slot],
        "peer": peer,
        "root": np.full(n, -1, np.int32),
        "send_bytes": nbytes,
        "recv_bytes": nbytes,
        "tag": zeros32,
        "comm": zeros32,
        "request": request,
        "t_start_ns": zeros64,
        "t_end_ns": zeros64,
        "iteration": it.astype(np.int32),
        "recv_peer": same,
        "recv_tag": same,
    }


WORKER_REPEATS = 3


def measure(trace: dict[str, Any], fabric: str, repeats: int = WORKER_REPEATS) -> dict[str, Any]:
    """Best of `repeats` replays (this VM's neighbours add up to 15 % to a single run)."""
    loaded = load_fabric(fabric)
    # Builds before the fabric framework (A/B against them) took `.engine` and returned a
    # (jobs, stats) tuple; builds before the scenario took the table and placements.
    table = getattr(loaded, "table", None) or loaded.engine
    scenario = None
    if hasattr(_core, "Scenario"):
        scenario = _core.Scenario(loaded.spec, "linear", compute_scale=0.0)
    runs = []
    for _ in range(repeats):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if scenario is not None:
            result = _core.replay(scenario, [trace])
        else:
            result = _core.replay([trace], ["linear"], table, compute_scale=0.0)
        if isinstance(result, tuple):
            (job, *_), stats = result
        else:
            stats, job = result.stats, result.jobs[0]
        runs.append((time.process_time() - cpu0, time.perf_counter() - wall0))
    cpu, wall = min(runs)
    return {
        "fabric": fabric,
        "actions": stats["actions"],
        "messages": stats["messages"],
        "events": stats["events"],
        "cpu_s": round(cpu, 4),
        "cpu_s_runs": [round(c, 4) for c, _ in runs],
        "wall_s": round(wall, 4),
        "actions_per_cpu_s": round(stats["actions"] / cpu) if cpu > 0 else None,
        "simulated_total_us": job.total_time_ns / 1000.0,
    }


def run(actions: int = 1_600_000, halo_bytes: int = 16384) -> dict[str, Any]:
    runs = []
    for ranks in (16, 64, 256):
        iterations = max(1, actions // (ranks * PER_ITERATION))
        trace = halo_allreduce(ranks, iterations, halo_bytes)
        for fabric in ("ideal", "crossbar", "fat-tree-16", "torus-4x4x4"):
            row = {"ranks": ranks, "iterations": iterations, **measure(trace, fabric)}
            print(json.dumps(row), file=sys.stderr, flush=True)
            runs.append(row)
    loggp = [r["actions_per_cpu_s"] for r in runs if r["fabric"] == "ideal"]
    return {
        "engine_version": _core.engine_version(),
        "halo_bytes": halo_bytes,
        "runs": runs,
        "loggp_min_actions_per_cpu_s": min(loggp),
        "target_loggp_actions_per_cpu_s": 20_000_000,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "notes": (
            "cpu_s is the best of 3 runs (all in cpu_s_runs) of the engine call alone "
            "(_core.replay on in-memory columns, conversion of the results included); "
            "ideal = loggp in its alpha-beta form. peak_rss_mib is the whole bench process's "
            "(with make bench: shared with the benches run before)."
        ),
    }


AB_CONFIGS = [(r, f) for r in (16, 64, 256) for f in ("ideal", "crossbar")]


def _worker(ranks: int, fabric: str, actions: int, halo_bytes: int) -> dict[str, Any]:
    """One child of the A/B: best of 3 replays of one configuration with this build."""
    trace = halo_allreduce(ranks, max(1, actions // (ranks * PER_ITERATION)), halo_bytes)
    return measure(trace, fabric)


def ab(builds: dict[str, Path], actions: int, halo_bytes: int, rounds: int) -> dict[str, Any]:
    """Each configuration by every build, `rounds` times interleaved (see the docstring)."""
    rows = []
    for ranks, fabric in AB_CONFIGS:
        seen: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
        for _ in range(rounds):
            for name, src in builds.items():
                env = {**os.environ, "PYTHONPATH": str(src), "OPENBLAS_NUM_THREADS": "1"}
                argv = [sys.executable, __file__, "--worker", str(ranks), fabric]
                argv += ["--actions", str(actions), "--halo-bytes", str(halo_bytes)]
                out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
                seen[name].append(json.loads(out.stdout))
        best = {name: min(min(r["cpu_s_runs"]) for r in got) for name, got in seen.items()}
        first = next(iter(builds))
        row = {
            "ranks": ranks,
            "fabric": fabric,
            "actions": seen[first][0]["actions"],
            "events": {name: got[0]["events"] for name, got in seen.items()},
            "best_cpu_s": best,
            "actions_per_cpu_s": {n: round(seen[n][0]["actions"] / c) for n, c in best.items()},
            f"cpu_ratio_to_{first}": {n: round(c / best[first], 3) for n, c in best.items()},
            "simulated_total_us": {n: got[0]["simulated_total_us"] for n, got in seen.items()},
            "bit_identical": len({got[0]["simulated_total_us"] for got in seen.values()}) == 1,
        }
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return {
        "recorded_at": datetime.now(UTC).isoformat(),
        "load_average_at_start_end": None,
        "builds": {name: str(src) for name, src in builds.items()},
        "rounds": rounds,
        "rows": rows,
        "notes": (
            "best_cpu_s: the least CPU time of one _core.replay call over rounds x 3 replays "
            "per build, builds alternating round by round in child processes; ratios < 1 are "
            "faster than the first build."
        ),
    }


# `_core.replay`'s symbol: its function, or (newer pyo3) the trampoline pyo3 generates for it
_REPLAY_INCLUSIVE = re.compile(
    r"^\s*([\d,]+) \([^)]*\)\s+\S*:"
    r"(?:_core::replay|_core::<impl _core::replay::MakeDef>::_PYO3_DEF::trampoline) \[",
    re.MULTILINE,
)


def instructions(builds: dict[str, Path], actions: int, halo_bytes: int) -> dict[str, Any]:
    """Instructions inside `_core.replay` per replay, every configuration by every build
    (two callgrind children at a time: this is CPU-bound and the VM has two cores)."""
    from concurrent.futures import ThreadPoolExecutor

    def count(ranks: int, fabric: str, src: Path) -> int:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "callgrind.out"
            env = {**os.environ, "PYTHONPATH": str(src), "OPENBLAS_NUM_THREADS": "1"}
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            argv += [sys.executable, __file__, "--worker", str(ranks), fabric]
            argv += ["--actions", str(actions), "--halo-bytes", str(halo_bytes)]
            subprocess.run(argv, env=env, capture_output=True, check=True)
            text = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                                  capture_output=True, text=True, check=True).stdout  # fmt: skip
        found = _REPLAY_INCLUSIVE.search(text)
        if not found:
            raise RuntimeError(f"no _core::replay in the callgrind profile of {src}")
        return int(found.group(1).replace(",", "")) // WORKER_REPEATS

    jobs = [(r, f, n, src) for r, f in AB_CONFIGS for n, src in builds.items()]
    with ThreadPoolExecutor(2) as pool:
        counts = list(pool.map(lambda j: count(j[0], j[1], j[3]), jobs))
    first = next(iter(builds))
    rows = []
    for ranks, fabric in AB_CONFIGS:
        got = {
            n: c for (r, f, n, _), c in zip(jobs, counts, strict=True) if (r, f) == (ranks, fabric)
        }
        ratio = {n: round(c / got[first], 4) for n, c in got.items()}
        row = {"ranks": ranks, "fabric": fabric, "instructions_per_replay": got}
        rows.append({**row, f"ratio_to_{first}": ratio})
    return {
        "recorded_at": datetime.now(UTC).isoformat(),
        "builds": {name: str(src) for name, src in builds.items()},
        "actions": actions,
        "rows": rows,
        "notes": "instructions executed inside _core.replay (callgrind, inclusive) per replay "
        "of the halo + allreduce trace; independent of the machine's load.",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--actions", type=int, default=1_600_000, help="actions per trace")
    parser.add_argument("--halo-bytes", type=int, default=16384)
    parser.add_argument("--ab", nargs="+", metavar="NAME=SRC", help="A/B of engine builds")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds per configuration")
    parser.add_argument("--instructions", action="store_true",
                        help="A/B by callgrind instruction counts instead of CPU time")  # fmt: skip
    parser.add_argument("--worker", nargs=2, metavar=("RANKS", "FABRIC"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(
            json.dumps(_worker(int(args.worker[0]), args.worker[1], args.actions, args.halo_bytes))
        )
        return
    if args.ab:
        builds = {k: Path(v).resolve() for k, v in (b.split("=", 1) for b in args.ab)}
        if args.instructions:
            doc = instructions(builds, args.actions, args.halo_bytes)
            out = Path(__file__).resolve().parent / "results" / "replay_ab_instructions.json"
            out.write_text(json.dumps(doc, indent=2) + "\n")
            print(out)
            return
        load0 = os.getloadavg()
        doc = ab(builds, args.actions, args.halo_bytes, args.rounds)
        doc["load_average_at_start_end"] = [round(x, 2) for x in (*load0, *os.getloadavg())]
        out = Path(__file__).resolve().parent / "results" / "replay_ab.json"
        out.write_text(json.dumps(doc, indent=2) + "\n")
        print(out)
        return
    print(json.dumps(run(args.actions, args.halo_bytes), indent=2))


if __name__ == "__main__":
    main()
