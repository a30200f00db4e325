"""The synthetic halo + allreduce trace of the benchmarks as a tailcast TRACE Parquet file.

Per rank: init, then per iteration (6 rows) irecv from the left and the right neighbour,
isend to both, waitall on those four requests and an 8-byte allreduce, then finalize
(SimGrid's replay needs the init). Rows are generated and written in (rank, seq) order in
bounded batches through the trace layout writer, so a trace of any length never sits in
memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from tailcast.store.parquet_io import atomic_path, file_metadata
from tailcast.store.schemas import TRACE
from tailcast.traces.layout import TraceWriter
from tailcast.traces.meta import TABLE, TraceMeta

PER_ITERATION = 6
OPS = np.array(["irecv", "irecv", "isend", "isend", "waitall", "allreduce"], dtype=object)


def halo_batches(
    ranks: int, iterations: int, halo_bytes: int, batch_iterations: int = 10_000
) -> Iterator[pa.RecordBatch]:
    """TRACE rows of the trace, rank by rank, `batch_iterations` iterations per batch."""
    for rank in range(ranks):
        left, right = (rank - 1) % ranks, (rank + 1) % ranks
        yield _call(rank, 0, "init")
        for first in range(0, iterations, batch_iterations):
            its = min(batch_iterations, iterations - first)
            yield _batch(rank, left, right, first, its, halo_bytes)
        yield _call(rank, 1 + iterations * PER_ITERATION, "finalize")


def _call(rank: int, seq: int, op: str) -> pa.RecordBatch:
    row = {"rank": [rank], "seq": [seq], "op": [op], "t_start_ns": [0], "t_end_ns": [0]}
    return pa.RecordBatch.from_pylist(
        [{f.name: row.get(f.name, [None])[0] for f in TRACE}], schema=TRACE
    )


def _batch(rank: int, left: int, right: int, first: int, its: int, nbytes: int) -> pa.RecordBatch:
    n = its * PER_ITERATION
    slot = np.tile(np.arange(PER_ITERATION), its)
    it = np.repeat(np.arange(first, first + its, dtype=np.int32), PER_ITERATION)
    peer_of_slot = np.array([left, right, left, right, -1, -1], dtype=np.int32)
    bytes_of_slot = np.array([nbytes] * 4 + [0, 8], dtype=np.int64)
    # Requests are numbered per iteration (4 per iteration) so waitall names its own four.
    req = (it.astype(np.int64) * 4 + np.minimum(slot, 3)).astype(np.int64)
    is_p2p = slot < 4
    waitall = slot == 4
    offsets = np.zeros(n + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(np.where(waitall, 4, 0))
    values = (np.repeat(it[waitall].astype(np.int64) * 4, 4) + np.tile(np.arange(4), its)).astype(
        np.int64
    )
    peer = peer_of_slot[slot]
    nullable_peer = pa.array(peer, mask=~is_p2p)
    zeros = np.zeros(n, dtype=np.int64)
    columns = {
        "rank": pa.array(np.full(n, rank, dtype=np.int32)),
        "seq": pa.array(np.arange(1 + first * PER_ITERATION, 1 + first * PER_ITERATION + n)),
        "op": pa.array(OPS[slot], type=pa.string()),
        "peer": nullable_peer,
        "root": pa.nulls(n, pa.int32()),
        "send_bytes": pa.array(bytes_of_slot[slot]),
        "recv_bytes": pa.array(bytes_of_slot[slot]),
        "tag": pa.array(np.zeros(n, dtype=np.int32)),
        "comm": pa.array(np.zeros(n, dtype=np.int32)),
        "request": pa.array(req, mask=~is_p2p),
        "t_start_ns": pa.array(zeros),
        "t_end_ns": pa.array(zeros),
        "iteration": pa.array(it),
        "recv_peer": pa.nulls(n, pa.int32()),
        "recv_tag": pa.nulls(n, pa.int32()),
        "send_counts": pa.nulls(n, pa.list_(pa.int64())),
        "recv_counts": pa.nulls(n, pa.list_(pa.int64())),
        "requests": pa.ListArray.from_arrays(
            pa.array(offsets), pa.array(values), mask=pa.array(~waitall)
        ),
        "new_comm": pa.nulls(n, pa.int32()),
        "comm_members": pa.nulls(n, pa.list_(pa.int32())),
        "dtype_bytes": pa.nulls(n, pa.int32()),
        "commutative": pa.nulls(n, pa.int32()),
    }
    return pa.RecordBatch.from_pydict(columns, schema=TRACE)


# The columns the trace has (the others are null in every row: left out, traces.layout).
COLUMNS = [
    "rank", "seq", "op", "peer", "send_bytes", "recv_bytes", "tag", "comm", "request",
    "t_start_ns", "t_end_ns", "iteration", "requests",
]  # fmt: skip


def write_halo_trace(path: Path, ranks: int, iterations: int, halo_bytes: int) -> int:
    """Writes the trace to `path` in the trace layout (streaming); returns its rows."""
    meta = TraceMeta(
        ranks=ranks, application="synthetic halo + allreduce", source_format="tailcast",
        clock="synthetic",
    )  # fmt: skip
    schema = pa.schema([TRACE.field(c) for c in COLUMNS])
    rows = 0
    with (
        atomic_path(Path(path)) as tmp,
        TraceWriter(tmp, schema, file_metadata(TABLE, meta.to_kv())) as writer,
    ):
        for batch in halo_batches(ranks, iterations, halo_bytes):
            writer.write(batch.select(COLUMNS))
            rows += batch.num_rows
    return rows
