"""A lab background job as a trace the replay runs beside the measured one: `calls`
alltoalls of `size` bytes per peer on `ranks` ranks, each followed by `gap_ns` of compute
(no barriers). tailcast.lab.background does exactly that — call, then sleep a fixed gap —
so the trace is the same closed loop: under contention both the real and the simulated job
slow down by the time their calls take.
"""

from __future__ import annotations

from pathlib import Path

from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.schema import Op, TraceBuilder


def write_background_trace(path: Path, ranks: int, size: int, calls: int, gap_ns: float) -> Path:
    if ranks < 2 or calls < 1:
        raise ValueError("a background trace needs >= 2 ranks and >= 1 call")
    b = TraceBuilder()
    step = round(gap_ns)
    for r in range(ranks):
        t = 0
        b.add(r, Op.INIT, t_start_ns=t, t_end_ns=t)
        for _ in range(calls):
            # zero-length calls in trace time: the replay times them; `step` between them
            # is the compute it inserts
            b.add(
                r, Op.ALLTOALL, send_bytes=size, recv_bytes=size, comm=0, t_start_ns=t, t_end_ns=t
            )
            t += step
        b.add(r, Op.FINALIZE, t_start_ns=t, t_end_ns=t)
    meta = TraceMeta(
        ranks=ranks,
        application="lab_background_alltoall",
        source_format="synthetic",
        clock=f"synthetic: {gap_ns:.0f} ns compute after each call",
        extra={},
    )
    return write_trace(b.table(), path, meta)
