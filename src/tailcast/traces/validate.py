"""Trace validation: p2p matching, collective consistency, request completion.

- Point-to-point: per (comm, src, dst, tag) the k-th send of src matches the k-th receive of
  dst (MPI's non-overtaking rule); a receive may not be smaller than its send. Receives with
  MPI_ANY_SOURCE / MPI_ANY_TAG (peer or tag < 0) absorb the sends left over to their rank.
- Collectives: every member of a communicator calls the same sequence of collectives on it,
  with the same root and consistent sizes (type signatures must match in MPI).
- Requests: every isend/irecv request is completed exactly once by a wait/test row.
Violations are typed errors naming rank, seq and op.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tailcast.errors import TailcastError
from tailcast.traces.io import TraceMeta
from tailcast.traces.schema import (
    ALL_OPS,
    COLLECTIVE_LIKE,
    COMM_CREATION,
    COMPLETIONS,
    NONBLOCKING,
    P2P_SEND,
    WORLD,
    Op,
    sorted_trace,
)

MAX_REPORTED = 50


class TraceViolation(TailcastError):
    """One inconsistency in a trace, located at (rank, seq, op)."""

    kind = "violation"

    def __init__(self, rank: int, seq: int, op: str, message: str) -> None:
        self.rank, self.seq, self.op, self.reason = rank, seq, op, message
        super().__init__(f"rank {rank} seq {seq} {op}: {self.kind}: {message}")


class MalformedRow(TraceViolation):
    kind = "malformed row"


class UnmatchedMessage(TraceViolation):
    kind = "unmatched message"


class MessageSizeMismatch(TraceViolation):
    kind = "message truncated"


class CollectiveMismatch(TraceViolation):
    kind = "collective mismatch"


class RequestError(TraceViolation):
    kind = "request error"


class TraceInvalid(TailcastError):
    """The trace has violations (`trace validate` raises it; the first few are listed)."""

    def __init__(self, violations: Sequence[TraceViolation]) -> None:
        self.violations = list(violations)
        first = "; ".join(str(v) for v in self.violations[:3])
        super().__init__(f"{len(self.violations)} violation(s): {first}")


@dataclass
class _Row:
    rank: int
    seq: int
    op: str
    values: dict[str, Any]


def validate_table(table: pa.Table, meta: TraceMeta) -> list[TraceViolation]:
    """All violations found (structure first, then p2p, collectives, requests)."""
    rows = list(_rows(sorted_trace(table)))
    found: list[TraceViolation] = list(_structure(rows, meta.ranks))
    if found:
        return found  # later checks assume sane ranks and seqs
    members = _communicators(rows, meta)
    found += _p2p(rows)
    found += _collectives(rows, members)
    found += _requests(rows)
    return found


def _rows(table: pa.Table) -> Iterator[_Row]:
    cols = table.to_pydict()
    names = [n for n in cols if n not in ("rank", "seq", "op")]
    for i in range(table.num_rows):
        yield _Row(cols["rank"][i], cols["seq"][i], cols["op"][i], {n: cols[n][i] for n in names})


def _structure(rows: list[_Row], ranks: int) -> Iterator[TraceViolation]:
    seen: set[tuple[int, int]] = set()
    for r in rows:
        if not 0 <= r.rank < ranks:
            yield MalformedRow(r.rank, r.seq, r.op, f"rank outside 0..{ranks - 1}")
        elif (r.rank, r.seq) in seen:
            yield MalformedRow(r.rank, r.seq, r.op, "duplicate (rank, seq)")
        elif r.op not in ALL_OPS:
            yield MalformedRow(r.rank, r.seq, r.op, "unknown operation")
        seen.add((r.rank, r.seq))
        if r.op in P2P_SEND | {Op.SENDRECV} and r.values.get("peer") is None:
            # (a receive without a known source is a wildcard; a send needs its destination)
            yield MalformedRow(r.rank, r.seq, r.op, "send without a destination (peer)")
        for col in ("peer", "root", "recv_peer"):
            v = r.values.get(col)
            if v is not None and v >= ranks:
                yield MalformedRow(r.rank, r.seq, r.op, f"{col} {v} outside 0..{ranks - 1}")


def _communicators(rows: list[_Row], meta: TraceMeta) -> dict[int, list[int]]:
    members: dict[int, list[int]] = {WORLD: list(range(meta.ranks))}
    raw = meta.extra.get("comms")
    if raw:
        members.update({int(k): list(v) for k, v in json.loads(raw).items()})
    for r in rows:
        new = r.values.get("new_comm")
        if r.op in COMM_CREATION and new is not None and new >= 0:
            members.setdefault(new, list(r.values.get("comm_members") or []))
    return members


def _p2p(rows: list[_Row]) -> Iterator[TraceViolation]:
    sends: dict[tuple[int, int, int, int], deque[_Row]] = defaultdict(deque)
    recvs: dict[tuple[int, int, int, int], deque[_Row]] = defaultdict(deque)
    wild: dict[int, list[_Row]] = defaultdict(list)
    for r in rows:
        v = r.values
        comm = v.get("comm") or 0
        if r.op in (Op.SEND, Op.ISEND, Op.SENDRECV):
            sends[(comm, r.rank, v["peer"], v.get("tag") or 0)].append(r)
        if r.op in (Op.RECV, Op.IRECV, Op.SENDRECV):
            src = v["recv_peer"] if r.op == Op.SENDRECV else v["peer"]
            tag = (v.get("recv_tag") if r.op == Op.SENDRECV else v.get("tag")) or 0
            if src is None or src < 0 or tag < 0:
                wild[r.rank].append(r)
            else:
                recvs[(comm, src, r.rank, tag)].append(r)
    leftover: dict[int, list[_Row]] = defaultdict(list)
    for key in sorted(set(sends) | set(recvs)):
        s_q, r_q = sends.get(key, deque()), recvs.get(key, deque())
        while s_q and r_q:
            s, rc = s_q.popleft(), r_q.popleft()
            sent, got = s.values.get("send_bytes"), rc.values.get("recv_bytes")
            if sent is not None and got is not None and got < sent:
                yield MessageSizeMismatch(
                    rc.rank,
                    rc.seq,
                    rc.op,
                    f"receives {got} B but rank {s.rank} seq {s.seq} "
                    f"sends {sent} B (comm {key[0]}, tag {key[3]})",
                )
        leftover[key[2]].extend(s_q)
        for rc in r_q:
            yield UnmatchedMessage(
                rc.rank, rc.seq, rc.op, f"no send from rank {key[1]} (comm {key[0]}, tag {key[3]})"
            )
    for dst in sorted(set(leftover) | set(wild)):
        extra_sends, wildcards = leftover.get(dst, []), wild.get(dst, [])
        for s in extra_sends[len(wildcards) :]:
            yield UnmatchedMessage(s.rank, s.seq, s.op, f"no receive posted by rank {dst}")
        for rc in wildcards[len(extra_sends) :]:
            yield UnmatchedMessage(rc.rank, rc.seq, rc.op, "wildcard receive with no send")


def _collectives(rows: list[_Row], members: dict[int, list[int]]) -> Iterator[TraceViolation]:
    calls: dict[tuple[int, int], list[_Row]] = defaultdict(list)
    for r in rows:
        if r.op in COLLECTIVE_LIKE:
            calls[(r.values.get("comm") or 0, r.rank)].append(r)
    comm_ids = sorted({c for c, _ in calls})
    for comm in comm_ids:
        ranks = members.get(comm) or sorted(rk for c, rk in calls if c == comm)
        per_rank = [calls.get((comm, rk), []) for rk in ranks]
        outsiders = sorted(rk for c, rk in calls if c == comm and rk not in ranks)
        for rk in outsiders:
            r = calls[(comm, rk)][0]
            yield CollectiveMismatch(r.rank, r.seq, r.op, f"rank is not a member of comm {comm}")
        n = max(len(seq) for seq in per_rank)
        for k in range(n):
            present = [seq[k] for seq in per_rank if len(seq) > k]
            if len(present) < len(ranks):
                first = present[0]
                missing = [rk for rk, seq in zip(ranks, per_rank, strict=True) if len(seq) <= k]
                yield CollectiveMismatch(
                    first.rank,
                    first.seq,
                    first.op,
                    f"collective #{k} on comm {comm} not called by ranks {missing}",
                )
                return
            problem = _consistency(present, ranks)
            if problem is not None:
                yield problem
                return


def _consistency(group: list[_Row], ranks: list[int]) -> TraceViolation | None:
    """Checks one collective call (one row per member, in communicator-rank order)."""
    ref = group[0]
    for r in group[1:]:
        if r.op != ref.op:
            return CollectiveMismatch(
                r.rank, r.seq, r.op, f"rank {ref.rank} calls {ref.op} at this point"
            )
        if r.values.get("root") != ref.values.get("root"):
            return CollectiveMismatch(
                r.rank,
                r.seq,
                r.op,
                f"root {r.values.get('root')} but rank {ref.rank} uses {ref.values.get('root')}",
            )
    root = ref.values.get("root")
    root_row = next((r for r in group if r.rank == root), None)

    def same(col: str, rows: list[_Row]) -> TraceViolation | None:
        known = [r for r in rows if r.values.get(col) is not None]
        for r in known[1:]:
            if r.values[col] != known[0].values[col]:
                return CollectiveMismatch(
                    r.rank,
                    r.seq,
                    r.op,
                    f"{col} {r.values[col]} but rank {known[0].rank} has {known[0].values[col]}",
                )
        return None

    op = ref.op
    if op in (Op.BCAST, Op.REDUCE, Op.ALLREDUCE, Op.REDUCE_SCATTER_BLOCK):
        return same("send_bytes", group) or same("recv_bytes", group)
    if op in (Op.ALLTOALL, Op.ALLGATHER):
        return same("send_bytes", group) or same("recv_bytes", group)
    if op == Op.GATHER:
        return same("send_bytes", group)
    if op == Op.SCATTER:
        return same("recv_bytes", group)
    if op in (Op.ALLGATHERV, Op.REDUCE_SCATTER):
        return same("recv_counts", group)
    if op == Op.ALLTOALLV:
        return _alltoallv(group)
    if op == Op.GATHERV and root_row is not None:
        return _v_vs_own(root_row, "recv_counts", group, "send_bytes")
    if op == Op.SCATTERV and root_row is not None:
        return _v_vs_own(root_row, "send_counts", group, "recv_bytes")
    return None


def _v_vs_own(root: _Row, list_col: str, group: list[_Row], own: str) -> TraceViolation | None:
    counts = root.values.get(list_col)
    if counts is None:
        return None
    for i, r in enumerate(group):
        mine = r.values.get(own)
        if i < len(counts) and mine is not None and counts[i] != mine:
            return CollectiveMismatch(
                r.rank, r.seq, r.op, f"{own} {mine} but root's {list_col}[{i}] = {counts[i]}"
            )
    return None


def _alltoallv(group: list[_Row]) -> TraceViolation | None:
    for i, r in enumerate(group):
        sc = r.values.get("send_counts")
        if sc is None:
            continue
        for j, peer in enumerate(group):
            rc = peer.values.get("recv_counts")
            if rc is not None and j < len(sc) and i < len(rc) and sc[j] != rc[i]:
                return CollectiveMismatch(
                    r.rank,
                    r.seq,
                    r.op,
                    f"sends {sc[j]} B to comm rank {j}, which expects {rc[i]} B",
                )
    return None


def _requests(rows: list[_Row]) -> Iterator[TraceViolation]:
    open_reqs: dict[tuple[int, int], _Row] = {}
    for r in rows:
        v = r.values
        if r.op in NONBLOCKING:
            req = v.get("request")
            if req is None:
                yield RequestError(r.rank, r.seq, r.op, "nonblocking call without a request id")
            elif (r.rank, req) in open_reqs:
                yield RequestError(r.rank, r.seq, r.op, f"request {req} reused while pending")
            else:
                open_reqs[(r.rank, req)] = r
        elif r.op in COMPLETIONS:
            done = list(v.get("requests") or [])
            if v.get("request") is not None and v["request"] not in done:
                done.append(v["request"])
            for req in done:
                if open_reqs.pop((r.rank, req), None) is None:
                    yield RequestError(
                        r.rank, r.seq, r.op, f"completes request {req}, which is not pending"
                    )
    for (rank, req), r in sorted(open_reqs.items()):
        yield RequestError(rank, r.seq, r.op, f"request {req} is never completed")
