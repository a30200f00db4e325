"""Reading a trace rank by rank for the streaming engine.

Trace files are sorted by (rank, seq) (`tailcast.traces.io.write_trace`), so each rank's
rows are one contiguous range of the file. `scan_trace` finds the ranges and the
communicators in one pass over a few columns; `open_feeder` gives a feeder that decodes a
rank's next rows straight into the engine's stream when the engine asks for them. Both
read the file natively (`_core.TraceFile`, crates/parquet-lite): memory is a few pages per
column and rank, whatever the size of the trace. Unknown op names are counted in the scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from tailcast import _core
from tailcast.errors import InputError


@dataclass
class TraceLayout:
    """Row ranges per rank and the communicators of a (rank, seq)-sorted trace."""

    rows: int
    ranks: int
    starts: list[int]  # rank r has rows starts[r]..starts[r + 1]
    comms: dict[int, list[int]] = field(default_factory=dict)
    unknown_ops: dict[str, int] = field(default_factory=dict)


def open_trace(path: Path) -> _core.TraceFile:
    """The trace file for the native reader (InputError: not readable Parquet)."""
    try:
        return _core.TraceFile(path)
    except (OSError, ValueError) as exc:
        raise InputError(path, str(exc)) from exc


def scan_trace(
    path: Path, declared: dict[int, list[int]] | None = None, trace: _core.TraceFile | None = None
) -> TraceLayout:
    """One pass over rank/op/comm columns: per-rank ranges, communicator members (declared
    by `declared`, else by comm_* rows, else the ranks calling collectives on them).
    `trace`: the file already opened."""
    try:
        scan = (trace or open_trace(path)).scan()
    except ValueError as exc:
        raise InputError(path, str(exc)) from exc
    counts = scan.counts()
    starts = list(accumulate(counts, initial=0))
    comms: dict[int, list[int]] = dict(declared or {})
    for cid, members in scan.declared_comms():
        comms.setdefault(cid, members)
    for cid, ranks in scan.used_comms().items():
        comms.setdefault(cid, ranks)
    return TraceLayout(
        rows=scan.rows, ranks=len(counts), starts=starts, comms=comms,
        unknown_ops=scan.unknown_ops(),
    )  # fmt: skip


def open_feeder(trace: _core.TraceFile, layout: TraceLayout, chunk_rows: int) -> _core.RankFeeder:
    """Feeds each rank's rows, `chunk_rows` at most at a time (`RankFeeder.feed`)."""
    return trace.feeder(layout.starts, max(2, chunk_rows))
