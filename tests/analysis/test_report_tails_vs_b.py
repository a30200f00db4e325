"""The report's "tails vs b" section (issue 12) built from a small real `replay sweep`: b x
routing on the bundled dfp-test, 16-rank 256 KiB Reduce, background jobs sized from b."""

from __future__ import annotations

from pathlib import Path

from tailcast.analysis.report import build_report
from tailcast.analysis.report_tails_vs_b import SIMULATED_QUERY, simulated_lines
from tailcast.store import Catalog, ResultsDir
from tailcast.sweeps.plan import create_plan
from tailcast.sweeps.runner import run_points
from tailcast.sweeps.spec import load_spec
from tests.replay.conftest import osu_parquet


def test_tails_vs_b_section_from_a_small_sweep(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "reduce", 16, 1 << 18, iterations=30)
    spec = tmp_path / "b.toml"
    spec.write_text(
        f"""[sweep]
name = "tails-vs-b"
traces = ["{trace.name}"]
seeds = 1
seed = 3

[axes]
fabric = ["dfp-test"]
placement = ["different_islands"]
background_b = [0.0, 0.3, 0.7]
"fabric.routing" = ["minimal", "adaptive"]
"""
    )
    results = ResultsDir(tmp_path / "home")
    plan = create_plan(load_spec(spec), 1, results)
    assert len(run_points(plan, range(len(plan.points)), results, "local")) == 6
    with Catalog(results) as cat:
        lines = simulated_lines(cat.rows(SIMULATED_QUERY))
    assert sorted(line[3] for line in lines) == ["adaptive", "minimal"]
    for line, pts in lines.items():
        assert [p["b"] for p in pts] == [0.0, 0.3, 0.7], line
        # The tail grows with b: more background jobs share the Reduce's links.
        p99 = [p["p99_us"] for p in pts]
        assert p99[0] < p99[-1], (line, pts)
        assert all(p["p99_us"] >= p["mean_us"] for p in pts)

    report = build_report(tmp_path / "report", results, embed=False)
    section = next(s for s in report.sections if s.ident == "tails_vs_b")
    table = section.tables[0]
    assert len(table.rows) == 6
    assert table.columns[:5] == ["trace", "fabric", "placement", "routing", "b"]
    assert any("No measured runs with b" in n for n in section.notes)
    (figure,) = section.figures
    assert (tmp_path / "report" / figure.png).stat().st_size > 0
    assert "Simulated tails vs background utilisation b" in report.html.read_text()
