"""Per-rank DUMPI handle tables (communicators, groups, datatypes, user ops, requests) and the
lookups every DUMPI record needs from them: a communicator's id and members, a datatype's
size, a count's bytes. DUMPI handles are local to each rank, so each rank keeps its own
tables; `HandleLookup` counts what it cannot resolve in the converter's `unsupported`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tailcast.traces.dumpi_format import DumpiBin
from tailcast.traces.dumpi_layouts import COMM_NULL_HANDLE, PREDEFINED_TYPE_SIZES
from tailcast.traces.schema import COMM_NULL

UNKNOWN_COMM_BASE = 2_000_000  # ids of handles never created in the trace


@dataclass
class PendingRequest:
    ident: int
    row: int
    members: list[int]


@dataclass
class RankHandles:
    rank: int
    bin: DumpiBin
    pos: int = 0
    comms: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    groups: dict[int, list[int]] = field(default_factory=dict)
    types: dict[int, int | None] = field(default_factory=dict)
    # User ops (Op_create) → 1 / 0: commutative or not.
    ops: dict[int, int] = field(default_factory=dict)
    requests: dict[int, PendingRequest] = field(default_factory=dict)
    next_request: int = 0
    creations: Counter[int] = field(default_factory=Counter)


@dataclass
class HandleLookup:
    """Resolves handles of any rank; what it cannot resolve is counted in `unsupported`."""

    unsupported: Counter[str]
    unknown_comms: int = 0

    def comm(self, st: RankHandles, handle: int) -> tuple[int, list[int]]:
        if handle in st.comms:
            return st.comms[handle]
        if handle == COMM_NULL_HANDLE:
            return COMM_NULL, []
        self.unsupported["communicator handle never created in the trace"] += 1
        ident = UNKNOWN_COMM_BASE + self.unknown_comms
        self.unknown_comms += 1
        st.comms[handle] = (ident, [])
        return st.comms[handle]

    def size(self, st: RankHandles, dtype: int) -> int | None:
        if dtype in st.types:
            return st.types[dtype]
        table = st.bin.type_sizes
        if table is not None and 0 < dtype < len(table):
            return table[dtype]
        return PREDEFINED_TYPE_SIZES.get(dtype)

    def bytes(self, st: RankHandles, count: int, dtype: int) -> int | None:
        size = self.size(st, dtype)
        if size is None:
            self.unsupported[f"datatype {dtype} of unknown size"] += 1
            return None
        return count * size

    def vbytes(self, st: RankHandles, counts: list[int] | None, dtype: int) -> list[int] | None:
        size = self.size(st, dtype)
        if counts is None:
            return None
        if size is None:
            self.unsupported[f"datatype {dtype} of unknown size"] += 1
            return None
        return [c * size for c in counts]
