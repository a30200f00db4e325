"""The per-call trace schema: the MPI operations tailcast knows and what each column means.

One row per MPI call of one rank (DESIGN.md "Data": traces). The Arrow schema itself is
`tailcast.store.schemas.TRACE`; this module names the operations and builds tables.

Column conventions (all ranks are MPI_COMM_WORLD ranks, all sizes bytes = count x type size):
- p2p send/isend: `peer` = destination, `send_bytes`, `tag`; recv/irecv: `peer` = source
  (the actual one when the call used MPI_ANY_SOURCE and the status was seen), `recv_bytes`.
- sendrecv: `peer`/`tag`/`send_bytes` for the send half, `recv_peer`/`recv_tag`/`recv_bytes`
  for the receive half.
- Nonblocking calls carry a per-rank `request` id. Completion calls name the requests they
  completed: wait/test/waitany/testany in `request`, waitall/waitsome/testall/testsome in
  `requests` (a test that completed nothing has neither).
- Collectives follow the MPI argument convention (this is also OSU's size convention):
  bcast/reduce/allreduce/barrier: `send_bytes` = the message (vector) size on every rank;
  alltoall/allgather/gather/scatter: `send_bytes`/`recv_bytes` = per-peer block;
  the v-forms: `send_counts`/`recv_counts` = bytes per communicator rank, and
  `send_bytes`/`recv_bytes` = their sums (own contribution for allgatherv/gatherv send);
  reduce_scatter: `recv_counts` per rank, `send_bytes` = their sum, `recv_bytes` = own block;
  reduce_scatter_block: `recv_bytes` = the block, `send_bytes` = block x comm size.
  `root` is a world rank.
- comm_split/dup/create: `comm` = parent, `new_comm` = the new communicator's id (ids are
  global: the same id on every member; 0 = MPI_COMM_WORLD, -1 = MPI_COMM_NULL result),
  `comm_members` = its world ranks in communicator-rank order. comm_free: `comm`.
- Collectives with a datatype: `dtype_bytes` = MPI_Type_size of it (the receive type where
  the send side has none), so the replay judges Open MPI's fallbacks on element counts
  (count = bytes / dtype_bytes); reductions: `commutative` = 1 / 0 for the op. Null: not
  recorded (formats without them); the replay then takes 1-byte elements and a
  commutative op (OSU's MPI_CHAR / MPI_SUM).
- `iteration` marks benchmark iterations (OSU-pattern traces) so replay can report
  per-iteration latency; null otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pyarrow as pa

from tailcast.store.schemas import TRACE

WORLD = 0
COMM_NULL = -1


class Op(StrEnum):
    """Every MPI operation a trace row may hold."""

    INIT = "init"
    FINALIZE = "finalize"
    SEND = "send"
    ISEND = "isend"
    RECV = "recv"
    IRECV = "irecv"
    SENDRECV = "sendrecv"
    WAIT = "wait"
    WAITALL = "waitall"
    WAITANY = "waitany"
    WAITSOME = "waitsome"
    TEST = "test"
    TESTALL = "testall"
    TESTANY = "testany"
    TESTSOME = "testsome"
    BARRIER = "barrier"
    BCAST = "bcast"
    REDUCE = "reduce"
    ALLREDUCE = "allreduce"
    ALLTOALL = "alltoall"
    ALLTOALLV = "alltoallv"
    ALLGATHER = "allgather"
    ALLGATHERV = "allgatherv"
    GATHER = "gather"
    GATHERV = "gatherv"
    SCATTER = "scatter"
    SCATTERV = "scatterv"
    REDUCE_SCATTER = "reduce_scatter"
    REDUCE_SCATTER_BLOCK = "reduce_scatter_block"
    COMM_SPLIT = "comm_split"
    COMM_DUP = "comm_dup"
    COMM_CREATE = "comm_create"
    COMM_FREE = "comm_free"


ALL_OPS: frozenset[str] = frozenset(op.value for op in Op)
P2P_SEND: frozenset[str] = frozenset({Op.SEND, Op.ISEND})
NONBLOCKING: frozenset[str] = frozenset({Op.ISEND, Op.IRECV})
COMPLETIONS: frozenset[str] = frozenset(
    {Op.WAIT, Op.WAITALL, Op.WAITANY, Op.WAITSOME, Op.TEST, Op.TESTALL, Op.TESTANY, Op.TESTSOME}
)
ROOTED: frozenset[str] = frozenset(
    {Op.BCAST, Op.REDUCE, Op.GATHER, Op.GATHERV, Op.SCATTER, Op.SCATTERV}
)
COLLECTIVES: frozenset[str] = frozenset(
    {
        Op.BARRIER,
        Op.BCAST,
        Op.REDUCE,
        Op.ALLREDUCE,
        Op.ALLTOALL,
        Op.ALLTOALLV,
        Op.ALLGATHER,
        Op.ALLGATHERV,
        Op.GATHER,
        Op.GATHERV,
        Op.SCATTER,
        Op.SCATTERV,
        Op.REDUCE_SCATTER,
        Op.REDUCE_SCATTER_BLOCK,
    }
)
COMM_CREATION: frozenset[str] = frozenset({Op.COMM_SPLIT, Op.COMM_DUP, Op.COMM_CREATE})
# Communicator management is collective over the parent communicator too.
COLLECTIVE_LIKE: frozenset[str] = COLLECTIVES | COMM_CREATION

COLUMNS: tuple[str, ...] = tuple(TRACE.names)


@dataclass
class TraceBuilder:
    """Accumulates rows column-wise (fast for millions of rows) and yields a TRACE table.

    `seq` is assigned per rank in call order unless given."""

    columns: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in COLUMNS})
    _next_seq: dict[int, int] = field(default_factory=dict)

    def add(self, rank: int, op: str, **values: Any) -> int:
        """Appends one call of `rank`; returns its seq."""
        seq = values.pop("seq", None)
        if seq is None:
            seq = self._next_seq.get(rank, 0)
        self._next_seq[rank] = seq + 1
        cols = self.columns
        cols["rank"].append(rank)
        cols["seq"].append(seq)
        cols["op"].append(str(op))
        for name in COLUMNS[3:]:
            cols[name].append(values.pop(name, None))
        if values:
            raise KeyError(f"unknown trace columns {sorted(values)}")
        return int(seq)

    def __len__(self) -> int:
        return len(self.columns["rank"])

    def table(self) -> pa.Table:
        return pa.Table.from_pydict(self.columns, schema=TRACE)


def world_rank(members: list[int], comm_rank: int) -> int:
    """The world rank of `comm_rank` in a communicator of `members` (itself if outside;
    trace formats store ranks relative to the call's communicator)."""
    r = int(comm_rank)
    return members[r] if 0 <= r < len(members) else r


def sorted_trace(table: pa.Table) -> pa.Table:
    """Rows ordered by (rank, seq): the order readers and the replay engine expect."""
    return table.sort_by([("rank", "ascending"), ("seq", "ascending")])


def op_names(values: Iterable[str]) -> list[str]:
    """The values that are not known operations (for reporting)."""
    return sorted({v for v in values if v not in ALL_OPS})
