"""Tails of a lab campaign per phase: for every (placement, benchmark, size) the median and
p99 of each phase's run, b, whether its background shared a link, and both percentiles as
ratios to the same placement's run without background (phase with no jobs) — the figures
behind "latency grows with b because of link sharing"."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailcast.errors import UsageError
from tailcast.store import Catalog


@dataclass(frozen=True)
class PhaseTail:
    campaign: str
    placement: str
    benchmark: str
    msg_size_bytes: int
    phase: str
    background_jobs: int
    shares_links: bool
    b: float
    iterations: int
    p50_us: float
    p99_us: float
    p50_ratio: float | None  # to the run without background
    p99_ratio: float | None
    host_load_1m: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def phase_tails(cat: Catalog, campaign: str | None = None) -> list[PhaseTail]:
    where = f"WHERE l.campaign = {_quote(campaign)}" if campaign else ""
    runs = cat.sql(
        "SELECT l.run_id, l.campaign, l.placement, l.phase, len(l.bg_job_ids) AS jobs, "
        "l.shares_links, r.benchmark, r.msg_size_bytes, r.b_before, r.b_after, "
        "(l.host_load_1m_before + l.host_load_1m_after) / 2 AS load "
        f"FROM lab_runs l JOIN runs r USING (run_id) {where} "
        "ORDER BY l.campaign, l.placement, r.benchmark, r.msg_size_bytes, jobs, l.phase"
    ).to_pylist()
    if not runs:
        raise UsageError("no lab campaign runs in the store (tailcast lab campaign ...)")
    samples = cat.sql(
        "SELECT run_id, list(latency_us) AS lat FROM samples "
        f"WHERE run_id IN (SELECT run_id FROM lab_runs l {where}) GROUP BY run_id"
    ).to_pylist()
    latency = {s["run_id"]: np.asarray(s["lat"], dtype=float) for s in samples}
    out: list[PhaseTail] = []
    baseline: dict[tuple[str, str, str, int], tuple[float, float]] = {}
    for r in runs:
        lat = latency.get(r["run_id"])
        if lat is None or lat.size == 0:
            continue
        p50, p99 = (float(x) for x in np.percentile(lat, [50, 99]))
        key = (r["campaign"], r["placement"], r["benchmark"], int(r["msg_size_bytes"]))
        if r["jobs"] == 0:
            baseline[key] = (p50, p99)
        base = baseline.get(key)
        out.append(
            PhaseTail(
                campaign=r["campaign"],
                placement=r["placement"],
                benchmark=r["benchmark"],
                msg_size_bytes=int(r["msg_size_bytes"]),
                phase=r["phase"],
                background_jobs=int(r["jobs"]),
                shares_links=bool(r["shares_links"]),
                b=float(r["b_before"]),
                iterations=int(lat.size),
                p50_us=p50,
                p99_us=p99,
                p50_ratio=p50 / base[0] if base else None,
                p99_ratio=p99 / base[1] if base else None,
                host_load_1m=float(r["load"]),
            )
        )
    return out
