"""The report's photonic switch sections, from replays the store holds: seed 000's
normalised policy comparison, Table I and a per-port timeline; seed 003's curves against
offered load and Eq. 9 beside the values the paper quotes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tailcast.analysis.report import build_report
from tailcast.replay.photonic_setups import (
    GeminiPoint,
    PsfPoint,
    gemini_link,
    seed000_options,
    seed003_options,
    seed003_poisson_trace,
)
from tailcast.replay.run import replay_trace
from tailcast.store import ResultsDir
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.synth import WorkloadParams, workload_trace


def _store(tmp_path: Path) -> ResultsDir:
    results = ResultsDir(tmp_path / "store")
    for workload in ("allreduce", "randomapp"):
        for seed in (0, 1):
            trace = tmp_path / f"{workload}-{seed}.parquet"
            table = workload_trace(workload, WorkloadParams(16, flows=200, seed=seed))
            write_trace(table, trace, TraceMeta(ranks=16, application=f"seed000-{workload}"))
            for policy in ("lfu", "rr", "arr"):
                options = seed000_options(seed)
                if (workload, seed, policy) == ("allreduce", 0, "rr"):
                    options = replace(options, record_messages=True)  # for the timeline
                replay_trace(trace, PsfPoint(16, policy, "mb", "cs").fabric(), options, results)
    for protocol in ("basic", "voq"):
        point = GeminiPoint(8, protocol)
        for load in (0.2, 0.6):
            table = seed003_poisson_trace(
                8,
                gemini_link(point.fabric()),
                load=load,
                messages=15,
                mean_bytes=1 << 20,
                lengths="constant",
                seed=2,
            )
            meta = TraceMeta(
                ranks=8,
                application="seed003-poisson",
                extra={"load": str(load), "lengths": "constant"},
            )
            trace = write_trace(table, tmp_path / f"p-{protocol}-{load}.parquet", meta)
            replay_trace(trace, point.fabric(), seed003_options(2), results)
    return results


def test_photonic_sections_redraw_the_papers_figures(tmp_path: Path) -> None:
    res = build_report(tmp_path / "report", _store(tmp_path), fit_groups=0)
    sections = {s.ident: s for s in res.sections}
    psf, gemini = sections["photonic_psf"], sections["photonic_gemini"]
    titles = [f.title for f in psf.figures]
    assert any("communication time — 16 ports, CS, mb" in t for t in titles), titles
    assert any("energy per bit" in t for t in titles)
    assert any("timeline" in t for t in titles), psf.notes
    time_table = next(t for t in psf.tables if t.title.startswith("Normalised communication"))
    assert time_table.columns[:1] == ["workload"] and len(time_table.rows) == 2
    # Every workload has a best policy at exactly 1.
    for row in time_table.rows:
        assert "1" in [cell for cell in row[1:] if cell != "–"], row
    table_i = next(t for t in psf.tables if "Table I" in t.title)
    assert table_i.rows[0][0] == "16" and table_i.rows[0][3] == "21.2"
    assert len(gemini.figures) == 4
    per_load = gemini.tables[-1].rows  # protocol, ports, lengths, load, …
    assert {(r[0], r[1], r[2], r[3]) for r in per_load} == {
        (p, "8", "constant", load) for p in ("basic", "voq") for load in ("0.2", "0.6")
    }
    eq9 = gemini.tables[0]
    assert eq9.rows[0][:4] == ["4", "99.13", "99.2", "99.2"]
    html = res.html.read_text(encoding="utf-8")
    assert "seed 000" in html and "seed 003" in html
