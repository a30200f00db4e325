"""The Python TiT parser tailcast used before the native one (crates/trace-formats/src/tit/
parse.rs): kept as the reference the native parser is checked against, line by line.
Semantics: tailcast.traces.tit_import's docstring."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from tailcast.errors import InputError
from tailcast.traces.schema import Op, TraceBuilder

DEFAULT_FLOPS_PER_S = 1e9
# SimGrid datatype ids → sizes in bytes (smpi_datatype.cpp, ids 0..24).
TYPE_SIZES: dict[int, int] = {
    0: 8, 1: 4, 2: 1, 3: 2, 4: 8, 5: 4, 6: 1, 7: 8, 8: 1, 9: 1, 10: 2, 11: 4, 12: 8, 13: 8,
    14: 16, 15: 4, 16: 1, 17: 1, 18: 2, 19: 4, 20: 8, 21: 1, 22: 2, 23: 4, 24: 8,
}  # fmt: skip


@dataclass
class _RankState:
    type_size: int = 1
    clock_ns: float = 0.0
    next_request: int = 0
    pending: dict[tuple[int, int, int], deque[int]] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)  # pending requests in creation order


class TitParser:
    """Parses TiT lines of any number of ranks into one trace."""

    def __init__(self, ranks: int, flops_per_s: float = DEFAULT_FLOPS_PER_S) -> None:
        self.ranks = ranks
        self.ns_per_flop = 1e9 / flops_per_s
        self.builder = TraceBuilder()
        self.states: dict[int, _RankState] = {}
        self.unsupported: Counter[str] = Counter()

    def parse_line(self, text: str, path: Path, line: int, expect_rank: int | None) -> None:
        tokens = text.split()
        if not tokens or tokens[0].startswith("#"):
            return
        try:
            rank = int(tokens[0])
        except ValueError:
            msg = f"expected '<rank> <action> …', got {text.strip()!r}"
            raise InputError(path, msg, line) from None
        if len(tokens) < 2:
            raise InputError(path, "missing action after rank", line)
        if not 0 <= rank < self.ranks or (expect_rank is not None and rank != expect_rank):
            raise InputError(path, f"rank {rank} does not belong here", line)
        try:
            self._action(rank, tokens[1], tokens[2:])
        except (ValueError, IndexError) as exc:
            raise InputError(path, f"bad arguments for {tokens[1]!r}: {exc}", line) from None

    def _dt(self, state: _RankState, args: list[str], index: int) -> int:
        if len(args) > index:
            ident = int(args[index])
            if ident not in TYPE_SIZES:
                raise ValueError(f"unknown SimGrid datatype id {ident}")
            return TYPE_SIZES[ident]
        return state.type_size

    def _action(self, rank: int, name: str, a: list[str]) -> None:
        st = self.states.setdefault(rank, _RankState())
        n = self.ranks
        now = round(st.clock_ns)

        def add(op: str, **values: object) -> None:
            self.builder.add(rank, op, t_start_ns=now, t_end_ns=now, comm=0, **values)

        if name == "init":
            st.type_size = 8 if a else 1  # MPE (double) vs TAU (byte) default
            add(Op.INIT)
        elif name == "finalize":
            add(Op.FINALIZE)
        elif name in ("compute", "sleep"):
            amount = float(a[0])
            if amount < 0:
                raise ValueError("negative duration")
            st.clock_ns += amount * (self.ns_per_flop if name == "compute" else 1e9)
        elif name in ("send", "isend", "recv", "irecv"):
            peer, tag = int(a[0]), int(a[1])
            size = int(float(a[2])) * self._dt(st, a, 3)
            sending = name in ("send", "isend")
            request = None
            if name[0] == "i":
                request = st.next_request
                st.next_request += 1
                key = (rank, peer, tag) if sending else (peer, rank, tag)
                st.pending.setdefault(key, deque()).append(request)
                st.order.append(request)
            add(
                name, peer=peer, tag=tag, request=request,
                send_bytes=size if sending else None, recv_bytes=None if sending else size,
            )  # fmt: skip
        elif name == "wait":
            add(Op.WAIT, request=self._find(st, a))
        elif name == "test":
            add(Op.TEST)  # its outcome depends on timing; a later wait completes the request
        elif name == "waitall":
            done, st.order = st.order, []
            st.pending.clear()
            add(Op.WAITALL, requests=done)
        elif name == "barrier":
            add(Op.BARRIER)
        elif name == "bcast":
            root = int(a[1]) if len(a) > 1 else 0
            dt = self._dt(st, a, 2)
            add(Op.BCAST, root=root, send_bytes=int(float(a[0])) * dt, dtype_bytes=dt)
        elif name == "reduce":
            root = int(a[2]) if len(a) > 2 else 0
            dt = self._dt(st, a, 3)
            add(Op.REDUCE, root=root, send_bytes=int(float(a[0])) * dt, dtype_bytes=dt)
        elif name == "allreduce":
            dt = self._dt(st, a, 2)
            add(Op.ALLREDUCE, send_bytes=int(float(a[0])) * dt, dtype_bytes=dt)
        elif name in ("alltoall", "allgather"):
            rdt = self._dt(st, a, 3)
            s, r = int(float(a[0])) * self._dt(st, a, 2), int(float(a[1])) * rdt
            add(name, send_bytes=s, recv_bytes=r, dtype_bytes=rdt)
        elif name in ("gather", "scatter"):
            root = int(a[2]) if len(a) > 2 else 0
            rdt = self._dt(st, a, 4)
            s, r = int(float(a[0])) * self._dt(st, a, 3), int(float(a[1])) * rdt
            add(name, root=root, send_bytes=s, recv_bytes=r, dtype_bytes=rdt)
        elif name == "alltoallv":
            dt1, dt2 = self._dt(st, a, 2 + 2 * n), self._dt(st, a, 3 + 2 * n)
            sc = [int(x) * dt1 for x in _need(a[1 : 1 + n], n)]
            rc = [int(x) * dt2 for x in _need(a[2 + n : 2 + 2 * n], n)]
            add(name, send_counts=sc, recv_counts=rc, send_bytes=sum(sc), recv_bytes=sum(rc))
        elif name in ("gatherv", "allgatherv"):
            counts = _need(a[1 : 1 + n], n)
            tail = a[1 + n :]
            root = int(tail[0]) if name == "gatherv" and tail else 0
            dt = self._dt(st, tail, 1 if name == "gatherv" else 0)
            rc = [int(x) * dt for x in counts]
            extra = {"root": root} if name == "gatherv" else {}
            add(name, send_bytes=int(float(a[0])) * dt, recv_counts=rc,
                recv_bytes=sum(rc), **extra)  # fmt: skip
        elif name == "scatterv":
            sc = [int(x) * st.type_size for x in _need(a[0:n], n)]
            root = int(a[n + 1]) if len(a) > n + 1 else 0
            add(name, root=root, send_counts=sc, send_bytes=sum(sc),
                recv_bytes=int(float(a[n])) * st.type_size)  # fmt: skip
        elif name == "reducescatter":
            dt = self._dt(st, a, n + 1)
            rc = [int(x) * dt for x in _need(a[0:n], n)]
            float(a[n])  # the computation amount must be present
            add(Op.REDUCE_SCATTER, recv_counts=rc, send_bytes=sum(rc), recv_bytes=rc[rank],
                dtype_bytes=dt)  # fmt: skip
        elif name in ("comm_split", "comm_dup"):
            add(name)
        else:
            self.unsupported[name] += 1

    def _find(self, st: _RankState, a: list[str]) -> int | None:
        """The pending request a wait/test names by (src, dst, tag), else the oldest."""
        if len(a) >= 3:
            key = (int(a[0]), int(a[1]), int(a[2]))
            queue = st.pending.get(key)
            if not queue:
                return None
            req = queue.popleft()
        elif st.order:
            req = st.order[0]
            for queue in st.pending.values():
                if queue and queue[0] == req:
                    queue.popleft()
        else:
            return None
        st.order.remove(req)
        return req

    def result(self) -> tuple[pa.Table, Counter[str]]:
        return self.builder.table(), self.unsupported


def _need(values: list[str], n: int) -> list[str]:
    if len(values) != n:
        raise ValueError(f"expected {n} per-rank counts, got {len(values)}")
    return values
