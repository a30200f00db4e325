from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from tailcast.analysis import plots
from tailcast.analysis.compare import compare_samples
from tailcast.analysis.correlation import RunSummary, correlate_runs


def _ok(files: plots.PlotFiles, label: str = "(µs)") -> None:
    assert files.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert files.png.stat().st_size > 5000
    svg = files.svg.read_text()
    assert svg.startswith("<?xml") and "<svg" in svg
    assert label in svg  # axis labels carry units and stay text


def test_every_plot_writes_png_and_svg(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    groups = {
        "same group": rng.lognormal(0, 0.3, 500),
        "different islands": rng.lognormal(0.5, 0.6, 500),
    }
    _ok(plots.frequency_plot(groups, tmp_path, "freq", "per locality", "locality"))
    _ok(plots.frequency_plot({"one": groups["same group"]}, tmp_path, "fig1", "one group"))
    _ok(plots.ccdf_plot(groups, tmp_path, "ccdf", "ccdf"))
    _ok(
        plots.qq_plot(
            compare_samples(groups["same group"], groups["different islands"]), tmp_path, "qq", "qq"
        )
    )
    runs = [
        RunSummary(
            f"r{i}", "osu_reduce", size, "x", b, 100, 10 * (1 + b) * size**0.2, 20 * (1 + b), None
        )
        for i, (b, size) in enumerate((b, s) for b in (0.1, 0.3, 0.6, 0.8) for s in (4, 1024))
    ]
    _ok(plots.b_scatter_plot(runs, correlate_runs(runs), tmp_path, "fig4"))
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    _ok(
        plots.b_timeseries_plot(
            [t0 + timedelta(hours=i) for i in range(5)],
            [0.1, 0.2, 0.4, 0.3, 0.5],
            tmp_path,
            "bt",
            "b over time",
        ),
        "b (eq. 2)",
    )


def test_empty_inputs_still_draw(tmp_path: Path) -> None:
    assert plots.frequency_plot({}, tmp_path, "e1", "empty").png.stat().st_size > 0
    assert plots.ccdf_plot({"x": []}, tmp_path, "e2", "empty").png.stat().st_size > 0
    assert plots.b_scatter_plot([], [], tmp_path, "e3").png.stat().st_size > 0
