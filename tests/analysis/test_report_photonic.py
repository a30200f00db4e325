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
    # The title names what the bars compare (arbitration policies, the legend's entries) and
    # spells the routing out: its "rnd"/"mb" are not policies.
    point = "16 ports, circuit switching (CS), fewest-bar-cells path routing (mb)"
    assert f"Communication time per arbitration policy, normalised to the best — {point}" in titles
    assert any("Energy per bit per arbitration policy" in t for t in titles)
    assert any("timeline of seed000-allreduce on benes-psf-16" in t for t in titles), psf.notes
    time_table = next(t for t in psf.tables if t.title.startswith("Communication time per"))
    assert time_table.columns == ["workload", "FIFO", "LRU", "LFU", "RND", "RR", "ARR", "MRR"]
    assert len(time_table.rows) == 2
    # Every workload has a best policy at exactly 1; policies not replayed show "–".
    for row in time_table.rows:
        cells = dict(zip(time_table.columns, row, strict=True))
        assert 1.0 in [float(cells[p]) for p in ("LFU", "RR", "ARR")], row
        assert cells["FIFO"] == "–", row
    table_i = next(t for t in psf.tables if "Table I" in t.title)
    assert table_i.rows[0][0] == "16" and table_i.rows[0][3] == "21.2"
    assert len(gemini.figures) == 4
    per_load = gemini.tables[-1].rows  # protocol, ports, lengths, load, …
    assert {(r[0], r[1], r[2], r[3]) for r in per_load} == {
        (p, "8", "constant", load) for p in ("basic", "voq") for load in ("0.2", "0.6")
    }
    eq9 = gemini.tables[0]
    assert eq9.rows[0][:4] == ["4", "99.13", "99.20", "99.20"]
    html = res.html.read_text(encoding="utf-8")
    assert "seed 000" in html and "seed 003" in html


def test_one_policy_draws_no_policy_comparison(tmp_path: Path) -> None:
    """Replays under one arbitration policy only (the quickstart's halo on benes-psf-16):
    normalised to the best of one, every bar would be 1. No chart; a note says why."""
    results = ResultsDir(tmp_path / "store")
    trace = tmp_path / "allreduce.parquet"
    table = workload_trace("allreduce", WorkloadParams(16, flows=50, seed=0))
    write_trace(table, trace, TraceMeta(ranks=16, application="seed000-allreduce"))
    replay_trace(trace, PsfPoint(16, "arr", "rnd", "cs").fabric(), seed000_options(0), results)
    res = build_report(tmp_path / "report", results, fit_groups=0)
    psf = next(s for s in res.sections if s.ident == "photonic_psf")
    assert not [f for f in psf.figures if "policy" in f.title]
    assert not [t for t in psf.tables if "per policy" in t.title]
    note = next(n for n in psf.notes if n.startswith("No policy comparison"))
    assert "random path routing (rnd) (ARR only)" in note
