"""A tiny per-rank program writer the synthetic generators share: it hands out request ids
and emits init/finalize, so every generator yields a complete, valid trace."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from tailcast.traces.schema import Op, TraceBuilder


class Program:
    """Emits the calls of `ranks` ranks. Calls take no time; a rank's clock moves only by
    `pause` (a gap before its next call, which the replay spends as compute)."""

    def __init__(self, ranks: int) -> None:
        if ranks < 1:
            raise ValueError("need at least one rank")
        self.ranks = ranks
        self.builder = TraceBuilder()
        self._next_request = [0] * ranks
        self._clock = [0] * ranks
        for r in range(ranks):
            self.call(r, Op.INIT)

    def call(self, rank: int, op: str, **values: object) -> None:
        values.setdefault("comm", 0)
        t = self._clock[rank]
        self.builder.add(rank, op, t_start_ns=t, t_end_ns=t, **values)

    def pause(self, rank: int, ns: int) -> None:
        self._clock[rank] += ns

    def _request(self, rank: int) -> int:
        req = self._next_request[rank]
        self._next_request[rank] += 1
        return req

    def isend(self, rank: int, dst: int, size: int, tag: int = 0, **extra: object) -> int:
        req = self._request(rank)
        self.call(rank, Op.ISEND, peer=dst, tag=tag, send_bytes=size, request=req, **extra)
        return req

    def irecv(self, rank: int, src: int, size: int, tag: int = 0, **extra: object) -> int:
        req = self._request(rank)
        self.call(rank, Op.IRECV, peer=src, tag=tag, recv_bytes=size, request=req, **extra)
        return req

    def recv(self, rank: int, src: int, size: int, tag: int = 0) -> None:
        self.call(rank, Op.RECV, peer=src, tag=tag, recv_bytes=size)

    def waitall(self, rank: int, requests: Sequence[int], **extra: object) -> None:
        if requests:
            self.call(rank, Op.WAITALL, requests=list(requests), **extra)

    def table(self) -> pa.Table:
        for r in range(self.ranks):
            self.call(r, Op.FINALIZE)
        return self.builder.table()
