"""Replaying a tailcast Parquet trace on a fabric and storing the results.

Writes one `replays` row, the per-operation simulated times (`replay_ops`) and, for traces
that mark iterations, per-iteration latencies (`replay_iterations`), each as its own atomic
Parquet file named by the replay id.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from tailcast import _core
from tailcast.errors import InputError, TailcastError, UsageError
from tailcast.replay.columns import EngineColumns, op_code_table
from tailcast.replay.fabric import Fabric
from tailcast.replay.summary import op_summary
from tailcast.traces.meta import read_meta

if TYPE_CHECKING:  # pyarrow loads only to build or store the per-op table
    import pyarrow as pa

    from tailcast.store.results import ResultsDir


class ReplayFailed(TailcastError):
    """The engine could not replay the trace (deadlock, unmatched messages, bad schedule)."""


@dataclass(frozen=True)
class ReplayOptions:
    seed: int = 0
    coll: str = ""
    placement: str = "linear"  # linear | random | a file with one endpoint per rank
    compute_scale: float = 1.0
    eager_threshold_bytes: int = 8192


@dataclass
class ReplayHead:
    """What the in-memory and the streaming outcomes both report."""

    replay_id: str
    trace: str
    fabric: str
    ranks: int
    total_time_ns: float
    stats: dict[str, int]
    iterations: NDArray[np.int32]
    iteration_latency_us: NDArray[np.float64]


@dataclass
class ReplayOutcome(ReplayHead):
    ops: pa.Table  # rank, seq, op, sim_start_ns, sim_end_ns
    op_stats: _core.OpStats = field(default_factory=_core.OpStats)
    unknown_ops: dict[str, int] = field(default_factory=dict)
    stored: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return summary_head(self) | {
            "ops": op_summary(self.op_stats),
            "unknown_ops": self.unknown_ops,
            "stored": self.stored,
        }


def summary_head(o: ReplayHead) -> dict[str, Any]:
    """The summary fields every replay has (`--json`, and the first lines printed)."""
    lat = o.iteration_latency_us
    return {
        "replay_id": o.replay_id,
        "trace": o.trace,
        "fabric": o.fabric,
        "ranks": o.ranks,
        "total_time_us": o.total_time_ns / 1000.0,
        "actions": o.stats.get("actions", 0),
        "messages": o.stats.get("messages", 0),
        "iterations": len(o.iterations),
        "iteration_p50_us": _pct(lat, 50),
        "iteration_p99_us": _pct(lat, 99),
    }


def _pct(values: NDArray[np.float64], q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def placement_spec(text: str, ranks: int, seed: int) -> str:
    """CLI placement → engine placement string (`linear`, `random:SEED`, `explicit:…`)."""
    if text == "linear":
        return "linear"
    if text == "random":
        return f"random:{seed}"
    path = Path(text)
    if not path.is_file():
        raise UsageError(f"--placement: expected linear, random or a file, got {text!r}")
    endpoints: list[int] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if not stripped:
            continue
        if not stripped.isdigit():
            raise InputError(path, f"expected an endpoint number, got {stripped!r}", line=number)
        endpoints.append(int(stripped))
    if len(endpoints) != ranks:
        raise InputError(path, f"lists {len(endpoints)} endpoints, the trace has {ranks} ranks")
    return "explicit:" + ",".join(map(str, endpoints))


def load_columns(trace: Path) -> EngineColumns:
    """The trace's engine columns, decoded natively (InputError: damaged Parquet, a
    negative rank, a column of an unusable type)."""
    trace = Path(trace)
    read_meta(trace)
    try:
        return EngineColumns.of_file(trace)
    except (OSError, ValueError) as exc:
        raise InputError(trace, str(exc)) from exc


def replay_trace(
    trace: Path, fabric: Fabric, options: ReplayOptions, results: ResultsDir | None = None
) -> ReplayOutcome:
    """Replays `trace` on `fabric`; stores the results in `results` when given."""
    trace = Path(trace)
    meta = read_meta(trace)
    columns = load_columns(trace)
    for cid, members in _meta_comms(trace, meta.extra.get("comms", "")).items():
        columns.comms.setdefault(cid, members)
    arrays = columns.arrays()
    ranks = int(arrays["rank"].max()) + 1 if columns.rows else 0
    placement = placement_spec(options.placement, ranks, options.seed)
    try:
        jobs, stats = _core.replay(
            [arrays],
            [placement],
            fabric.engine,
            seed=options.seed,
            eager_threshold_bytes=options.eager_threshold_bytes,
            compute_scale=options.compute_scale,
            coll=options.coll,
        )
    except ValueError as err:
        raise ReplayFailed(f"{trace}: {err}") from err
    import pyarrow as pa
    import pyarrow.compute as pc

    job = jobs[0]
    op_stats = _core.OpStats()
    op_stats.add(arrays["op"], job.sim_start_ns, job.sim_end_ns)
    names = {code: name for name, code in op_code_table().items()}
    op_names = pa.array([names.get(c, "other") for c in range(256)], pa.string())
    ops = pa.table(
        {
            "rank": pa.array(arrays["rank"].astype(np.int32)),
            "seq": pa.array(arrays["seq"]),
            "op": pc.take(op_names, pa.array(arrays["op"].astype(np.int32))),
            "sim_start_ns": pa.array(job.sim_start_ns),
            "sim_end_ns": pa.array(job.sim_end_ns),
        }
    )
    outcome = ReplayOutcome(
        replay_id=uuid.uuid4().hex,
        trace=str(trace),
        fabric=fabric.name,
        ranks=max(ranks, meta.ranks),
        total_time_ns=job.total_time_ns,
        stats=dict(stats),
        ops=ops,
        op_stats=op_stats,
        iterations=job.iterations,
        iteration_latency_us=job.iteration_latency_ns / 1000.0,
        unknown_ops=columns.unknown_ops,
    )
    if results is not None:
        _store(outcome, trace, fabric, options, results)
    return outcome


def _meta_comms(trace: Path, text: str) -> dict[int, list[int]]:
    """Communicator members an importer recorded in the file metadata (`tailcast.comms`)."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
        return {int(k): [int(m) for m in v] for k, v in raw.items()}
    except (ValueError, TypeError, AttributeError) as exc:
        message = f"metadata tailcast.comms is not a JSON object of lists ({exc})"
        raise InputError(trace, message) from exc


