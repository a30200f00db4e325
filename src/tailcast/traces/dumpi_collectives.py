"""DUMPI collectives, groups and derived datatypes → tailcast rows and handle tables.

Sizes follow the tailcast per-call convention (tailcast.traces.schema): counts × the type
size of the rank's own arguments; DUMPI records a gather's receive and a scatter's send
arguments only at the root, so other ranks leave those bytes null. `dtype_bytes` is the
size of the datatype the rank's element count is in (the receive type where it has both,
as Open MPI's decisions use it), `commutative` the op's: every predefined op is
commutative, a user op as its Op_create record said, an op of unknown origin null.
"""

from __future__ import annotations

from typing import Any

from tailcast.traces.dumpi_format import Record
from tailcast.traces.dumpi_handles import HandleLookup, RankHandles
from tailcast.traces.schema import Op, world_rank

_SAME_SIZE = {"Bcast": Op.BCAST, "Reduce": Op.REDUCE, "Allreduce": Op.ALLREDUCE}
_BLOCKS = {"Alltoall": Op.ALLTOALL, "Allgather": Op.ALLGATHER}
# sst-dumpi's dumpi_native_ops (common/constants.h): DUMPI_OP_ERROR = 0, then MPI_MAX …
# MPI_REPLACE = 1 … 13, DUMPI_OP_NULL = 14; user ops from DUMPI_FIRST_USER_OP = 15.
_PREDEFINED_OPS = range(1, 14)


def collective_row(handles: HandleLookup, st: RankHandles, rec: Record) -> dict[str, Any] | None:
    """The row values (with `op`) of a collective record, or None if it is not one."""
    name, a = rec.name, rec.args
    if "comm" not in a:
        return None
    ident, members = handles.comm(st, a["comm"])
    v: dict[str, Any] = {"comm": ident}
    if "root" in a:
        v["root"] = world_rank(members, a["root"])
    if name in _SAME_SIZE:
        v.update(op=_SAME_SIZE[name], send_bytes=handles.bytes(st, a["count"], a["datatype"]))
    elif name in _BLOCKS:
        v.update(op=_BLOCKS[name], send_bytes=handles.bytes(st, a["sendcount"], a["sendtype"]),
                 recv_bytes=handles.bytes(st, a["recvcount"], a["recvtype"]))  # fmt: skip
    elif name == "Gather":
        v.update(op=Op.GATHER, send_bytes=handles.bytes(st, a["sendcount"], a["sendtype"]))
        if "recvcount" in a:
            v["recv_bytes"] = handles.bytes(st, a["recvcount"], a["recvtype"])
    elif name == "Scatter":
        v.update(op=Op.SCATTER, recv_bytes=handles.bytes(st, a["recvcount"], a["recvtype"]))
        if "sendcount" in a:
            v["send_bytes"] = handles.bytes(st, a["sendcount"], a["sendtype"])
    elif name == "Gatherv":
        rc = handles.vbytes(st, a.get("recvcounts"), a["recvtype"])
        v.update(op=Op.GATHERV, send_bytes=handles.bytes(st, a["sendcount"], a["sendtype"]),
                 recv_counts=rc, recv_bytes=_sum(rc))  # fmt: skip
    elif name == "Scatterv":
        sc = handles.vbytes(st, a.get("sendcounts"), a["sendtype"])
        v.update(op=Op.SCATTERV, recv_bytes=handles.bytes(st, a["recvcount"], a["recvtype"]),
                 send_counts=sc, send_bytes=_sum(sc))  # fmt: skip
    elif name == "Allgatherv":
        rc = handles.vbytes(st, a["recvcounts"], a["recvtype"])
        v.update(op=Op.ALLGATHERV, send_bytes=handles.bytes(st, a["sendcount"], a["sendtype"]),
                 recv_counts=rc, recv_bytes=_sum(rc))  # fmt: skip
    elif name == "Alltoallv":
        sc = handles.vbytes(st, a["sendcounts"], a["sendtype"])
        rc = handles.vbytes(st, a["recvcounts"], a["recvtype"])
        v.update(op=Op.ALLTOALLV, send_counts=sc, recv_counts=rc, send_bytes=_sum(sc),
                 recv_bytes=_sum(rc))  # fmt: skip
    elif name == "Reduce_scatter":
        rc = handles.vbytes(st, a["recvcounts"], a["datatype"])
        me = members.index(st.rank) if st.rank in members else -1
        own = rc[me] if rc is not None and 0 <= me < len(rc) else None
        v.update(op=Op.REDUCE_SCATTER, recv_counts=rc, send_bytes=_sum(rc), recv_bytes=own)
    else:
        return None
    dtype = a.get("datatype", a.get("recvtype", a.get("sendtype")))
    if dtype is not None:
        v["dtype_bytes"] = handles.size(st, dtype)
    if "op" in a:
        v["commutative"] = 1 if a["op"] in _PREDEFINED_OPS else st.ops.get(a["op"])
    return v


