"""Replaying a tailcast Parquet trace on a fabric and storing the results.

A replay holds the foreground trace and, optionally, background traffic (synthetic jobs and
background traces on endpoints of their own, see background.py); it ends when the
foreground trace ends. Writes one `replays` row, the per-operation simulated times
(`replay_ops`, with what the fabric reported about each row's messages when it reports
anything), per-iteration latencies (`replay_iterations`) for traces that mark iterations,
the fabric's counters (`fabric_stats`) and, when recorded, every delivered message
(`replay_messages`), each as its own atomic Parquet file named by the replay id.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tailcast import _core
from tailcast.errors import InputError, TailcastError, UsageError
from tailcast.replay.columns import EngineColumns, op_code_table
from tailcast.replay.fabric import Fabric
from tailcast.replay.scenario import ReplayOptions, scenario_of
from tailcast.replay.summary import op_summary
from tailcast.traces.meta import read_meta

if TYPE_CHECKING:  # pyarrow loads only to build or store the per-op table, numpy only
    # for in-memory replays and stored results (a streamed --no-store replay loads neither)
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray

    from tailcast.store.results import ResultsDir


class ReplayFailed(TailcastError):
    """The engine could not replay the trace (deadlock, unmatched messages, bad schedule)."""


def replay_failed(trace: Path, err: _core.ReplayError) -> TailcastError:
    """The error a failed replay raises: a placement the fabric cannot take is the user's
    to change (UsageError); anything else is the trace's (ReplayFailed)."""
    if err.kind == "placement":
        return UsageError(str(err))
    return ReplayFailed(f"{trace}: {err}")


@dataclass
class ReplayHead:
    """What the in-memory and the streaming outcomes both report."""

    replay_id: str
    trace: str
    fabric: str
    ranks: int
    total_time_ns: float
    stats: dict[str, int]
    iterations: NDArray[np.int32] | Sequence[int]
    # Per iteration the max and the mean over ranks of each rank's own span (the agent's
    # samples.latency_us and latency_us_mean).
    iteration_latency_us: NDArray[np.float64] | Sequence[float]
    iteration_mean_us: NDArray[np.float64] | Sequence[float]
    fabric_stats: dict[str, float] = field(default_factory=dict, kw_only=True)


@dataclass
class ReplayOutcome(ReplayHead):
    iterations: NDArray[np.int32]
    iteration_latency_us: NDArray[np.float64]
    iteration_mean_us: NDArray[np.float64]
    ops: pa.Table  # rank, seq, op, sim_start_ns, sim_end_ns (+ fabric columns)
    op_stats: _core.OpStats = field(default_factory=_core.OpStats)
    unknown_ops: dict[str, int] = field(default_factory=dict)
    stored: list[str] = field(default_factory=list)
    messages: pa.Table | None = None

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
        "background_messages": o.stats.get("background_messages", 0),
        "fabric_stats": o.fabric_stats,
    }


def _pct(values: NDArray[np.float64] | Sequence[float], q: float) -> float | None:
    """np.percentile(values, q) (its default, linear method) step for step, so the same
    float, without loading numpy for a streamed replay."""
    if not len(values):
        return None
    ordered = sorted(map(float, values))
    n = len(ordered)
    h = (n - 1) * (q / 100)
    lo = math.floor(h)
    a, b = ordered[lo], ordered[min(lo + 1, n - 1)]
    t = h - lo
    diff = b - a
    # numpy's _lerp: from the nearer end, so exact at both ends of the interval
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


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
    trace: Path,
    fabric: Fabric,
    options: ReplayOptions,
    results: ResultsDir | None = None,
    *,
    replay_id: str | None = None,
    store_ops: bool = True,
    progress: Callable[[int], None] | None = None,
) -> ReplayOutcome:
    """Replays `trace` on `fabric`; stores the results in `results` when given (the
    per-operation rows unless `store_ops` is False). `replay_id` names the stored files
    (default: a fresh id); storing again under the same id replaces them. `progress(n)`:
    n more of the trace's rows taken by the engine (`_core.replay`)."""
    trace = Path(trace)
    meta = read_meta(trace)
    columns = trace_columns(trace)
    arrays = columns.arrays()
    ranks = max(int(arrays["rank"].max()) + 1 if columns.rows else 0, 0)
    scenario = scenario_of(fabric, options, ranks)
    background = [trace_columns(t.path).arrays() for t in options.background_traces]
    try:
        result = _core.replay(scenario, [arrays, *background], progress=progress)
    except _core.ReplayError as err:
        raise replay_failed(trace, err) from err
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tailcast.replay.messages import fabric_columns, messages_table

    job = result.jobs[0]
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
    messages = None
    if result.messages is not None:
        messages = messages_table(result.messages, result.path_classes)
        ops = fabric_columns(ops, messages)
    outcome = ReplayOutcome(
        replay_id=replay_id or uuid.uuid4().hex,
        trace=str(trace),
        fabric=fabric.name,
        ranks=max(ranks, meta.ranks),
        total_time_ns=job.total_time_ns,
        stats=dict(result.stats),
        ops=ops,
        op_stats=op_stats,
        iterations=np.array(job.iterations, dtype=np.int32),
        iteration_latency_us=np.array(job.iteration_latency_ns, dtype=np.float64) / 1000.0,
        iteration_mean_us=np.array(job.iteration_mean_ns, dtype=np.float64) / 1000.0,
        unknown_ops=columns.unknown_ops,
        messages=messages,
        fabric_stats=dict(result.fabric_stats),
    )
    if results is not None:
        _store(outcome, trace, fabric, options, results, store_ops)
    return outcome


