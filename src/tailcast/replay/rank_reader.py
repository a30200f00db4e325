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


def scan_trace(path: Path, declared: dict[int, list[int]] | None = None) -> TraceLayout:
    """One pass over rank/op/comm columns: per-rank ranges, communicator members (declared
    by `declared`, else by comm_* rows, else the ranks calling collectives on them)."""
    # The op column is read as its Parquet dictionary: the binding maps each distinct name
    # once and rows only through their dictionary indices.
    scan = _core.TraceScan()
    try:
        pf = pq.ParquetFile(path, read_dictionary=["op"])
        names = set(pf.schema_arrow.names)
        columns = [c for c in SCAN_COLUMNS if c in names]
        batches = pf.iter_batches(SCAN_BATCH_ROWS, columns=columns, use_threads=False)
        for batch in batches:
            scan.add(batch)
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


class RankReader:
    """Hands out each rank's rows in order, `chunk_rows` at most at a time, as Arrow record
    batches of the TRACE columns the stream's `feed_arrow` converts."""

    def __init__(self, path: Path, layout: TraceLayout, chunk_rows: int, cache_groups: int = 8):
        self.path = path
        self.pf = pq.ParquetFile(path, read_dictionary=["op"])
        present = set(self.pf.schema_arrow.names)
        self.columns = [c for c in FEED_COLUMNS if c in present]
        self.layout = layout
        self.chunk_rows = max(2, chunk_rows)
        meta = self.pf.metadata
        self.group_starts = [0]
        for g in range(meta.num_row_groups):
            self.group_starts.append(self.group_starts[-1] + meta.row_group(g).num_rows)
        self.next_row = layout.starts[:-1].copy()
        # rank → (its rows of the row group being read, index of the next one)
        self.pending: dict[int, tuple[pa.RecordBatch, int]] = {}
        self.cache: OrderedDict[int, pa.RecordBatch] = OrderedDict()
        self.cache_groups = max(1, cache_groups)
        self.streams: dict[int, Iterator[tuple[pa.RecordBatch, int]]] = {}

    def _group(self, g: int) -> pa.RecordBatch:
        if g in self.cache:
            self.cache.move_to_end(g)
            return self.cache[g]
        try:
            table = self.pf.read_row_group(g, columns=self.columns, use_threads=False)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(self.path, f"corrupt Parquet data in row group {g} ({exc})") from exc
        batch = _one_batch(table)
        self.cache[g] = batch
        if len(self.cache) > self.cache_groups:
            self.cache.popitem(last=False)
        return batch

    def next_chunk(self, rank: int) -> tuple[pa.RecordBatch, int] | None:
        """The rank's next rows and the file row number of the first."""
        pos = int(self.next_row[rank])
        end = int(self.layout.starts[rank + 1])
        if pos >= end:
            return None
        if end - int(self.layout.starts[rank]) > 4 * self.chunk_rows:
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
            self.pending[rank] = (self._group(g).slice(pos - base, stop - pos), 0)
        part, at = self.pending[rank]
        stop = min(part.num_rows, at + self.chunk_rows)
        if stop == part.num_rows:
            del self.pending[rank]
        else:
            self.pending[rank] = (part, stop)
        self.next_row[rank] = pos + (stop - at)
        return part.slice(at, stop - at), pos

    def _batches(self, rank: int) -> Iterator[tuple[pa.RecordBatch, int]]:
        """A rank's rows in batches, read with its own reader one row group at a time (a
        reader given several row groups may buffer all of them)."""
        lo, hi = int(self.layout.starts[rank]), int(self.layout.starts[rank + 1])
        g0 = bisect.bisect_right(self.group_starts, lo) - 1
        g1 = bisect.bisect_right(self.group_starts, hi - 1) - 1
        try:
            # The footer is parsed once and shared: its size grows with the row groups.
            pf = pq.ParquetFile(
                self.path, metadata=self.pf.metadata, pre_buffer=False, read_dictionary=["op"]
            )
            for g in range(g0, g1 + 1):
                row = self.group_starts[g]
                batches = pf.iter_batches(
                    self.chunk_rows, row_groups=[g], columns=self.columns, use_threads=False
                )
                for batch in batches:
                    a, b = row, row + batch.num_rows
                    row = b
                    if b <= lo:
                        continue
                    first, last = max(lo, a), min(hi, b)
                    yield batch.slice(first - a, last - first), first
                    if b >= hi:
                        return
        except (OSError, pa.ArrowException) as exc:
            raise InputError(self.path, f"corrupt Parquet data ({exc})") from exc


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    """The table as one record batch (a row group read in one piece is one already)."""
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return table.combine_chunks().to_batches()[0] if table.num_rows else table.to_batches()[0]
