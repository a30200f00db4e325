"""TRACE Parquet columns → the compact numpy columns the engine reads (`_core.replay`).

The conversion itself is in the binding (crates/replay-py/src/ingest.rs): a trace file is
decoded natively (`_core.TraceFile`, crates/parquet-lite) and each column is filled and cast
in one pass. Null encodings the engine expects: peer null → -2 (MPI_PROC_NULL; -1 stays
ANY_SOURCE), root/request/iteration null → -1, tag/comm/bytes/times null → 0,
recv_peer/recv_tag null → SAME (= peer / tag). List columns become CSR pairs
`<name>_offsets` / `<name>_values` (offsets empty when every list of the column is empty).
Communicator members come from comm_split/dup/create rows (`new_comm`, `comm_members`).
The file is decoded a bounded number of rows at a time, so only the compact arrays stay in
memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tailcast import _core

if TYPE_CHECKING:  # numpy loads only when the columns are built (not for a streamed replay)
    import numpy as np
    from numpy.typing import NDArray

SAME = -(2**31)  # the smallest int32


def op_code_table() -> dict[str, int]:
    return dict(_core.op_codes())


def normalise_op(name: str) -> str:
    """`MPI_Isend` / `Isend` / `isend` → `isend` (the binding applies the same rule)."""
    lowered = name.strip().lower()
    return lowered.removeprefix("mpi_")


class EngineColumns:
    """A trace's converted rows (`_core.TraceFile.load`); `arrays()` gives the dict
    `_core.replay` takes. `comms` may be extended (ids not declared by rows) before
    `arrays()` is called."""

    def __init__(self, builder: _core.ColumnBuilder) -> None:
        self.rows = builder.rows
        self.unknown_ops: dict[str, int] = builder.unknown_ops()
        self.comms: dict[int, list[int]] = {}
        for cid, members in builder.declared_comms():
            self.comms.setdefault(cid, members)
        self._builder = builder
        self._columns: dict[str, NDArray[np.generic]] | None = None

    @classmethod
    def of_file(cls, path: str | Path) -> EngineColumns:
        """Every row of a trace file, decoded natively (ValueError: damaged or unsupported
        Parquet, negative rank, a column of an unusable type)."""
        return cls(_core.TraceFile(path).load())

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
