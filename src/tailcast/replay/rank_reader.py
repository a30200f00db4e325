"""Reading a trace rank by rank for the streaming engine.

Trace files are sorted by (rank, seq) (`tailcast.traces.io.write_trace`), so each rank's
rows are one contiguous range of the file. `scan_trace` finds the ranges and the
communicators in one pass over a few columns (`_core.TraceScan`); `RankReader` then hands
out a rank's next rows as Arrow record batches, which the binding converts while feeding
the engine (no Python-side copies). A rank with many rows has its own Parquet batch reader
over its row groups (memory: the compressed row group being read and one batch); ranks
with few rows share decoded row groups through a small cache. Unknown op names are counted
in the scan.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from tailcast import _core
from tailcast.errors import InputError
from tailcast.replay.row_groups import (
    Constant,
    RowGroupPlans,
    RowGroupStats,
    planned_batches,
    row_count_batch,
)

# What `feed_arrow` reads: not rank (a chunk is one rank's) nor the communicator
# declarations (the scan collects them before the replay starts).
FEED_COLUMNS = [
    "seq", "op", "peer", "root", "send_bytes", "recv_bytes", "tag", "comm", "request",
    "t_start_ns", "t_end_ns", "iteration", "recv_peer", "recv_tag", "requests", "send_counts",
    "recv_counts",
]  # fmt: skip
SCAN_COLUMNS = ["rank", "op", "comm", "new_comm", "comm_members"]
SCAN_BATCH_ROWS = 1 << 20


@dataclass
class TraceLayout:
    """Row ranges per rank and the communicators of a (rank, seq)-sorted trace."""

    rows: int
    ranks: int
    starts: NDArray[np.int64]  # rank r has rows starts[r]..starts[r + 1]
    comms: dict[int, list[int]] = field(default_factory=dict)
    unknown_ops: dict[str, int] = field(default_factory=dict)


def scan_trace(
    path: Path, declared: dict[int, list[int]] | None = None, stats: RowGroupStats | None = None
) -> TraceLayout:
    """One pass over rank/op/comm columns: per-rank ranges, communicator members (declared
    by `declared`, else by comm_* rows, else the ranks calling collectives on them).
    `stats`: the file's row-group statistics, when the caller shares them."""
    # The op column is read as its Parquet dictionary: the binding maps each distinct name
    # once and rows only through their dictionary indices.
    scan = _core.TraceScan()
    try:
        metadata = stats.metadata if stats is not None else None
        pf = pq.ParquetFile(path, metadata=metadata, read_dictionary=["op"])
        plans = RowGroupPlans(stats or RowGroupStats(pf.metadata), SCAN_COLUMNS)
        for g in range(pf.metadata.num_row_groups):
            for batch, constants in planned_batches(path, pf, plans, g, SCAN_BATCH_ROWS):
                scan.add(batch, constants)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data ({exc})") from exc
    except ValueError as exc:
        raise InputError(path, str(exc)) from exc
    counts = scan.counts()
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    comms: dict[int, list[int]] = dict(declared or {})
    for cid, members in scan.declared_comms():
        comms.setdefault(cid, members)
    for cid, ranks in scan.used_comms().items():
        comms.setdefault(cid, ranks)
    return TraceLayout(
        rows=scan.rows, ranks=len(counts), starts=starts, comms=comms,
        unknown_ops=scan.unknown_ops(),
    )  # fmt: skip


Chunk = tuple[pa.RecordBatch, int, dict[str, Constant]]


