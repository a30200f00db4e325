"""How a lab comparison is shown: a Markdown table with one row per measured run (context,
measured and simulated p50/p99, errors, KS, Wasserstein, whether it is within the issue's
tolerances, misses included), the same rows as JSON, and tailcast's HTML report with one
measured-vs-simulated pair (table and QQ plot) per run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tailcast.analysis.report import build_report
from tailcast.lab.compare import P50_TOLERANCE, P99_TOLERANCE, RunComparison
from tailcast.store import ResultsDir


def comparison_markdown(rows: Sequence[RunComparison]) -> str:
    head = (
        "| phase | placement | benchmark | bytes | b | shared | p50 meas ms | p50 sim ms | "
        "p50 err | p99 meas ms | p99 sim ms | p99 err | KS | W ms | within |\n"
        "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
    )
    body = "".join(
        f"| {r.phase} | {r.placement} | {r.benchmark} | {r.msg_size_bytes} | {r.b:.2f} | "
        f"{'yes' if r.shares_links else 'no'} | {r.p50_measured_us / 1e3:.1f} | "
        f"{r.p50_simulated_us / 1e3:.1f} | {r.p50_error:+.1%} | {r.p99_measured_us / 1e3:.1f} | "
        f"{r.p99_simulated_us / 1e3:.1f} | {r.p99_error:+.1%} | {r.ks:.2f} | "
        f"{r.wasserstein_us / 1e3:.1f} | {'yes' if r.within else '**no**'} |\n"
        for r in rows
    )
    within = sum(r.within for r in rows)
    foot = (
        f"\n{within} of {len(rows)} runs within p50 ±{P50_TOLERANCE:.0%} and p99 "
        f"±{P99_TOLERANCE:.0%}.\n"
    )
    return head + body + foot


def write_comparison(rows: Sequence[RunComparison], out: Path, results: ResultsDir) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(json.dumps([r.as_dict() for r in rows], indent=2))
    (out / "comparison.md").write_text(comparison_markdown(rows))
    pairs = [
        (f"SELECT latency_us FROM samples WHERE run_id = '{r.run_id}'", r.replay_id) for r in rows
    ]
    return build_report(out / "report", results=results, fit_groups=1, compare=pairs).html