def trace_id(trace: Path) -> str:
    """A stable id of a trace file: sha256 of its bytes (first 16 hex digits)."""
    digest = hashlib.sha256()
    with trace.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def store_replay_summary(
    results: ResultsDir,
    replay_id: str,
    trace: Path,
    fabric: Fabric,
    options: ReplayOptions,
    total_time_ns: float,
    iterations: NDArray[np.int32],
    iteration_latency_us: NDArray[np.float64],
) -> list[str]:
    """Writes a replay's per-iteration latencies and its `replays` row (after its ops, which
    the caller has written: readers that find the row also find everything it refers to)."""
    import pyarrow as pa

    paths = []
    if len(iterations):
        table = pa.table(
            {
                "replay_id": [replay_id] * len(iterations),
                "iteration": iterations.tolist(),
                "latency_us": iteration_latency_us.tolist(),
            }
        )
        paths.append(str(results.write("replay_iterations", table, name=replay_id)))
    record = {
        "replay_id": replay_id,
        "trace_id": trace_id(trace),
        "fabric": fabric.name,
        "fabric_toml": fabric.toml_text,
        "fabric_sha256": fabric.sha256,
        "seed": options.seed,
        "background_b": None,
        "coll_overrides": options.coll,
        "engine_version": _core.engine_version(),
        "total_time_ns": round(total_time_ns),
        "created_at": datetime.now(UTC),
    }
    paths.append(str(results.write("replays", [record], name=replay_id)))
    return paths


def _store(
    outcome: ReplayOutcome, trace: Path, fabric: Fabric, options: ReplayOptions, results: ResultsDir
) -> None:
    import pyarrow as pa

    rid = outcome.replay_id
    n = outcome.ops.num_rows
    ops = outcome.ops.drop_columns([]).add_column(0, "replay_id", pa.array([rid] * n, pa.string()))
    paths = [str(results.write("replay_ops", ops, name=rid))]
    paths += store_replay_summary(
        results, rid, trace, fabric, options, outcome.total_time_ns,
        outcome.iterations, outcome.iteration_latency_us,
    )  # fmt: skip
    outcome.stored = paths
