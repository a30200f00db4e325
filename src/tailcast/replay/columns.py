"""TRACE Parquet columns → the compact numpy columns the engine reads (`_core.replay`).

The conversion itself is in the binding (crates/replay-py/src/ingest.rs): a trace file is
decoded natively (`_core.TraceFile`, crates/parquet-lite) and in-memory Arrow batches cross
through the C Data Interface without a copy (`_core.ColumnBuilder`); either way each column
is filled and cast in one pass. Null encodings the engine expects: peer null → -2
(MPI_PROC_NULL; -1 stays ANY_SOURCE), root/request/iteration null → -1, tag/comm/bytes/
times null → 0, recv_peer/recv_tag null → SAME (= peer / tag). List columns become CSR
pairs `<name>_offsets` / `<name>_values` (offsets empty when every list of the column is
empty). Communicator members come from comm_split/dup/create rows (`new_comm`,
`comm_members`). Batches are converted one at a time so only the compact arrays stay in
memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tailcast import _core

if TYPE_CHECKING:  # numpy loads only when the columns are built (not for a streamed replay)
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray

SAME = -(2**31)  # the smallest int32


def op_code_table() -> dict[str, int]:
    return dict(_core.op_codes())


def normalise_op(name: str) -> str:
    """`MPI_Isend` / `Isend` / `isend` → `isend` (the binding applies the same rule)."""
    lowered = name.strip().lower()
    return lowered.removeprefix("mpi_")


def record_batches(data: pa.RecordBatch | pa.Table) -> list[pa.RecordBatch]:
    """A table's record batches (the binding takes record batches)."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return [data]
    return [b for b in data.to_batches() if b.num_rows]


class EngineColumns:
    """Accumulates converted batches; `arrays()` gives the dict `_core.replay` takes.
    `comms` may be extended (ids not declared by rows) before `arrays()` is called;
    `capacity` (the expected rows) saves regrowing the columns."""

    def __init__(self, capacity: int = 0, builder: _core.ColumnBuilder | None = None) -> None:
        self.comms: dict[int, list[int]] = {}
        self.unknown_ops: dict[str, int] = {}
        self.rows = 0
        self._builder = builder or _core.ColumnBuilder(capacity)
        self._columns: dict[str, NDArray[np.generic]] | None = None
        if builder is not None:
            self._took(builder)

    @classmethod
    def of_file(cls, path: str | Path) -> EngineColumns:
        """Every row of a trace file, decoded natively (ValueError: damaged or unsupported
        Parquet, negative rank, a column of an unusable type)."""
        return cls(builder=_core.TraceFile(path).load())

    def _took(self, builder: _core.ColumnBuilder) -> None:
        self.rows = builder.rows
        self.unknown_ops = builder.unknown_ops()
        for cid, members in builder.declared_comms():
            self.comms.setdefault(cid, members)

    def add(
        self, batch: pa.RecordBatch | pa.Table, constants: dict[str, int | str] | None = None
    ) -> None:
        """Converts the rows; `constants` are columns absent from `batch` that hold one
        value in all its rows (ValueError: negative rank, a column of an unusable type)."""
        if self._columns is not None:
            raise RuntimeError("EngineColumns.add after arrays()")
        for part in record_batches(batch):
            self._builder.append(part, constants or None)
        self._took(self._builder)

    def arrays(self) -> dict[str, NDArray[np.generic]]:
        import numpy as np

        if self._columns is None:
            self._columns = self._builder.finish()
        out = dict(self._columns)
        ids = sorted(self.comms)
        out["comm_ids"] = np.array(ids, dtype=np.int32)
        lengths = np.array([len(self.comms[i]) for i in ids], dtype=np.int64)
        out["comm_members_offsets"] = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = [m for i in ids for m in self.comms[i]]
        out["comm_members_values"] = np.array(flat, dtype=np.int64)
        return out
