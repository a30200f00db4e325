"""Seed 000's sweep as a `tailcast replay sweep` spec: the bundled `benes-psf-16` fabric with
its arbitration, routing and switching overridden per axis, seed 000's workloads as the
traces, random placement and every message eager (`replay/photonic_setups.py`)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path
from statistics import mean

from tailcast.analysis.report import build_report
from tailcast.replay.fabric import bundled_fabrics
from tailcast.replay.photonic_setups import ALWAYS_EAGER
from tailcast.store import Catalog, ResultsDir
from tailcast.sweeps.plan import create_plan
from tailcast.sweeps.runner import run_points
from tailcast.sweeps.spec import load_spec
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.synth import WorkloadParams, workload_trace


def _spec(tmp: Path) -> Path:
    for w in ("allreduce", "randomapp"):
        table = workload_trace(w, WorkloadParams(16, flows=200, seed=1))
        write_trace(table, tmp / f"{w}.parquet", TraceMeta(ranks=16, application=f"seed000-{w}"))
    spec = tmp / "seed000.toml"
    spec.write_text(
        f"""[sweep]
name = "seed000"
traces = ["allreduce.parquet", "randomapp.parquet"]
seeds = 2
seed = 3

[axes]
fabric = ["benes-psf-16"]
"fabric.arbitration" = ["lfu", "arr", "rr"]
"fabric.routing" = ["mb", "mx"]
"fabric.switching" = ["cs", "tdm"]
placement = ["random"]
eager_threshold = [{ALWAYS_EAGER}]
"""
    )
    return spec


def test_replay_sweep_covers_policies_routings_and_switchings(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "home")
    plan = create_plan(load_spec(_spec(tmp_path)), 1, results)
    assert len(plan.points) == 2 * 3 * 2 * 2 * 2
    done = run_points(plan, range(len(plan.points)), results, "local")
    assert len(done) == 48
    with Catalog(results) as cat:
        rows = cat.rows(
            "SELECT r.replay_id, r.application, r.total_time_ns, r.fabric_toml, s.value "
            "FROM replays r JOIN fabric_stats s USING (replay_id) "
            f"WHERE r.replay_id LIKE '{plan.sweep_id}-p%' AND s.name = 'mzi_energy_pj_per_bit'"
        )
    assert len(rows) == 48 and all(r["value"] > 0 for r in rows)
    # Each point's stored fabric is the TOML it ran with: the bundled one, overrides applied.
    assert len({r["fabric_toml"] for r in rows}) == 3 * 2 * 2
    swept = ("arbitration", "routing", "switching")
    bundled = tomllib.loads(bundled_fabrics()["benes-psf-16"])
    for r in rows:
        stored = tomllib.loads(r["fabric_toml"])
        assert stored["arbitration"] in ("lfu", "arr", "rr") and stored["routing"] in ("mb", "mx")
        unswept = {k: v for k, v in stored.items() if k not in swept}
        assert unswept == {k: v for k, v in bundled.items() if k not in swept}
    # The overrides reach the engine: TDM's 100 KB slots and reconfigurations between them
    # make the same traces take longer than CS (seed 000 §V-D).
    by_switching: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        switching = tomllib.loads(r["fabric_toml"])["switching"]
        by_switching[switching].append(r["total_time_ns"])
    assert mean(by_switching["tdm"]) > mean(by_switching["cs"]), by_switching
    # The report groups the points by the parameters they ran with (the overrides).
    report = build_report(tmp_path / "report", results, fit_groups=0)
    psf = next(s for s in report.sections if s.ident == "photonic_psf")
    titles = [f.title for f in psf.figures]
    for switching, routing in (("CS", "mb"), ("TDM", "mx")):
        assert any(
            "16 ports" in t and f"({switching})" in t and f"({routing})" in t for t in titles
        ), titles
    table = next(t for t in psf.tables if t.title.startswith("Communication time per policy"))
    assert {"LFU", "ARR", "RR"} <= set(table.columns), table.columns
