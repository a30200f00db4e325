"""OTF2 (Score-P) import: archive → tailcast trace rows, in this process.

The archive is read by tailcast's own OTF2 reader, `tailcast._core.read_otf2` (Rust,
crates/trace-formats/src/otf2): it decodes the anchor file, the global definitions, each
location's mapping tables and its event file, checks every length and count against the
bytes present, and gives the definitions and the MPI events in time order. A damaged
archive is a ValueError((file, byte offset, what was expected)), an InputError here.

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

from tailcast._core import read_otf2
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
_UNDEFINED = 0xFFFFFFFF  # OTF2_UNDEFINED_UINT32: no root, no parent communicator
_SELF_BASE = 1_000_000  # ids of per-rank (COMM_SELF-like) communicators
# Event record ids (OTF2's otf2_events_int.h), as read_otf2 gives them.
ENTER, LEAVE, MPI_SEND, MPI_ISEND, MPI_ISEND_COMPLETE = 12, 13, 14, 15, 16
MPI_IRECV_REQUEST, MPI_RECV, MPI_IRECV, MPI_COLLECTIVE_END = 17, 18, 19, 23
# OTF2_GroupType: members are locations (LOCATIONS, COMM_LOCATIONS), ranks into the
# paradigm's COMM_LOCATIONS group (COMM_GROUP), or none (COMM_SELF).
GROUP_LOCATIONS, GROUP_COMM_LOCATIONS, GROUP_COMM_GROUP, GROUP_COMM_SELF = 1, 4, 5, 6


@dataclass
class _Open:
    """An MPI region entered but not yet left on one location."""

    op: str
    t_start: int
    values: dict[str, Any] = field(default_factory=dict)
    completed: list[int] = field(default_factory=list)


class _Otf2Converter:
    def __init__(self, archive: dict[str, Any], path: Path) -> None:
        self.path = path
        self.strings: dict[int, str] = archive["strings"]
        self.regions: dict[int, int] = archive["regions"]
        resolution, offset = archive["clock"]
        self.offset: int = offset
        if resolution == 0:
            raise InputError(path, "unreadable OTF2 archive (timer resolution 0)")
        self.ns_per_tick = 1e9 / float(resolution)
        groups_of_locations: dict[int, int] = archive["location_groups"]
        self.rank_of: list[int] = []  # by location index
        rank_of_location: dict[int, int] = {}
        for loc, group in archive["locations"]:
            if group not in groups_of_locations:
                raise InputError(path, f"location {loc}: undefined location group {group}")
            m = re.search(r"(\d+)\s*$", self.strings.get(groups_of_locations[group], ""))
            rank_of_location[loc] = int(m.group(1)) if m else group
            self.rank_of.append(rank_of_location[loc])
        self.ranks = max(self.rank_of, default=-1) + 1
        members = self._group_members(archive["groups"], rank_of_location)
        self.comms: dict[int, tuple[int | None, list[int]]] = {}  # id -> (tailcast id, members)
        for ident, name, group, parent in archive["comms"]:
            if group not in members:
                raise InputError(path, f"communicator {ident}: undefined group {group}")
            self._define_comm(ident, self.strings.get(name), parent, *members[group])
        self.builder = TraceBuilder()
        self.open: dict[int, list[_Open]] = {}
        self.irecv_rows: dict[tuple[int, int], int] = {}
        self.unsupported: Counter[str] = Counter()

    def _group_members(
        self, groups: list[tuple[int, int, int, list[int]]], rank_of_location: dict[int, int]
    ) -> dict[int, tuple[bool, list[int]]]:
        """Group id -> (is COMM_SELF, world ranks of its members). A COMM_GROUP lists ranks
        into the last COMM_LOCATIONS group of its paradigm defined before it."""
        out: dict[int, tuple[bool, list[int]]] = {}
        comm_locations: dict[int, list[int]] = {}  # paradigm -> location ids
        for ident, kind, paradigm, refs in groups:
            if kind == GROUP_COMM_GROUP:
                if paradigm not in comm_locations:
                    raise InputError(self.path, f"group {ident}: no locations group to index")
                locs = comm_locations[paradigm]
                if any(r >= len(locs) for r in refs):
                    raise InputError(self.path, f"group {ident}: member beyond its locations")
                refs = [locs[r] for r in refs]
            elif kind == GROUP_COMM_LOCATIONS:
                comm_locations[paradigm] = refs
            located = kind in (GROUP_LOCATIONS, GROUP_COMM_LOCATIONS, GROUP_COMM_GROUP)
            ranks = [rank_of_location[r] for r in refs if r in rank_of_location] if located else []
            out[ident] = (kind == GROUP_COMM_SELF, ranks)
        return out

    def _define_comm(
        self, ident: int, name: str | None, parent: int, is_self: bool, members: list[int]
    ) -> None:
        if is_self:
            self.comms[ident] = (None, [])  # one communicator per rank
        elif len(members) == self.ranks and (name == "MPI_COMM_WORLD" or parent == _UNDEFINED):
            self.comms[ident] = (0, members)
        else:
            self.comms[ident] = (ident + 1, members)

    def comm_of(self, comm: int, rank: int) -> tuple[int, list[int]]:
        ident, members = self.comms.get(comm, (None, []))
        if ident is None:
            return _SELF_BASE + comm * max(self.ranks, 1) + rank, [rank]
        return ident, members

    def ns(self, t: int) -> int:
        return round((t - self.offset) * self.ns_per_tick)

    def region_name(self, region: int) -> str:
        name = self.strings.get(self.regions.get(region, _UNDEFINED))
        if name is None:
            raise InputError(self.path, f"unreadable OTF2 archive (undefined region {region})")
        return name

    def event(self, loc: int, kind: int, time: int, f: tuple[int, int, int, int, int]) -> None:
        rank = self.rank_of[loc]
        stack = self.open.setdefault(loc, [])
        if kind == ENTER:
            name = self.region_name(f[0])
            op = REGION_OPS.get(name)
            if op is None:
                if name.startswith("MPI_"):
                    self.unsupported[name] += 1
                stack.append(_Open("", 0))
            else:
                stack.append(_Open(op, self.ns(time)))
            return
        if kind == LEAVE:
            if not stack:
                raise InputError(self.path, f"rank {rank}: Leave without Enter")
            cur = stack.pop()
            if cur.op:
                self._emit(rank, cur, self.ns(time))
            return
        if not stack or not stack[-1].op:
            return
        cur = stack[-1]
        v = cur.values
        if kind in (MPI_SEND, MPI_ISEND):
            ident, members = self.comm_of(f[1], rank)
            v.update(comm=ident, peer=world_rank(members, f[0]), tag=f[2], send_bytes=f[3])
            if kind == MPI_ISEND:
                v["request"] = f[4]
        elif kind == MPI_IRECV_REQUEST:
            v["request"] = f[0]
        elif kind == MPI_RECV:
            ident, members = self.comm_of(f[1], rank)
            key = "recv_peer" if cur.op == Op.SENDRECV else "peer"
            v.update({"comm": ident, key: world_rank(members, f[0]),
                      ("recv_tag" if cur.op == Op.SENDRECV else "tag"): f[2],
                      "recv_bytes": f[3]})  # fmt: skip
        elif kind == MPI_IRECV:
            cur.completed.append(f[4])
            self._patch_irecv(rank, f)
        elif kind == MPI_ISEND_COMPLETE:
            cur.completed.append(f[0])
        elif kind == MPI_COLLECTIVE_END:
            self._collective(rank, cur, f)

    def _patch_irecv(self, rank: int, f: tuple[int, int, int, int, int]) -> None:
        row = self.irecv_rows.pop((rank, f[4]), None)
        if row is None:
            return
        ident, members = self.comm_of(f[1], rank)
        cols = self.builder.columns
        cols["peer"][row] = world_rank(members, f[0])
        cols["tag"][row] = f[2]
        cols["recv_bytes"][row] = f[3]
        cols["comm"][row] = ident

    def _collective(self, rank: int, cur: _Open, f: tuple[int, int, int, int, int]) -> None:
        _, comm, coll_root, sent, got = f
        ident, members = self.comm_of(comm, rank)
        n = max(len(members), 1)
        root = None if coll_root == _UNDEFINED else world_rank(members, coll_root)
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


def import_otf2(path: Path) -> tuple[pa.Table, TraceMeta]:
    """Reads the OTF2 archive whose anchor file is `path` (`traces.otf2`)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such OTF2 anchor file")
    try:
        archive = read_otf2(path)
    except ValueError as exc:
        file, offset, what = exc.args
        raise InputError(path, f"unreadable OTF2 archive ({file} byte {offset}: {what})") from None
    conv = _Otf2Converter(archive, path)
    for loc, kind, time, *fields in archive["events"]:
        conv.event(loc, kind, time, tuple(fields))
    try:
        table = conv.builder.table()
    except (OverflowError, pa.ArrowException) as exc:  # damaged numbers beyond int64 (fuzzing)
        raise InputError(path, f"decoded values do not fit the trace schema ({exc})") from exc
    return table, conv.meta()
