"""A lab background job as a trace the replay runs beside the measured one: alltoalls of
`size` bytes per peer on `ranks` ranks, each followed by its pause from `gaps_ns` as compute
(no barriers). tailcast.lab.background does exactly that — call, then pause — so the trace is
the same closed loop: under contention both the real and the simulated job slow down by the
time their calls take.

The real job calls MPI_Ialltoall, which Open MPI 4.1.4 serves from coll/libnbc, not from the
tuned blocking algorithms: `ompi_coll_libnbc_ialltoall` picks NBC_A2A_LINEAR for every
non-in-place call (the pairwise and dissemination branches are commented out), and
`a2a_sched_linear` puts one receive and one send per peer, in peer order 0..p-1, into a
single round. The trace therefore spells each call out as those point-to-point requests and
one waitall, so the replay opens all 2(p-1) flows at once as the real job does instead of
timing the blocking MPI_Alltoall's default algorithm (pairwise at this size).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.schema import Op, TraceBuilder

# libnbc tags its schedules' messages itself; any tag that the foreground never uses will do
_TAG = 7


def write_background_trace(
    path: Path,
    ranks: int,
    size: int,
    gaps_ns: Sequence[float],
    offset_ns: float = 0.0,
) -> Path:
    """One call per pause in `gaps_ns`; `offset_ns` of compute before the first call: where
    in its cycle the job is when the measured run starts."""
    calls = len(gaps_ns)
    if ranks < 2 or calls < 1:
        raise ValueError("a background trace needs >= 2 ranks and >= 1 call")
    b = TraceBuilder()
    steps = [round(g) for g in gaps_ns]
    for r in range(ranks):
        t, request = 0, 0
        b.add(r, Op.INIT, t_start_ns=t, t_end_ns=t)
        t += round(offset_ns)
        for step in steps:
            # zero-length calls in trace time: the replay times them; `step` after a call
            # is the compute it inserts
            first = request
            for peer in range(ranks):  # a2a_sched_linear's order: recv then send, per peer
                if peer == r:
                    continue
                b.add(
                    r,
                    Op.IRECV,
                    peer=peer,
                    tag=_TAG,
                    recv_bytes=size,
                    comm=0,
                    request=request,
                    t_start_ns=t,
                    t_end_ns=t,
                )
                b.add(
                    r,
                    Op.ISEND,
                    peer=peer,
                    tag=_TAG,
                    send_bytes=size,
                    comm=0,
                    request=request + 1,
                    t_start_ns=t,
                    t_end_ns=t,
                )
                request += 2
            b.add(r, Op.WAITALL, requests=list(range(first, request)), t_start_ns=t, t_end_ns=t)
            t += step
        b.add(r, Op.FINALIZE, t_start_ns=t, t_end_ns=t)
    meta = TraceMeta(
        ranks=ranks,
        application="lab_background_ialltoall",
        source_format="synthetic",
        clock=f"synthetic: {sum(steps) / calls:.0f} ns mean compute after each call",
        extra={},
    )
    return write_trace(b.table(), path, meta)
