"""`tailcast trace info`: ranks, calls and bytes per operation, duration of a trace."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tailcast.traces.io import TraceMeta, iter_batches, read_meta


@dataclass
class OpSummary:
    calls: int = 0
    send_bytes: int = 0
    recv_bytes: int = 0


@dataclass
class TraceInfo:
    path: str
    ranks: int
    ranks_with_calls: int
    calls: int
    application: str
    source_format: str
    clock: str
    duration_ns: int | None
    iterations: int
    ops: dict[str, OpSummary] = field(default_factory=dict)
    unsupported: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_table(table: pa.Table, meta: TraceMeta, path: str = "") -> TraceInfo:
    """Summary of an in-memory trace table."""
    info = _empty(meta, path)
    _accumulate(info, table.to_batches(), set())
    return info


def trace_info(path: Path) -> TraceInfo:
    """Summary of a trace file, computed by streaming its row groups."""
    meta = read_meta(path)
    info = _empty(meta, str(path))
    cols = ["rank", "op", "send_bytes", "recv_bytes", "t_start_ns", "t_end_ns", "iteration"]
    _accumulate(info, iter_batches(path, columns=cols), set())
    return info


def _empty(meta: TraceMeta, path: str) -> TraceInfo:
    return TraceInfo(
        path=path,
        ranks=meta.ranks,
        ranks_with_calls=0,
        calls=0,
        application=meta.application,
        source_format=meta.source_format,
        clock=meta.clock,
        duration_ns=None,
        iterations=0,
        unsupported=dict(meta.unsupported),
    )


def _accumulate(info: TraceInfo, batches: Any, ranks_seen: set[int]) -> None:
    t_min: int | None = None
    t_max: int | None = None
    iterations: set[int] = set()
    for batch in batches:
        table = pa.Table.from_batches([batch])
        info.calls += table.num_rows
        ranks_seen.update(pc.unique(table["rank"]).to_pylist())
        grouped = table.group_by("op").aggregate(
            [("op", "count"), ("send_bytes", "sum"), ("recv_bytes", "sum")]
        )
        for row in grouped.to_pylist():
            summary = info.ops.setdefault(row["op"], OpSummary())
            summary.calls += int(row["op_count"])
            summary.send_bytes += int(row["send_bytes_sum"] or 0)
            summary.recv_bytes += int(row["recv_bytes_sum"] or 0)
        lo = pc.min(table["t_start_ns"]).as_py()
        hi = pc.max(table["t_end_ns"]).as_py()
        if lo is not None:
            t_min = lo if t_min is None else min(t_min, lo)
        if hi is not None:
            t_max = hi if t_max is None else max(t_max, hi)
        iterations.update(v for v in pc.unique(table["iteration"]).to_pylist() if v is not None)
    info.ranks_with_calls = len(ranks_seen)
    info.duration_ns = None if t_min is None or t_max is None else int(t_max - t_min)
    info.iterations = len(iterations)
    info.ops = dict(sorted(info.ops.items()))


def format_info(info: TraceInfo) -> str:
    """Human-readable summary (stdout of `trace info` without --json)."""
    lines = [
        f"trace        {info.path}",
        f"source       {info.source_format}  application {info.application or '-'}",
        f"ranks        {info.ranks} ({info.ranks_with_calls} with calls)",
        f"calls        {info.calls}",
        f"duration     {_fmt_ns(info.duration_ns)}  clock {info.clock}",
    ]
    if info.iterations:
        lines.append(f"iterations   {info.iterations}")
    lines.append(f"{'op':<22}{'calls':>10}{'send bytes':>16}{'recv bytes':>16}")
    for op, s in info.ops.items():
        lines.append(f"{op:<22}{s.calls:>10}{s.send_bytes:>16}{s.recv_bytes:>16}")
    if info.unsupported:
        lines.append("unsupported calls (not in the trace):")
        lines.extend(f"  {name:<20}{n:>10}" for name, n in sorted(info.unsupported.items()))
    return "\n".join(lines)


def _fmt_ns(ns: int | None) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e9:.6f} s"
