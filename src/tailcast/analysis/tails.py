"""Tail metrics of latency samples (seed 001 §1.1, Fig. 1): where the bulk sits, how far the
tail reaches, and how heavy it is.

Percentiles are numpy's default linear interpolation (Hyndman & Fan type 7). The tail index is
Hill's estimator (Hill 1975, Ann. Stat. 3:1163): over the k largest of n order statistics
X(1) ≥ … ≥ X(k+1),  H(k) = (1/k) Σ_{i≤k} ln X(i) − ln X(k+1),  α̂ = 1/H(k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from tailcast.errors import UsageError

FloatArray = npt.NDArray[np.float64]

# Percentiles reported for every group (seed 001 uses p85 as its tail threshold).
PERCENTILES: tuple[float, ...] = (50.0, 85.0, 90.0, 95.0, 99.0, 99.9)
MIN_HILL_SAMPLES = 20  # fewer positive values make the Hill plot meaningless


@dataclass(frozen=True)
class HillEstimate:
    alpha: float
    k: int
    k_method: str  # "given" or "stable-window"
    n_positive: int


@dataclass(frozen=True)
class TailMetrics:
    n: int
    mean: float
    median: float
    p85: float
    p90: float
    p95: float
    p99: float
    p99_9: float
    max: float
    min: float
    std: float
    mean_over_median: float
    p99_over_p50: float
    share_above_p85: float
    hill_alpha: float | None
    hill_k: int | None
    hill_k_method: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# The columns tables of tail metrics show, in this order (CLI and report).
TAIL_METRIC_COLUMNS = (
    "n", "mean", "median", "p85", "p90", "p95", "p99", "p99_9", "max",
    "mean_over_median", "p99_over_p50", "share_above_p85", "hill_alpha", "hill_k",
)  # fmt: skip


def clean(values: Sequence[float] | npt.ArrayLike) -> FloatArray:
    """Values as a float array with nulls/NaN/inf dropped."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    return arr[np.isfinite(arr)]


def hill_curve(values: FloatArray) -> FloatArray:
    """α̂(k) for k = 1 … m−1 over the m positive values (index k−1 holds α̂(k))."""
    pos = np.sort(values[values > 0])[::-1]
    if pos.size < 2:
        return np.empty(0)
    logs = np.log(pos)
    k = np.arange(1, pos.size)
    h = np.cumsum(logs[:-1]) / k - logs[1:]
    with np.errstate(divide="ignore"):
        alpha: FloatArray = np.where(h > 0, 1.0 / h, np.inf)
    return alpha


def choose_k(curve: FloatArray) -> int:
    """Picks k where the Hill plot is flattest: the centre of the window (of width ≈ m/20,
    at least 5) with the smallest relative spread of α̂, searched over k in [10, m/4].

    This is the usual reading of a Hill plot (look for a stable region, Resnick 2007 §4.4),
    made mechanical; small k is noisy, large k is biased by the body of the distribution.
    """
    m = curve.size + 1
    k_lo, k_hi = 10, max(11, m // 4)
    seg = curve[k_lo - 1 : k_hi]
    finite = np.isfinite(seg)
    if seg.size < 5 or not finite.all():
        return int(min(max(k_lo, round(np.sqrt(m))), m - 1))
    width = max(5, seg.size // 20)
    if seg.size <= width:
        return k_lo + seg.size // 2
    windows = np.lib.stride_tricks.sliding_window_view(seg, width)
    spread = windows.std(axis=1) / windows.mean(axis=1)
    best = int(np.argmin(spread))
    return k_lo + best + width // 2


def hill(values: Sequence[float] | npt.ArrayLike, k: int | None = None) -> HillEstimate | None:
    """Hill's tail index over the k largest positive values; k chosen when not given.

    Returns None when there are fewer than MIN_HILL_SAMPLES positive values."""
    arr = clean(values)
    curve = hill_curve(arr)
    m = curve.size + 1
    if m < MIN_HILL_SAMPLES:
        return None
    method = "given"
    if k is None:
        k = choose_k(curve)
        method = "stable-window"
    if not 1 <= k < m:
        raise UsageError(f"Hill k must be in 1..{m - 1} for {m} positive values, got {k}")
    return HillEstimate(alpha=float(curve[k - 1]), k=int(k), k_method=method, n_positive=m)


def tail_metrics(values: Sequence[float] | npt.ArrayLike, hill_k: int | None = None) -> TailMetrics:
    """All tail metrics of one group. An empty group is an error (nothing to describe)."""
    arr = clean(values)
    if arr.size == 0:
        raise UsageError("no finite values to describe")
    p50, p85, p90, p95, p99, p999 = (float(v) for v in np.percentile(arr, PERCENTILES))
    mean = float(arr.mean())
    est = hill(arr, hill_k) if arr.size >= MIN_HILL_SAMPLES else None
    return TailMetrics(
        n=int(arr.size),
        mean=mean,
        median=p50,
        p85=p85,
        p90=p90,
        p95=p95,
        p99=p99,
        p99_9=p999,
        max=float(arr.max()),
        min=float(arr.min()),
        std=float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        mean_over_median=mean / p50 if p50 != 0 else float("nan"),
        p99_over_p50=p99 / p50 if p50 != 0 else float("nan"),
        share_above_p85=float(np.mean(arr > p85)),
        hill_alpha=est.alpha if est else None,
        hill_k=est.k if est else None,
        hill_k_method=est.k_method if est else None,
    )


def group_values(
    table: pa.Table, column: str, by: Sequence[str] = ()
) -> list[tuple[dict[str, Any], FloatArray]]:
    """Splits `column` of `table` into groups keyed by the `by` columns (in first-seen order
    of sorted keys). Errors name the missing column and the ones that exist."""
    for name in (column, *by):
        if name not in table.column_names:
            raise UsageError(f"no column {name!r}; columns: {', '.join(table.column_names)}")
    try:
        values = np.asarray(
            table.column(column).cast(pa.float64()).to_numpy(zero_copy_only=False),
            dtype=np.float64,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise UsageError(f"column {column!r} is not numeric: {exc}") from exc
    if not by:
        return [({}, clean(values))]
    keys = [table.column(b).to_pylist() for b in by]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(zip(*keys, strict=True)):
        groups.setdefault(tuple(key), []).append(i)

    def sort_key(key: tuple[Any, ...]) -> tuple[tuple[bool, str, Any], ...]:
        # None last; numbers before strings; mixed types never compared directly
        return tuple(
            (k is None, type(k).__name__, k if isinstance(k, int | float) else str(k)) for k in key
        )

    out = []
    for key in sorted(groups, key=sort_key):
        idx = np.asarray(groups[key])
        out.append((dict(zip(by, key, strict=True)), clean(values[idx])))
    return out


def tails_by_group(
    table: pa.Table, column: str, by: Sequence[str] = (), hill_k: int | None = None
) -> list[dict[str, Any]]:
    """One row per group: the group's key columns followed by its tail metrics."""
    rows = []
    for key, values in group_values(table, column, by):
        if values.size == 0:
            continue
        rows.append({**key, **tail_metrics(values, hill_k).as_dict()})
    return rows
