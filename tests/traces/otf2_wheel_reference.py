"""The OTF2 decoding tailcast used before its own reader (tailcast.traces.otf2_import),
through the `otf2` Python bindings: the reference the native reader is compared with
(tests/traces/test_otf2_parity.py) where the `otf2` wheel is installed.

The PyPI `otf2` 3.2 manylinux wheel: Score-P's C library and its Python bindings.

Each MPI region Enter…Leave of a location becomes one row (t_start/t_end from the events,
converted to ns with the clock's timer resolution). Message and collective details come
from the records between them: MpiSend/MpiIsend/MpiRecv/MpiIrecv, MpiIsendComplete,
MpiCollectiveEnd. Score-P reports collective sizes as totals over the communicator; they
are converted to tailcast's per-call convention (tailcast.traces.schema). OTF2's collective
records carry no datatype and no reduction op, so `dtype_bytes` and `commutative` stay null
(the replay's documented default: 1-byte elements, a commutative op). MPI regions with
no tailcast operation (MPI_Comm_rank, nonblocking collectives, …) are counted in
`unsupported`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from tailcast.errors import InputError
from tailcast.traces.io import TraceMeta
from tailcast.traces.schema import Op, TraceBuilder, world_rank

REGION_OPS: dict[str, str] = {
    "MPI_Init": Op.INIT, "MPI_Init_thread": Op.INIT, "MPI_Finalize": Op.FINALIZE,
    "MPI_Send": Op.SEND, "MPI_Ssend": Op.SEND, "MPI_Bsend": Op.SEND, "MPI_Rsend": Op.SEND,
    "MPI_Isend": Op.ISEND, "MPI_Issend": Op.ISEND, "MPI_Recv": Op.RECV, "MPI_Irecv": Op.IRECV,
    "MPI_Sendrecv": Op.SENDRECV, "MPI_Wait": Op.WAIT, "MPI_Waitall": Op.WAITALL,
    "MPI_Waitany": Op.WAITANY, "MPI_Waitsome": Op.WAITSOME, "MPI_Test": Op.TEST,
    "MPI_Testall": Op.TESTALL, "MPI_Testany": Op.TESTANY, "MPI_Testsome": Op.TESTSOME,
    "MPI_Barrier": Op.BARRIER, "MPI_Bcast": Op.BCAST, "MPI_Reduce": Op.REDUCE,
    "MPI_Allreduce": Op.ALLREDUCE, "MPI_Alltoall": Op.ALLTOALL, "MPI_Alltoallv": Op.ALLTOALLV,
    "MPI_Allgather": Op.ALLGATHER, "MPI_Allgatherv": Op.ALLGATHERV, "MPI_Gather": Op.GATHER,
    "MPI_Gatherv": Op.GATHERV, "MPI_Scatter": Op.SCATTER, "MPI_Scatterv": Op.SCATTERV,
    "MPI_Reduce_scatter": Op.REDUCE_SCATTER,
    "MPI_Reduce_scatter_block": Op.REDUCE_SCATTER_BLOCK, "MPI_Comm_split": Op.COMM_SPLIT,
    "MPI_Comm_dup": Op.COMM_DUP, "MPI_Comm_create": Op.COMM_CREATE,
    "MPI_Comm_free": Op.COMM_FREE,
}  # fmt: skip
_UNDEFINED_ROOT = 0xFFFFFFFF
_SELF_BASE = 1_000_000  # ids of per-rank (COMM_SELF-like) communicators


@dataclass
class _Open:
    """An MPI region entered but not yet left on one location."""

    op: str
    t_start: int
    values: dict[str, Any] = field(default_factory=dict)
    completed: list[int] = field(default_factory=list)


class _Otf2Converter:
    def __init__(self, defs: Any, path: Path) -> None:
        self.path = path
        clock = defs.clock_properties
        self.offset = int(clock.global_offset)
        self.ns_per_tick = 1e9 / float(clock.timer_resolution)
        self.rank_of: dict[Any, int] = {}
        for loc in defs.locations:
            m = re.search(r"(\d+)\s*$", str(loc.group.name))
            self.rank_of[loc] = int(m.group(1)) if m else int(loc.group._ref)
        self.ranks = max(self.rank_of.values(), default=-1) + 1
        self.comms: dict[int, tuple[int | None, list[int]]] = {}  # ref -> (id, members)
        for comm in defs.comms:
            self._define_comm(comm)
        self.builder = TraceBuilder()
        self.open: dict[Any, list[_Open]] = {}
        self.irecv_rows: dict[tuple[int, int], int] = {}
        self.unsupported: Counter[str] = Counter()

    def _define_comm(self, comm: Any) -> None:
        group = comm.group
        kind = str(getattr(group, "group_type", ""))
        members = [self.rank_of[m] for m in getattr(group, "members", ()) if m in self.rank_of]
        if "SELF" in kind:
            self.comms[comm._ref] = (None, [])  # one communicator per rank
        elif len(members) == self.ranks and (comm.name == "MPI_COMM_WORLD" or comm.parent is None):
            self.comms[comm._ref] = (0, members)
        else:
            self.comms[comm._ref] = (int(comm._ref) + 1, members)

    def comm_of(self, comm: Any, rank: int) -> tuple[int, list[int]]:
        ident, members = self.comms.get(comm._ref, (None, []))
        if ident is None:
            return _SELF_BASE + int(comm._ref) * max(self.ranks, 1) + rank, [rank]
        return ident, members

    def ns(self, t: int) -> int:
        return round((int(t) - self.offset) * self.ns_per_tick)

    def event(self, loc: Any, ev: Any) -> None:
        kind = type(ev).__name__
        rank = self.rank_of[loc]
        stack = self.open.setdefault(loc, [])
        if kind == "Enter":
            name = str(ev.region.name)
            op = REGION_OPS.get(name)
            if op is None:
                if name.startswith("MPI_"):
                    self.unsupported[name] += 1
                stack.append(_Open("", 0))
            else:
                stack.append(_Open(op, self.ns(ev.time)))
            return
        if kind == "Leave":
            if not stack:
                raise InputError(self.path, f"rank {rank}: Leave without Enter")
            cur = stack.pop()
            if cur.op:
                self._emit(rank, cur, self.ns(ev.time))
            return
        if not stack or not stack[-1].op:
            return
        cur = stack[-1]
        v = cur.values
        if kind in ("MpiSend", "MpiIsend"):
            ident, members = self.comm_of(ev.communicator, rank)
            v.update(comm=ident, peer=world_rank(members, ev.receiver), tag=int(ev.msg_tag),
                     send_bytes=int(ev.msg_length))  # fmt: skip
            if kind == "MpiIsend":
                v["request"] = int(ev.request_id)
        elif kind == "MpiIrecvRequest":
            v["request"] = int(ev.request_id)
        elif kind == "MpiRecv":
            ident, members = self.comm_of(ev.communicator, rank)
            key = "recv_peer" if cur.op == Op.SENDRECV else "peer"
            v.update({"comm": ident, key: world_rank(members, ev.sender),
                      ("recv_tag" if cur.op == Op.SENDRECV else "tag"): int(ev.msg_tag),
                      "recv_bytes": int(ev.msg_length)})  # fmt: skip
        elif kind == "MpiIrecv":
            cur.completed.append(int(ev.request_id))
            self._patch_irecv(rank, ev)
        elif kind == "MpiIsendComplete":
            cur.completed.append(int(ev.request_id))
        elif kind == "MpiCollectiveEnd":
            self._collective(rank, cur, ev)

    def _patch_irecv(self, rank: int, ev: Any) -> None:
        row = self.irecv_rows.pop((rank, int(ev.request_id)), None)
        if row is None:
            return
        ident, members = self.comm_of(ev.communicator, rank)
        cols = self.builder.columns
        cols["peer"][row] = world_rank(members, ev.sender)
        cols["tag"][row] = int(ev.msg_tag)
        cols["recv_bytes"][row] = int(ev.msg_length)
        cols["comm"][row] = ident

    def _collective(self, rank: int, cur: _Open, ev: Any) -> None:
        ident, members = self.comm_of(ev.communicator, rank)
        n = max(len(members), 1)
        sent, got = int(ev.size_sent), int(ev.size_received)
        root = None if int(ev.root) == _UNDEFINED_ROOT else world_rank(members, ev.root)
        op, v = cur.op, cur.values
        v.update(comm=ident, root=root)
        if op == Op.BCAST:
            v["send_bytes"] = got
        elif op == Op.REDUCE:
            v["send_bytes"] = sent
        elif op == Op.ALLREDUCE:
            v["send_bytes"] = sent // n
        elif op in (Op.ALLTOALL, Op.ALLGATHER):
            v.update(send_bytes=sent // n, recv_bytes=got // n)
        elif op == Op.GATHER:
            v.update(send_bytes=sent, recv_bytes=got // n if rank == root else None)
        elif op == Op.SCATTER:
            v.update(send_bytes=sent // n if rank == root else None, recv_bytes=got)
        elif op != Op.BARRIER:
            v.update(send_bytes=sent, recv_bytes=got)  # v-forms: totals only

    def _emit(self, rank: int, cur: _Open, t_end: int) -> None:
        v = cur.values
        v.setdefault("comm", 0)
        if cur.op in (Op.WAIT, Op.TEST) and cur.completed:
            v["request"] = cur.completed[0]
        elif cur.op in (Op.WAITALL, Op.WAITANY, Op.WAITSOME, Op.TESTALL, Op.TESTANY,
                        Op.TESTSOME) and cur.completed:  # fmt: skip
            v["requests"] = list(cur.completed)
        row = len(self.builder)
        self.builder.add(rank, cur.op, t_start_ns=cur.t_start, t_end_ns=t_end, **v)
        if cur.op == Op.IRECV and v.get("request") is not None:
            self.irecv_rows[(rank, int(v["request"]))] = row

    def meta(self) -> TraceMeta:
        comms = {str(i): m for i, m in self.comms.values() if i not in (None, 0)}
        return TraceMeta(
            ranks=self.ranks,
            application=self.path.parent.name,
            source_format="otf2",
            clock="otf2 timer ticks converted to ns since the trace's global offset",
            unsupported=dict(self.unsupported),
            extra={"comms": json.dumps(comms)},
        )


def decode_otf2(path: Path) -> tuple[pa.Table, TraceMeta]:
    """The archive anchored at `path` decoded by the `otf2` wheel, in this process."""
    import otf2  # type: ignore[import-untyped]

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such OTF2 anchor file")
    # Every event record takes at least one byte of an event file: a reader yielding more
    # events than that is decoding garbage of a damaged archive, which must end as an error
    # instead of growing without bound.
    # (Event files sit in the directory named like the anchor; none found: no bound.)
    most = sum(f.stat().st_size for f in path.with_suffix("").rglob("*.evt")) or float("inf")
    try:
        with otf2.reader.open(str(path)) as reader:
            conv = _Otf2Converter(reader.definitions, path)
            for n, (loc, ev) in enumerate(reader.events):
                if n >= most:
                    raise InputError(path, f"more events than event-file bytes ({most:.0f})")
                conv.event(loc, ev)
    except (InputError, MemoryError):
        raise
    except Exception as exc:  # the bindings raise their own error types for bad archives
        raise InputError(path, f"unreadable OTF2 archive ({type(exc).__name__}: {exc})") from exc
    try:
        table = conv.builder.table()
    except (OverflowError, pa.ArrowException) as exc:  # damaged numbers beyond int64 (fuzzing)
        raise InputError(path, f"decoded values do not fit the trace schema ({exc})") from exc
    return table, conv.meta()
