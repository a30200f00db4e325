"""How the report's tables print values: one format per column, chosen from all its values,
so a column reads down without switching between plain and scientific notation.

- Nanosecond columns (`*_ns`) are shown in ms or µs, whichever suits the column's median,
  with the unit in the header.
- µs columns (`*_us`, and the latency statistics of the tail-metric tables) are fixed-point.
- Other real columns are fixed-point when every non-zero value lies within
  [1e-3, 1e7); otherwise (p-values far below 1e-3, SSEs) scientific, for the whole column.
- Fixed-point columns show 4 significant digits of their smallest non-zero magnitude, or
  fewer decimals when all values need fewer; at most 3 decimals for µs and ms (a
  nanosecond or a microsecond: the simulator's resolution is the nanosecond), 4 otherwise.
- A standard deviation below 1e-9 of its row's mean is rounding noise of equal values
  (the sd of 200 equal iteration times comes out as 7e-12): it is shown as 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# The tail-metric columns that are latencies (tails.TAIL_METRIC_COLUMNS, in µs).
LATENCY_STATS = frozenset({"mean", "median", "p85", "p90", "p95", "p99", "p99_9", "max", "min"})
STD_COLUMNS = frozenset({"std", "sd"})
NOISE_SD = 1e-9  # relative to the mean
SIG_DIGITS = 4
FIXED_RANGE = (1e-3, 1e7)


@dataclass(frozen=True)
class Column:
    header: str
    show: Callable[[Any], str]


def _plain(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and not math.isfinite(value):
        return "–"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def _is_real(value: Any) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool)


def _decimals(values: Sequence[float], cap: int) -> int:
    """Enough decimals for SIG_DIGITS significant digits of the smallest non-zero magnitude
    (at most `cap`), fewer when every value needs fewer (loads 0.2, 0.6: one)."""
    nonzero = [abs(v) for v in values if v != 0]
    if not nonzero:
        return 0
    bound = max(0, min(cap, SIG_DIGITS - 1 - math.floor(math.log10(min(nonzero)))))
    for d in range(bound):
        if all(abs(round(v, d) - v) <= 1e-9 * max(abs(v), 1.0) for v in values):
            return d
    return bound


def _fixed(decimals: int) -> Callable[[Any], str]:
    def show(value: Any) -> str:
        if not _is_real(value) or not math.isfinite(value):
            return _plain(value)
        text = f"{float(value):.{decimals}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"

    return show


def _scientific(value: Any) -> str:
    if not _is_real(value) or not math.isfinite(value):
        return _plain(value)
    return f"{float(value):.{SIG_DIGITS - 1}e}"


def _scaled(scale: float, inner: Callable[[Any], str]) -> Callable[[Any], str]:
    return lambda v: inner(v / scale) if _is_real(v) else _plain(v)


def column(name: str, values: Sequence[Any], latency_table: bool = False) -> Column:
    """The header and formatter of column `name` holding `values`. `latency_table`: the
    table's tail statistics (mean, p99, …) are latencies in µs."""
    reals = [float(v) for v in values if _is_real(v) and math.isfinite(v)]
    ints_only = not any(isinstance(v, float) for v in values)
    if not reals or (ints_only and not name.endswith("_ns")):
        return Column(name, _plain)
    if name.endswith("_ns"):
        unit, scale = ("ms", 1e6) if statistics.median(map(abs, reals)) >= 1e6 else ("µs", 1e3)
        scaled = [v / scale for v in reals]
        return Column(
            f"{name.removesuffix('_ns')} ({unit})", _scaled(scale, _fixed(_decimals(scaled, 3)))
        )
    if name.endswith("_us") or (latency_table and (name in LATENCY_STATS or name in STD_COLUMNS)):
        return Column(name, _fixed(_decimals(reals, 3)))
    nonzero = [abs(v) for v in reals if v != 0]
    if all(FIXED_RANGE[0] <= v < FIXED_RANGE[1] for v in nonzero):
        return Column(name, _fixed(_decimals(reals, 4)))
    return Column(name, _scientific)


def without_sd_noise(row: dict[str, Any]) -> dict[str, Any]:
    """The row with a standard deviation that is rounding noise of its mean set to 0."""
    mean = row.get("mean")
    if not isinstance(mean, float | int):
        return row
    out = dict(row)
    for name in STD_COLUMNS & row.keys():
        sd = row[name]
        if _is_real(sd) and abs(sd) < NOISE_SD * abs(mean):
            out[name] = 0.0
    return out


def format_table(
    columns: Sequence[str], rows: Sequence[dict[str, Any]], latency_table: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Headers and the cells of `rows` (dicts) in `columns`' order, one format per column."""
    rows = [without_sd_noise(r) for r in rows]
    cols = [column(c, [r.get(c) for r in rows], latency_table) for c in columns]
    cells = [[c.show(r.get(n)) for c, n in zip(cols, columns, strict=True)] for r in rows]
    return [c.header for c in cols], cells
