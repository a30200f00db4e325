"""TRACE Parquet columns → the compact numpy columns the engine reads (`_core.replay`).

Null encodings the engine expects: peer null → -2 (MPI_PROC_NULL; -1 stays ANY_SOURCE),
root/request/iteration null → -1, tag/comm/bytes/times null → 0, recv_peer/recv_tag null →
SAME (= peer / tag). List columns become CSR pairs `<name>_offsets` / `<name>_values`
(offsets empty when every list of the column is empty).
Communicator members come from comm_split/dup/create rows (`new_comm`, `comm_members`).
Batches are converted one at a time so only the compact arrays stay in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from tailcast import _core

SAME = np.iinfo(np.int32).min
PROC_NULL = -2
LIST_COLUMNS = ("requests", "send_counts", "recv_counts")

# (column, dtype, null fill)
_SCALARS: tuple[tuple[str, type[np.generic], int], ...] = (
    ("seq", np.int64, 0),
    ("peer", np.int32, PROC_NULL),
    ("root", np.int32, -1),
    ("send_bytes", np.int64, 0),
    ("recv_bytes", np.int64, 0),
    ("tag", np.int32, 0),
    ("comm", np.int32, 0),
    ("request", np.int64, -1),
    ("t_start_ns", np.int64, 0),
    ("t_end_ns", np.int64, 0),
    ("iteration", np.int32, -1),
    ("recv_peer", np.int32, SAME),
    ("recv_tag", np.int32, SAME),
)


def op_code_table() -> dict[str, int]:
    return dict(_core.op_codes())


def normalise_op(name: str) -> str:
    """`MPI_Isend` / `Isend` / `isend` → `isend`."""
    lowered = name.strip().lower()
    return lowered.removeprefix("mpi_")


@dataclass
class EngineColumns:
    """Accumulates converted batches; `arrays()` gives the dict `_core.replay` takes."""

    parts: dict[str, list[NDArray[Any]]] = field(default_factory=dict)
    list_parts: dict[str, list[tuple[NDArray[np.int64], NDArray[np.int64]]]] = field(
        default_factory=dict
    )
    comms: dict[int, list[int]] = field(default_factory=dict)
    unknown_ops: dict[str, int] = field(default_factory=dict)
    rows: int = 0

    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        names = set(batch.schema.names)
        n = batch.num_rows
        rank = _filled(batch, "rank", np.int32, 0)
        if n and rank.min() < 0:
            raise ValueError("negative rank")
        self.parts.setdefault("rank", []).append(rank.astype(np.uint32))
        for name, dtype, fill in _SCALARS:
            if name in names:
                values = _filled(batch, name, dtype, fill)
            else:
                values = np.full(n, fill, dtype=dtype)
            self.parts.setdefault(name, []).append(values)
        self.parts.setdefault("op", []).append(self._op_codes(batch.column("op")))
        for name in LIST_COLUMNS:
            self.list_parts.setdefault(name, []).append(_csr(batch, name, names))
        if "new_comm" in names and "comm_members" in names:
            self._collect_comms(batch)
        self.rows += n

    def _op_codes(self, column: pa.Array | pa.ChunkedArray) -> NDArray[np.uint8]:
        table = op_code_table()
        parts: list[NDArray[np.uint8]] = []
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        for chunk in chunks:
            names, indices = op_dictionary(chunk)
            # One code per distinct name, then one numpy take for the rows.
            codes = np.array([table.get(v, 0) for v in names] or [0], dtype=np.uint8)
            if any(v not in table for v in names):
                counts = np.bincount(indices, minlength=len(names))
                for i, v in enumerate(names):
                    if v not in table and counts[i]:
                        self.unknown_ops[v] = self.unknown_ops.get(v, 0) + int(counts[i])
            parts.append(codes[indices])
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)

    def _collect_comms(self, batch: pa.RecordBatch | pa.Table) -> None:
        new = batch.column("new_comm")
        mask = pc.is_valid(new)
        if not pc.any(mask).as_py():
            return
        ids = pc.filter(new, mask).to_pylist()
        members = pc.filter(batch.column("comm_members"), mask).to_pylist()
        for cid, mem in zip(ids, members, strict=True):
            if mem is not None and cid is not None and cid >= 0:
                self.comms.setdefault(int(cid), [int(m) for m in mem])

    def arrays(self) -> dict[str, NDArray[np.generic]]:
        out: dict[str, NDArray[np.generic]] = {
            k: np.ascontiguousarray(np.concatenate(v)) for k, v in self.parts.items()
        }
        for name, pieces in self.list_parts.items():
            out[f"{name}_offsets"], out[f"{name}_values"] = _join_csr(pieces)
        ids = sorted(self.comms)
        out["comm_ids"] = np.array(ids, dtype=np.int32)
        lengths = np.array([len(self.comms[i]) for i in ids], dtype=np.int64)
        out["comm_members_offsets"] = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = [m for i in ids for m in self.comms[i]]
        out["comm_members_values"] = np.array(flat, dtype=np.int64)
        return out


def op_dictionary(column: pa.Array) -> tuple[list[str], NDArray[np.intp]]:
    """The distinct normalised op names of a column and each row's index into them. A
    dictionary column (read with `read_dictionary=["op"]`) is used as it is."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    names = [normalise_op(str(v)) for v in column.dictionary.to_pylist()]
    indices = np.asarray(column.indices.to_numpy(zero_copy_only=False), dtype=np.intp)
    return names, indices


def _chunk(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks()
    return column


def _filled(
    batch: pa.RecordBatch | pa.Table, name: str, dtype: type[np.generic], fill: int
) -> NDArray[Any]:
    column = _chunk(batch.column(name))
    if column.null_count:
        column = pc.fill_null(column, fill)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=dtype)


def _csr(
    batch: pa.RecordBatch | pa.Table, name: str, names: set[str]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    n = batch.num_rows
    if name not in names:
        return np.zeros(n, dtype=np.int64), np.zeros(0, dtype=np.int64)
    column = _chunk(batch.column(name))
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
    values = pc.list_flatten(column)
    values = pc.fill_null(values, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return lengths.astype(np.int64), values


def _join_csr(
    pieces: Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    pieces = list(pieces)
    if not any(len(p[1]) for p in pieces) and not any(p[0].any() for p in pieces):
        # Every list empty: empty offsets say so to the engine (trace.rs `Lists`).
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lengths = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.int64)
    values = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, np.ascontiguousarray(values)
