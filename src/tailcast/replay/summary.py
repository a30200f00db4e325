"""Summaries of replayed operations: per op type, count and p50/p99/total simulated
duration, from `_core.OpStats` (fed the per-op times of an in-memory replay at once, or of
a streamed one chunk by chunk: the same numbers either way)."""

from __future__ import annotations

from typing import Any

from tailcast import _core
from tailcast.replay.columns import op_code_table


def op_summary(stats: _core.OpStats) -> dict[str, dict[str, Any]]:
    """op name → {count, p50_us, p99_us, total_us} of sim_end - sim_start, by name."""
    names = {code: name for name, code in op_code_table().items()}
    out: dict[str, dict[str, Any]] = {}
    for code, (count, p50, p99, total) in stats.summary().items():
        out[names.get(code, "other")] = {
            "count": count,
            "p50_us": p50,
            "p99_us": p99,
            "total_us": total,
        }
    return dict(sorted(out.items()))
