from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tailcast.analysis.tails import hill, tail_metrics, tails_by_group
from tailcast.errors import UsageError


def pareto_quantiles(alpha: float, n: int) -> np.ndarray:
    """Exact Pareto(α, x_m = 1) quantiles at the plotting positions (i − ½)/n."""
    p = (np.arange(1, n + 1) - 0.5) / n
    return (1.0 - p) ** (-1.0 / alpha)


def test_hill_on_exact_pareto_quantiles_with_k_1000() -> None:
    est = hill(pareto_quantiles(1.5, 100_000), k=1000)
    assert est is not None
    assert est.k == 1000 and est.k_method == "given"
    assert est.alpha == pytest.approx(1.50, abs=0.01)


@pytest.mark.parametrize("alpha", [0.8, 1.5, 3.0])
def test_hill_chosen_k_recovers_the_pareto_index(alpha: float) -> None:
    rng = np.random.default_rng(5)
    est = hill(rng.pareto(alpha, 50_000) + 1.0)
    assert est is not None and est.k_method == "stable-window"
    assert 10 <= est.k <= 50_000 // 4
    assert est.alpha == pytest.approx(alpha, rel=0.06)


def test_hill_needs_enough_positive_values_and_a_valid_k() -> None:
    assert hill([1.0, 2.0, 3.0]) is None
    with pytest.raises(UsageError):
        hill(pareto_quantiles(1.5, 1000), k=1000)


def test_metrics_use_numpy_type_7_percentiles() -> None:
    values = np.arange(1.0, 11.0)  # 1..10
    m = tail_metrics(values)
    assert m.n == 10 and m.mean == 5.5 and m.median == 5.5
    # type 7: h = (n − 1) p → p85 = 1 + 0.85·9 = 8.65
    assert m.p85 == pytest.approx(8.65)
    assert m.p99 == pytest.approx(1 + 0.99 * 9)
    assert m.share_above_p85 == pytest.approx(0.2)  # 9 and 10
    assert m.p99_over_p50 == pytest.approx(m.p99 / 5.5)
    assert m.hill_alpha is None  # too few values for a tail index


def test_metrics_ignore_nulls_and_nan_and_reject_empty() -> None:
    m = tail_metrics([1.0, float("nan"), 3.0, float("inf")])
    assert m.n == 2 and m.mean == 2.0
    with pytest.raises(UsageError):
        tail_metrics([float("nan")])


def test_grouping_keys_and_errors() -> None:
    table = pa.table(
        {
            "bench": ["a", "b", "a", "b", None],
            "size": [4, 4, 4, 8, 4],
            "latency_us": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    rows = tails_by_group(table, "latency_us", ["bench", "size"])
    keys = [(r["bench"], r["size"], r["n"], r["mean"]) for r in rows]
    assert keys == [("a", 4, 2, 2.0), ("b", 4, 1, 2.0), ("b", 8, 1, 4.0), (None, 4, 1, 5.0)]
    with pytest.raises(UsageError, match="no column 'nope'"):
        tails_by_group(table, "nope")
    with pytest.raises(UsageError, match="not numeric"):
        tails_by_group(table, "bench")
