"""`tailcast quickstart`: one command that exercises the whole pipeline on bundled data and
tells the user where the results are. Each step is a function so the demo stays legible."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

from tailcast import _core
from tailcast.store import Catalog, ResultsDir


@dataclass
class QuickstartResult:
    results_dir: Path
    steps: list[tuple[str, float, str]] = field(default_factory=list)  # name, seconds, summary


def _ring_trace(ranks: int, rounds: int, gap_ns: int) -> pa.Table:
    """A halo-style ring: every round each rank sendrecvs with its neighbours, then
    computes for `gap_ns`; timestamps advance as a real capture's would."""
    rows: dict[str, list[int | str]] = {
        k: []
        for k in (
            "rank",
            "seq",
            "op",
            "peer",
            "send_bytes",
            "recv_bytes",
            "t_start_ns",
            "t_end_ns",
            "iteration",
        )
    }
    for r in range(ranks):
        t = 0
        for it in range(rounds):
            for seq_off, peer in enumerate(((r + 1) % ranks, (r - 1) % ranks)):
                rows["rank"].append(r)
                rows["seq"].append(2 * it + seq_off)
                rows["op"].append("sendrecv")
                rows["peer"].append(peer)
                rows["send_bytes"].append(4096)
                rows["recv_bytes"].append(4096)
                rows["t_start_ns"].append(t)
                t += 5_000
                rows["t_end_ns"].append(t)
                rows["iteration"].append(it)
            t += gap_ns
    return pa.table(rows)


def step_local_replay(results: ResultsDir) -> str:
    trace = _ring_trace(ranks=8, rounds=50, gap_ns=20_000)
    trace_id = f"quickstart-ring-{uuid.uuid4().hex[:8]}"
    results.write("traces", trace, name=trace_id, metadata={"application": "quickstart ring"})
    ends = _core.replay_local(
        np.asarray(trace.column("rank"), dtype=np.uint32),
        np.asarray(trace.column("t_start_ns"), dtype=np.int64),
        np.asarray(trace.column("t_end_ns"), dtype=np.int64),
        0.5,
    )
    replay_id = uuid.uuid4().hex
    durations = np.asarray(trace.column("t_end_ns")) - np.asarray(trace.column("t_start_ns"))
    results.write(
        "replays",
        [
            {
                "replay_id": replay_id,
                "trace_id": trace_id,
                "fabric": "none (local timeline)",
                "seed": 0,
                "engine_version": _core.engine_version(),
                "total_time_ns": int(ends.max()),
                "created_at": datetime.now(UTC),
            }
        ],
    )
    results.write(
        "replay_ops",
        {
            "replay_id": [replay_id] * len(ends),
            "rank": trace.column("rank"),
            "seq": trace.column("seq"),
            "op": trace.column("op"),
            "sim_start_ns": ends - durations,
            "sim_end_ns": ends,
        },
    )
    return f"replayed {trace.num_rows} calls of {trace_id}: {ends.max() / 1e6:.3f} ms simulated"


def step_query(results: ResultsDir) -> str:
    with Catalog(results) as cat:
        rows = cat.rows(
            "SELECT count(DISTINCT replay_id) AS replays, count(*) AS ops FROM replay_ops"
        )
    return f"store holds {rows[0]['replays']} replays with {rows[0]['ops']} operations"


STEPS: list[tuple[str, Callable[[ResultsDir], str]]] = [
    ("replay a bundled halo trace through the engine", step_local_replay),
    ("query the store with DuckDB", step_query),
]


def run_quickstart(
    results: ResultsDir | None = None, progress: Callable[[str], None] = print
) -> QuickstartResult:
    results = results or ResultsDir()
    out = QuickstartResult(results.root)
    for name, step in STEPS:
        started = time.perf_counter()
        summary = step(results)
        seconds = time.perf_counter() - started
        out.steps.append((name, seconds, summary))
        progress(f"[{seconds:6.2f} s] {name}: {summary}")
    return out