def trace_columns(trace: Path) -> EngineColumns:
    """The engine columns of a trace with the communicators its importer recorded."""
    meta = read_meta(trace)
    columns = load_columns(trace)
    for cid, members in _meta_comms(trace, meta.extra.get("comms", "")).items():
        columns.comms.setdefault(cid, members)
    return columns


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
    import hashlib  # loads OpenSSL (~7 ms): only stored replays need the id

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
    outcome: ReplayHead,
) -> list[str]:
    """Writes a replay's per-iteration latencies, fabric counters and its `replays` row
    (after its ops and messages, which the caller has written: the row completes the
    replay, see store/results.py)."""
    import pyarrow as pa

    paths = []
    record_of = f"replays/{replay_id}"
    iterations, latency = outcome.iterations, outcome.iteration_latency_us
    if len(iterations):
        table = pa.table(
            {
                "replay_id": [replay_id] * len(iterations),
                "iteration": [int(i) for i in iterations],
                "latency_us": [float(x) for x in latency],
                "latency_us_mean": [float(x) for x in outcome.iteration_mean_us],
            }
        )
        paths.append(
            str(results.write("replay_iterations", table, name=replay_id, part_of=record_of))
        )
    counters = {
        **{f"engine_{k}": float(v) for k, v in outcome.stats.items()},
        **outcome.fabric_stats,
    }
    stats = pa.table(
        {
            "replay_id": [replay_id] * len(counters),
            "name": list(counters),
            "value": list(counters.values()),
        }
    )
    paths.append(str(results.write("fabric_stats", stats, name=replay_id, part_of=record_of)))
    meta = read_meta(trace)
    extra = {k: v for k, v in meta.extra.items() if k != "comms"}  # communicators: bulky
    record = {
        "replay_id": replay_id,
        "trace_id": trace_id(trace),
        "application": meta.application or None,
        "trace_meta": json.dumps(extra, sort_keys=True) if extra else None,
        "fabric": fabric.name,
        "fabric_toml": fabric.toml_text,
        "fabric_sha256": fabric.sha256,
        "seed": options.seed,
        "background_b": options.background_b.b if options.background_b else None,
        "background": background_description(options),
        "placement": options.placement,
        "coll_overrides": options.coll,
        "engine_version": _core.engine_version(),
        "total_time_ns": round(outcome.total_time_ns),
        "created_at": datetime.now(UTC),
    }
    paths.append(str(results.write("replays", [record], name=replay_id)))
    return paths


def background_description(options: ReplayOptions) -> str | None:
    """The background of a replay as stored in `replays.background` (JSON; None: none)."""
    if not (options.background or options.background_traces or options.background_b):
        return None
    traces = [{"path": str(t.path), "placement": t.placement} for t in options.background_traces]
    record: dict[str, Any] = {
        "jobs": [job.__dict__ for job in options.background],
        "traces": traces,
    }
    if options.background_b is not None:
        record["from_b"] = options.background_b.describe()
    if options.from_run is not None:
        record["from_run"] = options.from_run
    return json.dumps(record)


def _store(
    outcome: ReplayOutcome,
    trace: Path,
    fabric: Fabric,
    options: ReplayOptions,
    results: ResultsDir,
    store_ops: bool,
) -> None:
    import pyarrow as pa

    rid = outcome.replay_id
    record_of = f"replays/{rid}"
    with results.all_or_nothing():  # interrupted: none of the replay's files stays
        paths = []
        if store_ops:
            n = outcome.ops.num_rows
            ops = outcome.ops.add_column(0, "replay_id", pa.array([rid] * n, pa.string()))
            paths.append(str(results.write("replay_ops", ops, name=rid, part_of=record_of)))
        if outcome.messages is not None:
            m = outcome.messages
            table = m.add_column(0, "replay_id", pa.array([rid] * m.num_rows, pa.string()))
            paths.append(str(results.write("replay_messages", table, name=rid, part_of=record_of)))
        paths += store_replay_summary(results, rid, trace, fabric, options, outcome)
    outcome.stored = paths
