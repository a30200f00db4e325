"""Streaming replay of a 100 M-action trace on `loggp` (the bundled `ideal` α-β fabric).

The synthetic halo + allreduce trace (bench/halo_trace.py, 64 ranks) is generated straight
to Parquet in bounded batches, then replayed by `tailcast.replay.stream.stream_replay` in a
child process (CPU seconds from wait4, peak RSS from GNU time: see child_usage.py) without
per-op output (`keep_ops=False`); a 10 M-action run also streams the per-op times to Parquet.

Run alone: .venv/bin/python bench/stream_bench.py [ACTIONS]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from child_usage import run_measured
from halo_trace import PER_ITERATION, write_halo_trace

RANKS = 64
FABRIC = "ideal"
# Rows per Parquet row group of the generated trace: each rank reads its own part of the
# file, so the readers hold about RANKS decoded row groups at a time.
ROW_GROUP = 1 << 16


def child(trace: Path, ops: str) -> dict[str, Any]:
    """In the child: stream-replay the trace; per-op times to `ops` unless it is '-'."""
    from tailcast.replay.fabric import load_fabric
    from tailcast.replay.run import ReplayOptions
    from tailcast.replay.stream import stream_replay

    keep = ops != "-"
    outcome = stream_replay(
        trace,
        load_fabric(FABRIC),
        ReplayOptions(compute_scale=0.0),
        ops_path=Path(ops) if keep else None,
        keep_ops=keep,
    )
    return {
        "actions": outcome.stats["actions"],
        "messages": outcome.stats["messages"],
        "replay_cpu_s": outcome.cpu_s,
        "simulated_total_us": outcome.total_time_ns / 1000,
        "iterations": len(outcome.iterations),
    }


def measure(trace: Path, ops: Path | None) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", str(trace), str(ops) if ops else "-"]
    text, cpu, rss_mib, exact = run_measured(argv, trace.parent)
    result: dict[str, Any] = json.loads(text.strip().splitlines()[-1])
    result["process_cpu_s"] = round(cpu, 3)
    result["replay_cpu_s"] = round(result["replay_cpu_s"], 3)
    result["actions_per_cpu_s"] = round(result["actions"] / result["replay_cpu_s"])
    result["actions_per_process_cpu_s"] = round(result["actions"] / cpu)
    result["peak_rss_mib"] = round(rss_mib, 1)
    result["peak_rss_exact"] = exact
    if ops is not None:
        result["ops_file_mib"] = round(ops.stat().st_size / 2**20, 1)
    return result


def one(tmp: Path, actions: int, with_ops: bool) -> dict[str, Any]:
    iterations = max(1, actions // (RANKS * PER_ITERATION))
    trace = tmp / f"halo-{actions}.parquet"
    t0 = time.process_time()
    rows = write_halo_trace(trace, RANKS, iterations, halo_bytes=4096, row_group_rows=ROW_GROUP)
    generated = time.process_time() - t0
    row = {
        "ranks": RANKS,
        "iterations": iterations,
        "rows": rows,
        "trace_file_mib": round(trace.stat().st_size / 2**20, 1),
        "generate_cpu_s": round(generated, 1),
        **measure(trace, tmp / "ops.parquet" if with_ops else None),
    }
    trace.unlink()
    return row


def run(actions: int = 100_000_000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tailcast-stream-bench-") as tmp:
        big = one(Path(tmp), actions, with_ops=False)
        print(json.dumps(big), file=sys.stderr, flush=True)
        with_ops = one(Path(tmp), max(1, actions // 10), with_ops=True)
    return {
        "fabric": FABRIC,
        "trace": "synthetic halo (4 KiB) + 8-byte allreduce, written in bounded batches",
        "no_ops": big,
        "with_ops_streamed_to_parquet": with_ops,
        "target": "100 M actions in < 4 GB peak RSS",
        "notes": (
            "replay_cpu_s: stream_replay (scan, Parquet decode, conversion, engine, op "
            "output) in the child; process_cpu_s adds Python start-up. Peak RSS is the "
            "child's (GNU time). Memory is bounded by ranks x (a Parquet batch reader + the "
            "engine's buffered chunks), not by the trace length."
        ),
    }


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]), sys.argv[3])))
    else:
        print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000), indent=2))