def track_group(handles: HandleLookup, st: RankHandles, rec: Record) -> None:
    """Keeps each rank's group handles as lists of world ranks."""
    name, a, groups = rec.name, rec.args, st.groups
    if name == "Comm_group":
        groups[a["group"]] = list(handles.comm(st, a["comm"])[1])
        return
    if name == "Group_free":
        groups.pop(a["group"], None)
        return
    if name in ("Group_union", "Group_intersection", "Group_difference"):
        g1, g2 = groups.get(a["group1"]), groups.get(a["group2"])
        if g1 is None or g2 is None:
            return
        if name == "Group_union":
            groups[a["newgroup"]] = g1 + [w for w in g2 if w not in g1]
        elif name == "Group_intersection":
            groups[a["newgroup"]] = [w for w in g1 if w in g2]
        else:
            groups[a["newgroup"]] = [w for w in g1 if w not in g2]
        return
    base = groups.get(a.get("group", -1))
    if base is None or "newgroup" not in a:
        return
    if name in ("Group_incl", "Group_excl"):
        picked = [r for r in a["ranks"] if 0 <= r < len(base)]
    elif name in ("Group_range_incl", "Group_range_excl"):
        picked = [r for rng in a["ranges"] if len(rng) == 3 for r in _range(rng, len(base))]
    else:
        return
    if name.endswith("_incl"):
        groups[a["newgroup"]] = [base[r] for r in picked]
    else:
        groups[a["newgroup"]] = [w for i, w in enumerate(base) if i not in set(picked)]


def track_type(handles: HandleLookup, st: RankHandles, rec: Record) -> None:
    """Sizes (MPI_Type_size: bytes of data, not extent) of derived datatypes."""
    name, a = rec.name, rec.args
    if name == "Type_size":
        if handles.size(st, a["datatype"]) is None:  # a size the constructors could not tell
            st.types[a["datatype"]] = a["size"]
        return
    if name == "Type_struct":
        sizes = [handles.size(st, t) for t in a["oldtypes"]]
        lengths = a["lengths"]
        total = None
        if None not in sizes and len(sizes) == len(lengths):
            total = sum(n * s for n, s in zip(lengths, sizes, strict=True) if s is not None)
        st.types[a["newtype"]] = total
        return
    old = handles.size(st, a["oldtype"])
    if name == "Type_dup":
        n = 1
    elif name == "Type_contiguous":
        n = a["count"]
    elif name in ("Type_vector", "Type_hvector"):
        n = a["count"] * a["blocklength"]
    else:  # indexed, hindexed
        n = sum(a["lengths"])
    st.types[a["newtype"]] = None if old is None else n * old


def _range(rng: list[int], size: int) -> list[int]:
    """The ranks of one (first, last, stride) triplet that exist in a group of `size`."""
    first, last, stride = rng
    if stride == 0:
        return []
    span = range(first, last + (1 if stride > 0 else -1), stride)
    return sorted((r for r in range(size) if r in span), key=span.index)


def _sum(values: list[int] | None) -> int | None:
    return None if values is None else sum(values)
