"""Reader of the PMPI tracer's per-rank binary files (tailcast_pmpi.c) → one trace table.

File: a header of six int32 (magic "TACT", version, world rank, world size, pid, record
size) then records: `<5q14i` (t_start, t_end, send_bytes, recv_bytes, request; op, peer,
root, tag, comm, recv_peer, recv_tag, new_comm, n_send_counts, n_recv_counts, n_requests,
n_members, dtype_bytes, commutative) followed by that many int64 list values. Version 1
files (an older tracer) lack the last two fields. INT32_MIN / INT64_MIN mean null.
A crashed rank's file may end in a partial record; it is dropped and reported.

Communicator ids in the files are per rank; a global id is assigned per (member set,
occurrence of that member set on the rank), which is the same on every member because
communicator creation is collective and ordered. MPI_COMM_WORLD is 0.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from tailcast.errors import InputError
from tailcast.traces.io import TraceMeta
from tailcast.traces.schema import Op, TraceBuilder

# Same order as enum tc_op in tailcast_pmpi.c.
OPCODES: tuple[Op, ...] = (
    Op.INIT, Op.FINALIZE, Op.SEND, Op.ISEND, Op.RECV, Op.IRECV, Op.SENDRECV, Op.WAIT,
    Op.WAITALL, Op.WAITANY, Op.WAITSOME, Op.TEST, Op.TESTALL, Op.TESTANY, Op.TESTSOME,
    Op.BARRIER, Op.BCAST, Op.REDUCE, Op.ALLREDUCE, Op.ALLTOALL, Op.ALLTOALLV, Op.ALLGATHER,
    Op.ALLGATHERV, Op.GATHER, Op.GATHERV, Op.SCATTER, Op.SCATTERV, Op.REDUCE_SCATTER,
    Op.REDUCE_SCATTER_BLOCK, Op.COMM_SPLIT, Op.COMM_DUP, Op.COMM_CREATE, Op.COMM_FREE,
)  # fmt: skip
REQ_DONE = 100
COMM_REG = 101
MAGIC = 0x54434154
HEADER = struct.Struct("<6i")
RECORD = struct.Struct("<5q14i")
RECORD_V1 = struct.Struct("<5q12i")
VERSION = 3  # version 2 is the timing mode's (timing.py)
MAX_WORLD = 1 << 22  # a header claiming more ranks is corrupt, not a real run
NUL32 = -(2**31)
NUL64 = -(2**63)
_INT64 = struct.Struct("<q")


@dataclass
class RawRank:
    rank: int
    world_size: int
    records: list[tuple[Any, ...]] = field(default_factory=list)
    lists: list[tuple[list[int], list[int], list[int], list[int]]] = field(default_factory=list)
    truncated_bytes: int = 0


def read_rank_file(path: Path) -> RawRank:
    data = Path(path).read_bytes()
    if len(data) < HEADER.size:
        raise InputError(path, "tracer file shorter than its header")
    magic, version, rank, size, _pid, rec_size = HEADER.unpack_from(data, 0)
    layout = {VERSION: RECORD, 1: RECORD_V1}.get(version)
    if magic != MAGIC or layout is None or rec_size != layout.size:
        raise InputError(path, f"not a tailcast tracer file (magic {magic:#x}, v{version})")
    absent = (NUL32, NUL32) if layout is RECORD_V1 else ()
    if not 0 < size <= MAX_WORLD or not 0 <= rank < size:
        raise InputError(path, f"corrupt header: rank {rank} of world size {size}")
    out = RawRank(rank, size)
    off = HEADER.size
    while off < len(data):
        if off + layout.size > len(data):
            out.truncated_bytes = len(data) - off
            break
        rec = layout.unpack_from(data, off) + absent
        counts = rec[13:17]
        if min(counts) < 0:
            raise InputError(path, f"corrupt record at byte {off}")
        total = sum(counts)
        end = off + layout.size + 8 * total
        if end > len(data):
            out.truncated_bytes = len(data) - off
            break
        values = list(struct.unpack_from(f"<{total}q", data, off + layout.size))
        split: list[list[int]] = []
        pos = 0
        for n in counts:
            split.append(values[pos : pos + n])
            pos += n
        out.records.append(rec)
        out.lists.append((split[0], split[1], split[2], split[3]))
        off = end
    return out


def _n32(v: int) -> int | None:
    return None if v == NUL32 else v


def _n64(v: int) -> int | None:
    return None if v == NUL64 else v


def convert_raw(raw_dir: Path, application: str = "") -> tuple[pa.Table, TraceMeta]:
    """All rank files of one run → (table, metadata)."""
    files = sorted(Path(raw_dir).glob("rank-*.bin"))
    if not files:
        raise InputError(raw_dir, "no tracer output (rank-*.bin): did the program call MPI_Init?")
    ranks = [read_rank_file(f) for f in files]
    world = ranks[0].world_size
    for f, rr in zip(files, ranks, strict=True):
        if rr.world_size != world:
            msg = f"world size {rr.world_size}, but {files[0].name} says {world}"
            raise InputError(f, msg)
    # Global communicator ids from (members, occurrence) keys.
    local_keys: dict[tuple[int, int], tuple[tuple[int, ...], int]] = {}
    for f, rr in zip(files, ranks, strict=True):
        seen: Counter[tuple[int, ...]] = Counter()
        for rec, lists in zip(rr.records, rr.lists, strict=True):
            if rec[5] == COMM_REG:
                members = tuple(lists[3])
                if any(not 0 <= m < world for m in members):
                    raise InputError(f, f"communicator members {list(members)} outside the world")
                local_keys[(rr.rank, rec[12])] = (members, seen[members])
                seen[members] += 1
    world_key = (tuple(range(world)), 0)
    ordered = sorted(set(local_keys.values()) - {world_key})
    global_id = {world_key: 0} | {k: i + 1 for i, k in enumerate(ordered)}
    comms_meta = {str(global_id[k]): list(k[0]) for k in ordered}

    def gcomm(rank: int, local: int) -> int | None:
        if local == NUL32:
            return None
        if local < 0:
            return -1
        key = local_keys.get((rank, local))
        return None if key is None else global_id[key]

    builder = TraceBuilder()
    irecv_row: dict[tuple[int, int], int] = {}
    partial: list[int] = []
    truncated: dict[str, int] = {}
    for rr in ranks:
        finalized = False
        for rec, (sc, rc, rq, _mem) in zip(rr.records, rr.lists, strict=True):
            t0, t1, sb, rb, req, op, peer, root, tag, comm, rpeer, rtag, new = rec[:13]
            dtype_bytes, commutative = rec[17:19]
            if op == COMM_REG:
                continue
            if op == REQ_DONE:
                row = irecv_row.pop((rr.rank, req), None)
                if row is not None:
                    cols = builder.columns
                    cols["peer"][row] = _n32(peer)
                    cols["tag"][row] = _n32(tag)
                    cols["recv_bytes"][row] = _n64(rb)
                continue
            if not 0 <= op < len(OPCODES):
                raise InputError(files[0].parent, f"rank {rr.rank}: unknown op code {op}")
            name = OPCODES[op]
            finalized = finalized or name == Op.FINALIZE
            row = len(builder)
            builder.add(
                rr.rank, name, t_start_ns=t0, t_end_ns=t1, send_bytes=_n64(sb),
                recv_bytes=_n64(rb), request=_n64(req), peer=_n32(peer), root=_n32(root),
                tag=_n32(tag), comm=gcomm(rr.rank, comm), recv_peer=_n32(rpeer),
                recv_tag=_n32(rtag), new_comm=gcomm(rr.rank, new),
                send_counts=sc or None, recv_counts=rc or None, requests=rq or None,
                comm_members=list(local_keys[(rr.rank, new)][0])
                if new >= 0 and (rr.rank, new) in local_keys else None,
                dtype_bytes=_n32(dtype_bytes), commutative=_n32(commutative),
            )  # fmt: skip
            if name == Op.IRECV and req != NUL64:
                irecv_row[(rr.rank, req)] = row
        if not finalized:
            partial.append(rr.rank)
        if rr.truncated_bytes:
            truncated[str(rr.rank)] = rr.truncated_bytes
    missing = sorted(set(range(world)) - {r.rank for r in ranks})
    extra = {"comms": json.dumps(comms_meta)}
    if partial or missing:
        extra["partial_ranks"] = json.dumps(sorted(set(partial) | set(missing)))
    if truncated:
        extra["truncated_bytes"] = json.dumps(truncated)
    meta = TraceMeta(
        ranks=world,
        application=application,
        source_format="tailcast-pmpi",
        clock="CLOCK_MONOTONIC ns (per host)",
        extra=extra,
    )
    return builder.table(), meta
