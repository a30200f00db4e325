"""One number format per column of the report's tables (analysis/report_numbers.py)."""

from __future__ import annotations

from datetime import datetime

from tailcast.analysis.report_numbers import format_table


def _column(name: str, values: list[object], latency: bool = False) -> tuple[str, list[str]]:
    headers, cells = format_table([name], [{name: v} for v in values], latency)
    return headers[0], [row[0] for row in cells]


def test_microsecond_columns_are_fixed_point_down_the_column() -> None:
    # {:.4g} printed these as 5.2, 2.942e+04, 1.235e+05: three formats in one column.
    assert _column("p99_us", [5.2, 29424.0, 123456.789]) == (
        "p99_us",
        ["5.200", "29424.000", "123456.789"],
    )
    # The tail tables' statistics are µs too; decimals follow the smallest value.
    assert _column("p99", [150.0, 2e6], latency=True)[1] == ["150", "2000000"]
    assert _column("median", [0.00213, 1.5], latency=True)[1] == ["0.002", "1.500"]


def test_nanosecond_columns_are_shown_in_ms_or_us_with_the_unit() -> None:
    assert _column("total_time_ns", [135_650_000, 71_764_171_155, None]) == (
        "total_time (ms)",
        ["135.7", "71764.2", "–"],
    )
    # The unit suits the median: most of these are below a millisecond.
    assert _column("total_time_ns", [56_300, 293_550, 2_000_000]) == (
        "total_time (µs)",
        ["56.30", "293.55", "2000.00"],
    )


def test_wide_ranges_are_scientific_for_the_whole_column() -> None:
    _, cells = _column("ks_p", [0.36, 1.3e-05, 0.0])
    assert cells == ["3.600e-01", "1.300e-05", "0.000e+00"]
    # Every value within [1e-3, 1e7): fixed, with only the decimals the values need.
    assert _column("load", [0.2, 0.6])[1] == ["0.2", "0.6"]
    assert _column("eq9_pct", [99.13297, 98.3])[1] == ["99.13", "98.30"]


def test_a_standard_deviation_of_rounding_noise_is_zero() -> None:
    rows = [
        {"mean": 341613.497, "std": 6.9e-12},  # 200 equal iteration times
        {"mean": 22.98, "std": 60.4},
    ]
    _, cells = format_table(["mean", "std"], rows, latency_table=True)
    assert [r[1] for r in cells] == ["0.0", "60.4"]


def test_other_values_print_plainly() -> None:
    assert _column("n", [800, 2424])[1] == ["800", "2424"]
    assert _column("within", [True, False])[1] == ["yes", "no"]
    assert _column("at", [datetime(2026, 11, 29, 0, 25, 16)])[1] == ["2026-11-29 00:25:16"]
    assert _column("x", [float("nan"), None, 1.5])[1] == ["–", "–", "1.5"]
    assert _column("delta", [-0.00001, 1.0])[1] == ["-1.000e-05", "1.000e+00"]
