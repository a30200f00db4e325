"""Streaming replay: the trace is read rank by rank in bounded chunks as the engine asks
for rows (`_core.ReplayStream`), and per-operation results stream to Parquet in row
groups (written atomically: the file appears complete or not at all). Memory grows with
the rows in flight, not with the trace. Results are bit-identical to `replay_trace`; the
replay_ops rows come in completion order instead of trace order.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import NDArray

from tailcast import _core
from tailcast.errors import InputError, UsageError
from tailcast.replay.background import EndpointPool, generator_dict
from tailcast.replay.columns import op_code_table
from tailcast.replay.fabric import Fabric
from tailcast.replay.placement import endpoints_of, placement_spec
from tailcast.replay.rank_reader import Chunk, RankReader, scan_trace
from tailcast.replay.row_groups import RowGroupStats
from tailcast.replay.run import (
    ReplayFailed,
    ReplayHead,
    ReplayOptions,
    _meta_comms,
    store_replay_summary,
    summary_head,
)
from tailcast.store import ResultsDir
from tailcast.store.parquet_io import atomic_path
from tailcast.store.schemas import (
    META_PART_OF,
    META_SCHEMA_VERSION,
    META_TABLE,
    REPLAY_OPS,
    SCHEMA_VERSION,
)
from tailcast.traces.io import read_meta

OPS_ROW_GROUP = 1 << 18
DEFAULT_CHUNK_ROWS = 1 << 14


@dataclass
class StreamOutcome(ReplayHead):
    op_counts: dict[str, int] = field(default_factory=dict)
    ops_path: str | None = None
    unknown_ops: dict[str, int] = field(default_factory=dict)
    stored: list[str] = field(default_factory=list)
    cpu_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        return summary_head(self) | {
            "op_counts": self.op_counts,
            "unknown_ops": self.unknown_ops,
            "ops_path": self.ops_path,
            "stored": self.stored,
        }


class OpsWriter:
    """replay_ops rows to one Parquet file, a row group at a time."""

    def __init__(self, writer: pq.ParquetWriter, replay_id: str) -> None:
        self.writer, self.replay_id = writer, replay_id
        names = {code: name for name, code in op_code_table().items()}
        self.names = pa.array([names.get(c, "other") for c in range(256)], pa.string())
        self.parts: list[dict[str, NDArray[Any]]] = []
        self.pending = 0
        self.counts = np.zeros(256, dtype=np.int64)

    def add(self, ops: dict[str, NDArray[Any]], flush: bool = False) -> None:
        if len(ops["seq"]):
            self.parts.append(ops)
            self.pending += len(ops["seq"])
            self.counts += np.bincount(ops["op"], minlength=256)
        if self.pending >= OPS_ROW_GROUP or (flush and self.pending):
            self._write()

    def _write(self) -> None:
        cat = {k: np.concatenate([p[k] for p in self.parts]) for k in self.parts[0]}
        n = len(cat["seq"])
        op = pc.take(self.names, pa.array(cat["op"].astype(np.int32)))
        columns = {
            "replay_id": pa.array(np.full(n, self.replay_id, dtype=object), pa.string()),
            "rank": pa.array(cat["rank"].astype(np.int32)),
            "seq": pa.array(cat["seq"]),
            "op": op,
            "sim_start_ns": pa.array(cat["sim_start_ns"]),
            "sim_end_ns": pa.array(cat["sim_end_ns"]),
        }
        # Streamed replays record no per-message fabric details: those columns are null.
        schema = self.writer.schema
        table = pa.table([columns.get(f.name, pa.nulls(n, f.type)) for f in schema], schema=schema)
        self.writer.write_table(table, row_group_size=OPS_ROW_GROUP)
        self.parts, self.pending = [], 0


@contextlib.contextmanager
def _ops_file(path: Path | None, replay_id: str, in_store: bool) -> Iterator[OpsWriter | None]:
    if path is None:
        yield None
        return
    kv = {META_TABLE: b"replay_ops", META_SCHEMA_VERSION: str(SCHEMA_VERSION).encode()}
    if in_store:  # a part of the replay, shown once its `replays` row exists
        kv[META_PART_OF] = f"replays/{replay_id}".encode()
    schema = REPLAY_OPS.with_metadata(kv)
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as w:
        yield OpsWriter(w, replay_id)


def stream_replay(
    trace: Path,
    fabric: Fabric,
    options: ReplayOptions,
    results: ResultsDir | None = None,
    ops_path: Path | None = None,
    keep_ops: bool = True,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    piece_rows: int | None = None,
) -> StreamOutcome:
    """Replays `trace` streaming. Per-op times go to `ops_path`, or with `results` to its
    replay_ops table (unless `keep_ops` is False); the replays / replay_iterations rows
    are stored in `results` when given. `chunk_rows`: rows per rank read at a time;
    `piece_rows`: rows per rank handed to the engine at a time (see `_core.ReplayStream`)."""
    trace = Path(trace)
    cpu0 = time.process_time()
    meta = read_meta(trace)
    try:
        groups = RowGroupStats(pq.read_metadata(trace))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(trace, f"corrupt Parquet footer ({exc})") from exc
    layout = scan_trace(trace, _meta_comms(trace, meta.extra.get("comms", "")), groups)
    ranks = max(layout.ranks, meta.ranks)
    layout.starts = np.concatenate(
        [layout.starts, np.full(ranks - layout.ranks, layout.starts[-1], dtype=np.int64)]
    )
    layout.ranks = ranks
    reader = RankReader(trace, layout, chunk_rows, stats=groups)
    rid = uuid.uuid4().hex
    in_store = results is not None and keep_ops and ops_path is None
    if in_store:
        assert results is not None
        ops_path = results.table_dir("replay_ops") / f"{rid}.parquet"
    if options.background_traces:
        raise UsageError("background traces need an in-memory replay (not --stream)")
    placement = placement_spec(options.placement, ranks, options.seed, fabric, options.nodes)
    generators = []
    if options.background:
        pool = EndpointPool(fabric.endpoints, endpoints_of(fabric, ranks, placement), options.seed)
        generators = [
            generator_dict(job, pool.take(job.nodes, job.placement, f"background {job.pattern}"))
            for job in options.background
        ]
    stream = _core.ReplayStream(
        ranks,
        layout.comms,
        placement,
        fabric.table,
        seed=options.seed,
        eager_threshold_bytes=options.eager_threshold_bytes,
        compute_scale=options.compute_scale,
        coll=options.coll,
        keep_ops=keep_ops and ops_path is not None,
        piece_rows=piece_rows,
        background=generators,
        # Streamed replays keep memory bounded: no per-message rows.
        record_messages=False,
    )
    # Interrupted or failed: neither the ops file nor any other file of the replay stays.
    group: contextlib.AbstractContextManager[list[Path]] = (
        results.all_or_nothing() if results is not None else contextlib.nullcontext([])
    )
    with group:
        with _ops_file(ops_path if keep_ops else None, rid, in_store) as writer:
            try:
                while (rank := stream.run()) is not None:
                    chunk = reader.next_chunk(rank)
                    if chunk is None:
                        stream.close(rank)
                    else:
                        _feed(stream, trace, rank, chunk)
                    if writer is not None:
                        writer.add(stream.take_ops())
                if writer is not None:
                    writer.add(stream.take_ops(), flush=True)
                result = stream.finish()
            except ValueError as err:
                # Bad rows and deadlocks; column conversion errors name a column.
                raise ReplayFailed(f"{trace}: {err}") from err
            counts = writer.counts if writer is not None else np.zeros(256, dtype=np.int64)
        if in_store and results is not None and ops_path is not None:
            results.adopt(ops_path)
        job = result.jobs[0]
        names = {code: name for name, code in op_code_table().items()}
        outcome = StreamOutcome(
            replay_id=rid,
            trace=str(trace),
            fabric=fabric.name,
            ranks=ranks,
            total_time_ns=job.total_time_ns,
            stats=dict(result.stats),
            fabric_stats=dict(result.fabric_stats),
            iterations=job.iterations,
            iteration_latency_us=job.iteration_latency_ns / 1000.0,
            op_counts={names.get(c, "other"): int(n) for c, n in enumerate(counts) if n},
            ops_path=str(ops_path) if ops_path is not None and keep_ops else None,
            unknown_ops=layout.unknown_ops,
        )
        if results is not None:
            _store(outcome, trace, fabric, options, results)
    outcome.cpu_s = time.process_time() - cpu0
    return outcome


def _feed(stream: _core.ReplayStream, trace: Path, rank: int, chunk: Chunk) -> None:
    batch, first_row, constants = chunk
    try:
        stream.feed_arrow(rank, batch, first_row, constants or None)
    except TypeError as exc:
        message = f"rows {first_row}..{first_row + batch.num_rows - 1}: {exc}"
        raise InputError(trace, message) from exc


def _store(
    outcome: StreamOutcome, trace: Path, fabric: Fabric, options: ReplayOptions, results: ResultsDir
) -> None:
    paths = [str(outcome.ops_path)] if outcome.ops_path else []
    paths += store_replay_summary(results, outcome.replay_id, trace, fabric, options, outcome)
    outcome.stored = paths