class RankReader:
    """Hands out each rank's rows in order, `chunk_rows` at most at a time: a record batch
    of the TRACE columns `feed_arrow` converts, the file row of its first row, and the
    columns constant in its row group (not in the batch)."""

    def __init__(
        self,
        path: Path,
        layout: TraceLayout,
        chunk_rows: int,
        cache_groups: int = 8,
        stats: RowGroupStats | None = None,
    ):
        self.path = path
        metadata = stats.metadata if stats is not None else None
        self.pf = pq.ParquetFile(path, metadata=metadata, read_dictionary=["op"])
        self.plans = RowGroupPlans(stats or RowGroupStats(self.pf.metadata), FEED_COLUMNS)
        self.layout = layout
        self.chunk_rows = max(2, chunk_rows)
        meta = self.pf.metadata
        self.group_starts = [0]
        for g in range(meta.num_row_groups):
            self.group_starts.append(self.group_starts[-1] + meta.row_group(g).num_rows)
        self.next_row = layout.starts[:-1].copy()
        # rank → (its rows of the row group being read, constants, index of the next row)
        self.pending: dict[int, tuple[pa.RecordBatch, dict[str, Constant], int]] = {}
        self.cache: OrderedDict[int, tuple[pa.RecordBatch, dict[str, Constant]]] = OrderedDict()
        self.cache_groups = max(1, cache_groups)
        self.streams: dict[int, Iterator[Chunk]] = {}

    def _group(self, g: int) -> tuple[pa.RecordBatch, dict[str, Constant]]:
        if g in self.cache:
            self.cache.move_to_end(g)
            return self.cache[g]
        plan = self.plans.plan(g)
        if plan.read:
            try:
                table = self.pf.read_row_group(g, columns=plan.read, use_threads=False)
            except (OSError, pa.ArrowException) as exc:
                message = f"corrupt Parquet data in row group {g} ({exc})"
                raise InputError(self.path, message) from exc
            batch = _one_batch(table)
        else:
            batch = row_count_batch(plan.rows)
        self.cache[g] = (batch, plan.constants)
        if len(self.cache) > self.cache_groups:
            self.cache.popitem(last=False)
        return self.cache[g]

    def next_chunk(self, rank: int) -> Chunk | None:
        """The rank's next rows, the file row number of the first and the constants."""
        pos = int(self.next_row[rank])
        end = int(self.layout.starts[rank + 1])
        if pos >= end:
            return None
        if self._own_reader(rank):
            stream = self.streams.get(rank)
            if stream is None:
                stream = self.streams[rank] = self._batches(rank)
            chunk = next(stream, None)
            if chunk is not None:
                self.next_row[rank] = chunk[1] + chunk[0].num_rows
            return chunk
        if rank not in self.pending:
            g = bisect.bisect_right(self.group_starts, pos) - 1
            base = self.group_starts[g]
            stop = min(end, self.group_starts[g + 1])
            batch, constants = self._group(g)
            self.pending[rank] = (batch.slice(pos - base, stop - pos), constants, 0)
        part, constants, at = self.pending[rank]
        stop = min(part.num_rows, at + self.chunk_rows)
        if stop == part.num_rows:
            del self.pending[rank]
        else:
            self.pending[rank] = (part, constants, stop)
        self.next_row[rank] = pos + (stop - at)
        return part.slice(at, stop - at), pos, constants

    def _own_reader(self, rank: int) -> bool:
        """Whether `rank` reads with its own reader. Ranks share decoded row groups when
        the cache holds them all (each decoded once), else only ranks with few rows do:
        with many ranks each in a different row group, a shared cache would decode a group
        again for every chunk, while a rank's own reader decodes its groups once (plus
        the part of its first group before its rows)."""
        if len(self.group_starts) - 1 <= self.cache_groups:
            return False
        rows = int(self.layout.starts[rank + 1]) - int(self.layout.starts[rank])
        return rows > 4 * self.chunk_rows

    def _batches(self, rank: int) -> Iterator[Chunk]:
        """A rank's rows in batches, read with its own reader one row group at a time (a
        reader given several row groups may buffer all of them)."""
        lo, hi = int(self.layout.starts[rank]), int(self.layout.starts[rank + 1])
        g0 = bisect.bisect_right(self.group_starts, lo) - 1
        g1 = bisect.bisect_right(self.group_starts, hi - 1) - 1
        # The footer is parsed once and shared: its size grows with the row groups.
        pf = pq.ParquetFile(
            self.path, metadata=self.pf.metadata, pre_buffer=False, read_dictionary=["op"]
        )
        for g in range(g0, g1 + 1):
            row = self.group_starts[g]
            for batch, constants in planned_batches(self.path, pf, self.plans, g, self.chunk_rows):
                a, b = row, row + batch.num_rows
                row = b
                if b <= lo:
                    continue
                first, last = max(lo, a), min(hi, b)
                yield batch.slice(first - a, last - first), first, constants
                if b >= hi:
                    return


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    """The table as one record batch (a row group read in one piece is one already)."""
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return table.combine_chunks().to_batches()[0] if table.num_rows else table.to_batches()[0]
