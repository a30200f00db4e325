"""DUMPI call records → tailcast trace rows (tailcast.traces.schema conventions).

DUMPI stores handles local to each rank (communicators, groups, datatypes, requests) and
ranks relative to the call's communicator. This converter replays each rank's records in
order, keeping per-rank handle tables, and maps everything to world ranks and global ids:
- communicators: 0 = MPI_COMM_WORLD, MPI_COMM_SELF = `SELF_BASE + rank`, a created one gets
  the same id on every member — keyed by (parent id, how many creations the rank has made on
  the parent, members). MPI_Comm_split needs every member's color and key, so a rank whose
  next record is a split waits until all members of the parent reached that split;
- datatypes: predefined sizes from the file's own size record, derived ones from their
  constructors (contiguous, vector, indexed, struct, dup, MPI_Type_size); an unknown size
  leaves the bytes null and is counted in `unsupported`;
- requests: every isend/irecv gets a fresh per-rank id (DUMPI reuses handles), completions
  name it; statuses fill in the source/tag of MPI_ANY_SOURCE/MPI_ANY_TAG receives.
Calls without a tailcast operation are counted per MPI name in `unsupported`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tailcast.traces.dumpi_collectives import collective_row, track_group, track_type
from tailcast.traces.dumpi_format import DumpiBin, DumpiFormatError, Record, Status
from tailcast.traces.dumpi_handles import HandleLookup, PendingRequest, RankHandles
from tailcast.traces.dumpi_layouts import (
    ANY_SOURCE,
    ANY_TAG,
    COMM_SELF_HANDLE,
    COMM_WORLD_HANDLE,
    REQUEST_NULL_HANDLE,
)
from tailcast.traces.schema import COMM_NULL, WORLD, Op, TraceBuilder, world_rank

SELF_BASE = 1_000_000  # ids of MPI_COMM_SELF (one per rank)
INT64_LIMIT = 1 << 63

SEND_OPS = {name: Op.SEND for name in ("Send", "Bsend", "Ssend", "Rsend")} | {
    name: Op.ISEND for name in ("Isend", "Ibsend", "Issend", "Irsend")
}
SIMPLE_OPS = {"Init": Op.INIT, "Init_thread": Op.INIT, "Finalize": Op.FINALIZE,
              "Barrier": Op.BARRIER}  # fmt: skip
TYPE_CTORS = {"Type_contiguous", "Type_vector", "Type_hvector", "Type_indexed",
              "Type_hindexed", "Type_struct", "Type_dup", "Type_size"}  # fmt: skip


class DumpiConverter:
    def __init__(self, bins: list[DumpiBin]) -> None:
        n = len(bins)
        self.world = list(range(n))
        self.ranks = [RankHandles(r, b) for r, b in enumerate(bins)]
        for st in self.ranks:
            st.comms[COMM_WORLD_HANDLE] = (WORLD, self.world)
            st.comms[COMM_SELF_HANDLE] = (SELF_BASE + st.rank, [st.rank])
        self.members: dict[int, list[int]] = {WORLD: self.world}
        self.comm_ids: dict[tuple[Any, ...], int] = {}
        self.splits: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}
        self.builder = TraceBuilder()
        self.unsupported: Counter[str] = Counter()
        self.handles = HandleLookup(self.unsupported)
        self.t0 = min((_times(r)[0] for b in bins for r in b.records[:1]), default=0)
        self.partial = False

    def run(self) -> None:
        """Advances every rank as far as it can; repeats until all are done. If ranks stay
        blocked on a split (a truncated rank never reaches it), splits resolve with the
        members that did."""
        while True:
            progress = False
            for st in self.ranks:
                while st.pos < len(st.bin.records):
                    if not self._record(st, st.bin.records[st.pos]):
                        break
                    st.pos += 1
                    progress = True
            if all(st.pos >= len(st.bin.records) for st in self.ranks):
                return
            if not progress:
                self.partial = True

    # -- helpers ---------------------------------------------------------------------------
    def _add(self, st: RankHandles, rec: Record, op: str, **values: Any) -> int:
        for col in ("send_bytes", "recv_bytes", "send_counts", "recv_counts"):
            v = values.get(col)
            items: list[int] = v if isinstance(v, list) else [] if v is None else [v]
            if any(abs(x) >= INT64_LIMIT for x in items):
                msg = f"byte offset {rec.offset} ({rec.name}): {col} {v} out of range"
                raise DumpiFormatError(st.bin.path, msg)
        start, end = _times(rec)
        row = len(self.builder)
        values.setdefault("comm", WORLD)
        self.builder.add(st.rank, op, t_start_ns=start - self.t0, t_end_ns=end - self.t0,
                         **values)  # fmt: skip
        return row

    def _new_request(self, st: RankHandles, handle: int, row: int, members: list[int]) -> int:
        ident = st.next_request
        st.next_request += 1
        st.requests[handle] = PendingRequest(ident, row, members)
        return ident

    def _complete(self, st: RankHandles, handle: int, status: Status | None) -> int | None:
        pending = st.requests.pop(handle, None)
        if pending is None:
            if handle != REQUEST_NULL_HANDLE:
                self.unsupported["completion of a request the trace never started"] += 1
            return None
        cols = self.builder.columns
        if status is not None and cols["op"][pending.row] == Op.IRECV:
            if cols["peer"][pending.row] == ANY_SOURCE:
                cols["peer"][pending.row] = world_rank(pending.members, status.source)
            if cols["tag"][pending.row] == ANY_TAG and status.tag is not None:
                cols["tag"][pending.row] = status.tag
        return pending.ident

    # -- records ---------------------------------------------------------------------------
    def _record(self, st: RankHandles, rec: Record) -> bool:
        """Converts one record; False when it must wait for other ranks (a split)."""
        name, a = rec.name, rec.args
        if name in SIMPLE_OPS:
            ident = self.handles.comm(st, a["comm"])[0] if "comm" in a else WORLD
            self._add(st, rec, SIMPLE_OPS[name], comm=ident)
        elif name in SEND_OPS:
            ident, members = self.handles.comm(st, a["comm"])
            sent = self.handles.bytes(st, a["count"], a["datatype"])
            peer = world_rank(members, a["dest"])
            row = self._add(st, rec, SEND_OPS[name], comm=ident, peer=peer, tag=a["tag"],
                            send_bytes=sent)  # fmt: skip
            if "request" in a:
                req = self._new_request(st, a["request"], row, members)
                self.builder.columns["request"][row] = req
        elif name in ("Recv", "Irecv"):
            self._recv(st, rec)
        elif name in ("Sendrecv", "Sendrecv_replace"):
            self._sendrecv(st, rec)
        elif name in ("Wait", "Test", "Waitany", "Testany", "Waitall", "Testall", "Waitsome",
                      "Testsome"):  # fmt: skip
            self._completion(st, rec)
        elif name in ("Comm_dup", "Comm_create", "Comm_split"):
            return self._comm_create(st, rec)
        elif name == "Comm_free":
            ident = self.handles.comm(st, a["comm"])[0]
            st.comms.pop(a["comm"], None)
            self._add(st, rec, Op.COMM_FREE, comm=ident)
        else:
            values = collective_row(self.handles, st, rec)
            if values is not None:
                op = values.pop("op")
                self._add(st, rec, op, **values)
            else:
                self._bookkeeping(st, rec)
                self.unsupported[f"MPI_{name}"] += 1
        return True

    def _recv(self, st: RankHandles, rec: Record) -> None:
        a = rec.args
        ident, members = self.handles.comm(st, a["comm"])
        source, tag = a["source"], a["tag"]
        status = _first(a.get("status"))
        if status is not None and rec.name == "Recv":
            if source == ANY_SOURCE:
                source = status.source
            if tag == ANY_TAG and status.tag is not None:
                tag = status.tag
        op = Op.RECV if rec.name == "Recv" else Op.IRECV
        row = self._add(st, rec, op, comm=ident, peer=world_rank(members, source), tag=tag,
                        recv_bytes=self.handles.bytes(st, a["count"], a["datatype"]))  # fmt: skip
        if op == Op.IRECV:
            self.builder.columns["request"][row] = self._new_request(st, a["request"], row, members)

    def _sendrecv(self, st: RankHandles, rec: Record) -> None:
        a = rec.args
        ident, members = self.handles.comm(st, a["comm"])
        if rec.name == "Sendrecv":
            sent = self.handles.bytes(st, a["sendcount"], a["sendtype"])
            got = self.handles.bytes(st, a["recvcount"], a["recvtype"])
        else:
            sent = got = self.handles.bytes(st, a["count"], a["datatype"])
        source, tag = a["source"], a["recvtag"]
        status = _first(a.get("status"))
        if status is not None and source == ANY_SOURCE:
            source = status.source
        if status is not None and tag == ANY_TAG and status.tag is not None:
            tag = status.tag
        self._add(st, rec, Op.SENDRECV, comm=ident, peer=world_rank(members, a["dest"]),
                  tag=a["sendtag"], send_bytes=sent, recv_peer=world_rank(members, source),
                  recv_tag=tag, recv_bytes=got)  # fmt: skip

    def _completion(self, st: RankHandles, rec: Record) -> None:
        a, name = rec.args, rec.name
        statuses = a.get("status") or a.get("statuses") or []
        if name in ("Wait", "Test"):
            done = a.get("flag", 1) != 0
            req = self._complete(st, a["request"], _first(statuses)) if done else None
            self._add(st, rec, name.lower(), request=req)
            return
        handles: list[int] = a["requests"]
        if name in ("Waitany", "Testany"):
            chosen = [a["index"]] if a.get("flag", 1) and 0 <= a["index"] < len(handles) else []
        elif name in ("Waitall", "Testall"):
            chosen = list(range(len(handles))) if a.get("flag", 1) else []
        else:
            chosen = [i for i in a["indices"] if 0 <= i < len(handles)]
        done_ids = []
        for k, i in enumerate(chosen):
            at = i if name in ("Waitall", "Testall") else k  # statuses align with requests
            status = statuses[at] if at < len(statuses) else None
            ident = self._complete(st, handles[i], status)
            if ident is not None:
                done_ids.append(ident)
        if name in ("Waitany", "Testany"):
            self._add(st, rec, name.lower(), request=done_ids[0] if done_ids else None)
        else:
            self._add(st, rec, name.lower(), requests=done_ids)

    def _comm_create(self, st: RankHandles, rec: Record) -> bool:
        a, name = rec.args, rec.name
        parent, parent_members = self.handles.comm(st, a["oldcomm"])
        n = st.creations[parent]
        members: list[int] | None
        if name == "Comm_dup":
            members = list(parent_members)
        elif name == "Comm_create":
            members = st.groups.get(a["group"])
            if members is None:
                self.unsupported["Comm_create with a group the trace never built"] += 1
        else:
            entries = self.splits.setdefault((parent, n), {})
            entries[st.rank] = (a["color"], a["key"])
            if len(entries) < len(parent_members) and not self.partial:
                return False
            members = _split_members(entries, parent_members, a["color"])
        st.creations[parent] += 1
        if members is None or st.rank not in members:
            new_id = COMM_NULL if members is not None else None
        else:
            key = (parent, n, tuple(members))
            new_id = self.comm_ids.setdefault(key, len(self.comm_ids) + 1)
            self.members[new_id] = members
            st.comms[a["newcomm"]] = (new_id, members)
        op = {"Comm_dup": Op.COMM_DUP, "Comm_create": Op.COMM_CREATE}.get(name, Op.COMM_SPLIT)
        in_comm = new_id is not None and new_id != COMM_NULL
        self._add(st, rec, op, comm=parent, new_comm=new_id,
                  comm_members=members if in_comm else None)  # fmt: skip
        return True

    def _bookkeeping(self, st: RankHandles, rec: Record) -> None:
        """Handle tables for calls that make no row: groups, datatypes and ops."""
        if rec.name.startswith("Group_") or rec.name == "Comm_group":
            track_group(self.handles, st, rec)
        elif rec.name in TYPE_CTORS:
            track_type(self.handles, st, rec)
        elif rec.name == "Op_create":
            st.ops[rec.args["op"]] = 1 if rec.args["commute"] else 0


def _times(rec: Record) -> tuple[int, int]:
    return rec.wall_ns or rec.cpu_ns or (0, 0)


def _first(statuses: list[Status] | None) -> Status | None:
    return statuses[0] if statuses else None


def _split_members(
    entries: dict[int, tuple[int, int]], parent: list[int], color: int
) -> list[int] | None:
    if color < 0:  # MPI_UNDEFINED (negative in Open MPI and MPICH)
        return []
    position = {w: i for i, w in enumerate(parent)}
    same = [w for w, (c, _) in entries.items() if c == color]
    return sorted(same, key=lambda w: (entries[w][1], position.get(w, w)))
