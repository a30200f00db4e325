"""Reading a trace rank by rank for the streaming engine.

Trace files are sorted by (rank, seq) (`tailcast.traces.io.write_trace`), so each rank's
rows are one contiguous range of the file. `scan_trace` finds the ranges and the
communicators in one pass over a few columns; `RankReader` then hands out a rank's next
rows as engine columns. A rank with many rows has its own Parquet batch reader over its
row groups (memory: the compressed row group being read and one batch); ranks with few
rows share decoded row groups through a small cache. Unknown op names are counted in the
scan.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
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
from tailcast.errors import InputError
from tailcast.replay.columns import LIST_COLUMNS, EngineColumns, normalise_op, op_code_table

ENGINE_COLUMNS = [
    "rank", "seq", "op", "peer", "root", "send_bytes", "recv_bytes", "tag", "comm", "request",
    "t_start_ns", "t_end_ns", "iteration", "recv_peer", "recv_tag", "requests", "send_counts",
    "recv_counts", "new_comm", "comm_members",
]  # fmt: skip
SCAN_BATCH_ROWS = 1 << 20


@dataclass
class TraceLayout:
    """Row ranges per rank and the communicators of a (rank, seq)-sorted trace."""

    rows: int
    ranks: int
    starts: NDArray[np.int64]  # rank r has rows starts[r]..starts[r + 1]
    comms: dict[int, list[int]] = field(default_factory=dict)
    unknown_ops: dict[str, int] = field(default_factory=dict)


def _collective_names() -> list[str]:
    return [name for name, code in _core.op_codes().items() if code >= 32]


def scan_trace(path: Path, declared: dict[int, list[int]] | None = None) -> TraceLayout:
    """One pass over rank/op/comm columns: per-rank ranges, communicator members (declared
    by comm_* rows or `declared`, else the ranks calling collectives on them)."""
    # The op column is read as its Parquet dictionary: names are handled once per distinct
    # value and rows only through their dictionary indices.
    pf = pq.ParquetFile(path, read_dictionary=["op"])
    names = set(pf.schema_arrow.names)
    columns = [c for c in ("rank", "op", "comm", "new_comm", "comm_members") if c in names]
    counts: dict[int, int] = {}
    comms: dict[int, list[int]] = dict(declared or {})
    used: dict[int, set[int]] = {}
    collectives = set(_collective_names())
    known = set(op_code_table())
    unknown: dict[str, int] = {}
    last_rank, row = -1, 0
    for batch in pf.iter_batches(batch_size=SCAN_BATCH_ROWS, columns=columns, use_threads=False):
        ranks = batch.column("rank").to_numpy(zero_copy_only=False).astype(np.int64)
        if len(ranks) and (ranks[0] < last_rank or (np.diff(ranks) < 0).any()):
            bad = row + int(np.flatnonzero(np.diff(np.r_[last_rank, ranks]) < 0)[0])
            raise InputError(path, f"rows are not sorted by rank (row {bad})")
        if len(ranks) and ranks[0] < 0:
            raise InputError(path, f"negative rank at row {row}")
        values, n = np.unique(ranks, return_counts=True)
        for v, k in zip(values.tolist(), n.tolist(), strict=True):
            counts[v] = counts.get(v, 0) + k
        if len(ranks):
            last_rank = int(ranks[-1])
        op = batch.column("op")
        if not pa.types.is_dictionary(op.type):
            op = pc.dictionary_encode(op)
        indices = np.asarray(op.indices.to_numpy(zero_copy_only=False), dtype=np.intp)
        raw = [str(v) for v in op.dictionary.to_pylist()]
        _comms(batch, ranks, raw, indices, collectives, comms, used)
        op_counts = np.bincount(indices, minlength=len(raw))
        for value, k in zip(raw, op_counts.tolist(), strict=True):
            name = normalise_op(value)
            if k and name not in known:
                unknown[name] = unknown.get(name, 0) + k
        row += len(ranks)
    nranks = max(counts) + 1 if counts else 0
    sizes = np.array([counts.get(r, 0) for r in range(nranks)], dtype=np.int64)
    starts = np.zeros(nranks + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    for cid, members in used.items():
        comms.setdefault(cid, sorted(members))
    return TraceLayout(rows=row, ranks=nranks, starts=starts, comms=comms, unknown_ops=unknown)


def _comms(
    batch: pa.RecordBatch,
    ranks: NDArray[np.int64],
    op_values: list[str],
    op_indices: NDArray[np.intp],
    collectives: set[str],
    comms: dict[int, list[int]],
    used: dict[int, set[int]],
) -> None:
    names = batch.schema.names
    if "new_comm" in names and "comm_members" in names:
        new = batch.column("new_comm")
        mask = pc.is_valid(new)
        if pc.any(mask).as_py():
            ids = pc.filter(new, mask).to_pylist()
            members = pc.filter(batch.column("comm_members"), mask).to_pylist()
            for cid, mem in zip(ids, members, strict=True):
                if mem is not None and cid is not None and cid >= 0:
                    comms.setdefault(int(cid), [int(m) for m in mem])
    if "comm" not in names:
        return
    # Lower-cased, "mpi_" prefix dropped (no strip), per distinct op value, then one take.
    is_collective = np.array(
        [v.lower().removeprefix("mpi_") in collectives for v in op_values] or [False]
    )
    valid = pc.is_valid(batch.column("comm")).to_numpy(zero_copy_only=False)
    mask_np = is_collective[op_indices] & valid
    if not mask_np.any():
        return
    comm = batch.column("comm").to_numpy(zero_copy_only=False)[mask_np].astype(np.int64)
    pairs = np.unique(comm * (1 << 32) + ranks[mask_np])
    for key in pairs.tolist():
        used.setdefault(key >> 32, set()).add(key & 0xFFFFFFFF)


class RankReader:
    """Hands out each rank's rows in order, `chunk_rows` at most at a time."""

    def __init__(self, path: Path, layout: TraceLayout, chunk_rows: int, cache_groups: int = 8):
        self.path = path
        self.pf = pq.ParquetFile(path, read_dictionary=["op"])
        present = set(self.pf.schema_arrow.names)
        self.columns = [c for c in ENGINE_COLUMNS if c in present]
        self.layout = layout
        self.chunk_rows = max(2, chunk_rows)
        meta = self.pf.metadata
        self.group_starts = [0]
        for g in range(meta.num_row_groups):
            self.group_starts.append(self.group_starts[-1] + meta.row_group(g).num_rows)
        self.next_row = layout.starts[:-1].copy()
        # rank → (its rows of the row group being read, index of the next one)
        self.pending: dict[int, tuple[dict[str, NDArray[Any]], int]] = {}
        self.cache: OrderedDict[int, dict[str, NDArray[Any]]] = OrderedDict()
        self.cache_groups = max(1, cache_groups)
        self.streams: dict[int, Iterator[tuple[dict[str, NDArray[Any]], int]]] = {}

    def _group(self, g: int) -> dict[str, NDArray[Any]]:
        if g in self.cache:
            self.cache.move_to_end(g)
            return self.cache[g]
        try:
            table = self.pf.read_row_group(g, columns=self.columns, use_threads=False)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(self.path, f"corrupt Parquet data in row group {g} ({exc})") from exc
        arrays = _convert(table)
        self.cache[g] = arrays
        if len(self.cache) > self.cache_groups:
            self.cache.popitem(last=False)
        return arrays

    def next_chunk(self, rank: int) -> tuple[dict[str, NDArray[Any]], int] | None:
        """The rank's next rows (engine columns) and the file row number of the first."""
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
                self.next_row[rank] = chunk[1] + len(chunk[0]["seq"])
            return chunk
        if rank not in self.pending:
            g = bisect.bisect_right(self.group_starts, pos) - 1
            base = self.group_starts[g]
            stop = min(end, self.group_starts[g + 1])
            part = _slice(self._group(g), pos - base, stop - base)
            self.pending[rank] = ({k: np.ascontiguousarray(v) for k, v in part.items()}, 0)
        part, at = self.pending[rank]
        n = len(part["seq"])
        stop = min(n, at + self.chunk_rows)
        if stop == n:
            del self.pending[rank]
        else:
            self.pending[rank] = (part, stop)
        self.next_row[rank] = pos + (stop - at)
        return _slice(part, at, stop), pos

    def _batches(self, rank: int) -> Iterator[tuple[dict[str, NDArray[Any]], int]]:
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
                    part = _convert(batch.slice(first - a, last - first))
                    yield _slice(part, 0, last - first), first
                    if b >= hi:
                        return
        except (OSError, pa.ArrowException) as exc:
            raise InputError(self.path, f"corrupt Parquet data ({exc})") from exc


def _convert(table: pa.Table | pa.RecordBatch) -> dict[str, NDArray[Any]]:
    converted = EngineColumns()
    converted.add(table)
    return converted.arrays()


def _slice(arrays: dict[str, NDArray[Any]], a: int, b: int) -> dict[str, NDArray[Any]]:
    out: dict[str, NDArray[Any]] = {}
    for name, values in arrays.items():
        if name.startswith("comm_") or name.endswith(("_offsets", "_values")):
            continue
        out[name] = values[a:b]
    for name in LIST_COLUMNS:
        offsets = arrays[f"{name}_offsets"]
        if len(offsets) == 0:  # every list empty
            out[f"{name}_offsets"] = offsets
            out[f"{name}_values"] = arrays[f"{name}_values"]
            continue
        lo, hi = int(offsets[a]), int(offsets[b])
        out[f"{name}_offsets"] = offsets[a : b + 1] - lo
        out[f"{name}_values"] = arrays[f"{name}_values"][lo:hi]
    return out
