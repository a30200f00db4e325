"""A sweep's axes as columns: each point stores its axis values as one JSON object
(`sweep_points.params`); rows read by sweep id get one column per axis beside it, so
`analyze tails SWEEP_ID --by placement,background_b` groups by them like any column."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa


def with_axis_columns(table: pa.Table) -> pa.Table:
    """`table` with a column per key of its `params` JSON (in their stored order); a key that
    is already a column (e.g. `fabric`, which holds the fabric with its overrides) keeps
    the stored column."""
    if "params" not in table.column_names or table.num_rows == 0:
        return table
    params = [json.loads(p) if p else {} for p in table.column("params").to_pylist()]
    names: list[str] = []
    for p in params:
        names += [k for k in p if k not in names]
    for name in names:
        if name in table.column_names:
            continue
        table = table.append_column(name, _column([p.get(name) for p in params]))
    return table


def _column(values: list[Any]) -> pa.Array:
    """Numbers stay numbers (ints and floats of one axis become floats); anything mixed is
    shown as text."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())
