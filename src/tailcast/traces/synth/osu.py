"""OSU-pattern collective traces: what an OSU Micro-Benchmarks collective latency test does.

For every size: a barrier, `warmup` unmeasured calls, then `iterations` measured calls, each
followed by a barrier (OSU 7 collective loops). Measured calls carry `iteration`, numbered
globally across sizes (size index x iterations + i); the file metadata `osu_sizes` maps them
back. Sizes follow OSU's convention (= tailcast's schema convention): alltoall/allgather/
gather/scatter size = per-rank block, bcast/reduce/allreduce size = whole message,
reduce_scatter size = whole vector split over ranks in float elements, v-variants use equal
blocks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa

from tailcast.errors import UsageError
from tailcast.traces.io import TraceMeta
from tailcast.traces.schema import Op
from tailcast.traces.synth.program import Program

OSU_COLLECTIVES: tuple[str, ...] = (
    "allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast",
    "gather", "gatherv", "reduce", "reduce_scatter", "reduce_scatter_block", "scatter",
    "scatterv",
)  # fmt: skip
FLOAT = 4  # OSU reductions use MPI_FLOAT (or char with -T; float is the default)


def _call_values(coll: str, size: int, n: int, rank: int) -> dict[str, object]:
    if coll == "barrier":
        return {}
    if coll in ("bcast", "allreduce"):
        return {"send_bytes": size, **({"root": 0} if coll == "bcast" else {})}
    if coll == "reduce":
        return {"send_bytes": size, "root": 0}
    if coll in ("alltoall", "allgather"):
        return {"send_bytes": size, "recv_bytes": size}
    if coll in ("gather", "scatter"):
        return {"send_bytes": size, "recv_bytes": size, "root": 0}
    blocks = [size] * n
    if coll == "alltoallv":
        return {"send_counts": blocks, "recv_counts": blocks, "send_bytes": size * n,
                "recv_bytes": size * n}  # fmt: skip
    if coll == "allgatherv":
        return {"send_bytes": size, "recv_counts": blocks, "recv_bytes": size * n}
    if coll == "gatherv":
        return {"send_bytes": size, "recv_counts": blocks, "recv_bytes": size * n, "root": 0}
    if coll == "scatterv":
        return {"send_counts": blocks, "send_bytes": size * n, "recv_bytes": size, "root": 0}
    if coll == "reduce_scatter":
        elems = size // FLOAT
        counts = [(elems // n + (1 if i < elems % n else 0)) * FLOAT for i in range(n)]
        return {"recv_counts": counts, "send_bytes": sum(counts), "recv_bytes": counts[rank]}
    if coll == "reduce_scatter_block":
        block = (size // FLOAT // n) * FLOAT
        return {"recv_bytes": block, "send_bytes": block * n}
    raise UsageError(f"unknown OSU collective {coll!r}; known: {', '.join(OSU_COLLECTIVES)}")


def osu_rows(
    collective: str, ranks: int, sizes: int, iterations: int, warmup: int = 0
) -> tuple[int, int]:
    """(rows, elements of per-rank count lists) `osu_trace` writes for `sizes` message
    sizes, counted without building anything (traces.synth.budget)."""
    coll = collective.lower().removeprefix("osu_")
    blocks = 1 if coll == "barrier" else max(sizes, 0)
    calls = max(ranks, 0) * blocks * max(warmup + iterations, 0)
    # init and finalize; per size a barrier, then every call followed by a barrier
    rows = max(ranks, 0) * (2 + blocks) + 2 * calls
    lists = 2 if coll == "alltoallv" else 1 if coll in _LISTED else 0
    return rows, calls * lists * max(ranks, 0)


# Collectives whose calls carry one list of per-rank counts (alltoallv carries two).
_LISTED = ("allgatherv", "gatherv", "scatterv", "reduce_scatter")


def osu_trace(
    collective: str,
    ranks: int,
    sizes: Sequence[int],
    iterations: int,
    warmup: int = 0,
    pause_ns: int = 0,
) -> tuple[pa.Table, TraceMeta]:
    """OSU's loop per size: a barrier, then per iteration the call and a barrier, and
    `pause_ns` before the next iteration (what the measured loop spent outside its timed
    calls: OSU's and the agent's pauses, the interpreter; lab/compare.py takes it from each
    run)."""
    coll = collective.lower().removeprefix("osu_")
    if coll not in OSU_COLLECTIVES:
        raise UsageError(
            f"unknown OSU collective {collective!r}; known: {', '.join(OSU_COLLECTIVES)}"
        )
    if ranks < 2 or iterations < 1 or warmup < 0:
        raise UsageError("need ranks >= 2, iterations >= 1, warmup >= 0")
    if not sizes or any(s < 0 for s in sizes):
        raise UsageError("sizes must be a non-empty list of byte counts >= 0")
    use_sizes = [0] if coll == "barrier" else list(sizes)
    p = Program(ranks)
    op = Op(coll)
    for block, size in enumerate(use_sizes):
        for r in range(ranks):
            p.call(r, Op.BARRIER)
        for i in range(warmup + iterations):
            it = block * iterations + (i - warmup) if i >= warmup else None
            for r in range(ranks):
                p.call(r, op, iteration=it, **_call_values(coll, size, ranks, r))
            for r in range(ranks):
                p.call(r, Op.BARRIER)
                p.pause(r, pause_ns)
    meta = TraceMeta(
        ranks=ranks,
        application=f"osu_{coll}",
        source_format="synthetic",
        clock="synthetic: no compute" + (f", {pause_ns} ns between iterations" if pause_ns else ""),
        extra={
            "osu_sizes": json.dumps(use_sizes),
            "osu_iterations": str(iterations),
            "osu_warmup": str(warmup),
        },
    )
    return p.table(), meta
