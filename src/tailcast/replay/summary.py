"""Summaries of replayed operations: per op type, count and p50/p99 simulated duration."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa


def op_summary(ops: pa.Table) -> dict[str, dict[str, Any]]:
    """op name → {count, p50_us, p99_us, total_us} of sim_end - sim_start."""
    if ops.num_rows == 0:
        return {}
    names = ops.column("op").to_numpy(zero_copy_only=False)
    duration = (
        ops.column("sim_end_ns").to_numpy() - ops.column("sim_start_ns").to_numpy()
    ) / 1000.0
    order = np.argsort(names, kind="stable")
    names, duration = names[order], duration[order]
    uniques, starts = np.unique(names, return_index=True)
    bounds = [*starts.tolist(), len(names)]
    out: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(uniques.tolist()):
        d = duration[bounds[i] : bounds[i + 1]]
        out[str(name)] = {
            "count": len(d),
            "p50_us": float(np.percentile(d, 50)),
            "p99_us": float(np.percentile(d, 99)),
            "total_us": float(d.sum()),
        }
    return out
