"""Training rows from the store: one per accepted run, with the features of the queue
snapshot the agent took just before it (what a submission-time forecast can know) and the
run's latency targets.

A run's targets come from its per-iteration `samples` (mean, p50, p99 of the max-over-ranks
latency, as `analyze correlate` computes them) or, for OSU runs, from its `osu_results` row.
Its features come from the `snapshots` rows of `versions_json.snapshot_before`; a run
without them (older stores) is described by its b_before alone, the other queue features
unknown — exactly what `predict tail --b` knows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from tailcast.collectors.jobs import QueueJob
from tailcast.collectors.topology import Topology
from tailcast.errors import NotAcceptedError
from tailcast.forecast.features import FEATURES, Candidate, feature_row, feature_row_from_b
from tailcast.store import Catalog

FloatArray = npt.NDArray[np.float64]

RUNS_QUERY = """
WITH sample_stats AS (
    SELECT run_id, avg(latency_us) AS mean_us,
           quantile_cont(latency_us, 0.5) AS p50_us, quantile_cont(latency_us, 0.99) AS p99_us
    FROM samples WHERE isfinite(latency_us) GROUP BY run_id
)
SELECT r.run_id, r.slurm_job_id, r.benchmark, r.msg_size_bytes, r.ranks, r.nodes,
       r.locality, r.b_before, r.b_after, r.started_at, r.ended_at, r.versions_json,
       coalesce(s.mean_us, o.avg_latency_us) AS mean_us,
       coalesce(s.p50_us, o.p50_latency_us) AS p50_us,
       coalesce(s.p99_us, o.p99_latency_us) AS p99_us
FROM runs r
LEFT JOIN sample_stats s USING (run_id)
LEFT JOIN osu_results o ON o.run_id = r.run_id AND o.size_bytes = r.msg_size_bytes
WHERE r.b_accepted AND r.started_at IS NOT NULL
ORDER BY r.started_at, r.run_id
"""
SNAPSHOT_JOBS_QUERY = (
    "SELECT snapshot_id, job_id, state, node_count, nodes FROM snapshots "
    "WHERE snapshot_id IN (SELECT unnest($ids))"
)
SNAPSHOT_UTIL_QUERY = (
    "SELECT snapshot_id, n_t, own_job_id, own_job_excluded FROM utilisation "
    "WHERE snapshot_id IN (SELECT unnest($ids))"
)
TARGETS = ("mean_us", "p99_us", "p99_over_p50")


@dataclass
class TrainingSet:
    """Rows in time order. `key` is the baseline's group (benchmark, size, locality)."""

    X: FloatArray
    targets: dict[str, FloatArray]
    run_ids: list[str]
    cv_groups: list[str]  # runs of one Slurm job share a queue and a time: one CV group
    started: FloatArray  # epoch seconds
    ended: FloatArray
    key: list[tuple[str, int, str]]
    b_run: FloatArray  # mean of b_before and b_after, what the linear baseline fits on
    b_submit: FloatArray  # b_before: what is known when the job is submitted
    without_snapshot: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.run_ids)

    def subset(self, idx: npt.NDArray[np.intp]) -> TrainingSet:
        pick = [int(i) for i in idx]
        return TrainingSet(
            self.X[idx],
            {k: v[idx] for k, v in self.targets.items()},
            [self.run_ids[i] for i in pick],
            [self.cv_groups[i] for i in pick],
            self.started[idx],
            self.ended[idx],
            [self.key[i] for i in pick],
            self.b_run[idx],
            self.b_submit[idx],
        )

    def data_range(self) -> dict[str, Any]:
        """What the model has seen: for its metadata and extrapolation warnings."""
        col = {name: self.X[:, i] for i, name in enumerate(FEATURES)}

        def span(values: FloatArray) -> list[float] | None:
            finite = values[np.isfinite(values)]
            return [float(finite.min()), float(finite.max())] if finite.size else None

        return {
            "runs": len(self),
            "cv_groups": len(set(self.cv_groups)),
            "first_started_at": _iso(float(self.started.min())),
            "last_started_at": _iso(float(self.started.max())),
            "b": span(col["b"]),
            "nodes": span(col["nodes"]),
            "ranks": span(col["ranks"]),
            "msg_size_bytes": sorted({k[1] for k in self.key}),
            "benchmarks": sorted({k[0] for k in self.key}),
            "localities": sorted({k[2] for k in self.key}),
            "runs_without_snapshot": self.without_snapshot,
        }


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def _snapshot_id(versions_json: str | None) -> str | None:
    try:
        value = json.loads(versions_json or "{}").get("snapshot_before")
    except (json.JSONDecodeError, AttributeError):
        return None
    return str(value) if value else None


def queue_jobs_from_rows(rows: Sequence[dict[str, Any]]) -> list[QueueJob]:
    """Stored `snapshots` rows back as the QueueJobs b is computed from."""
    return [
        QueueJob(
            job_id=str(r["job_id"]),
            raw_id=str(r["job_id"]),
            user="",
            states=tuple((r["state"] or "").split(",")),
            node_count=int(r["node_count"] or 0),
            nodes=tuple(r["nodes"] or ()),
        )
        for r in rows
    ]


def load_training_set(catalog: Catalog, topo: Topology | None) -> TrainingSet:
    """Every accepted run with latency targets, in start order."""
    runs = catalog.rows(RUNS_QUERY)
    snap_ids = sorted({s for r in runs if (s := _snapshot_id(r["versions_json"]))})
    jobs_of: dict[str, list[dict[str, Any]]] = {}
    util_of: dict[str, dict[str, Any]] = {}
    if snap_ids:
        for row in catalog.con.execute(SNAPSHOT_JOBS_QUERY, {"ids": snap_ids}).fetchall():
            sid, job_id, state, count, nodes = row
            jobs_of.setdefault(sid, []).append(
                {"job_id": job_id, "state": state, "node_count": count, "nodes": nodes}
            )
        for sid, n_t, own, excluded in catalog.con.execute(
            SNAPSHOT_UTIL_QUERY, {"ids": snap_ids}
        ).fetchall():
            util_of[sid] = {"n_t": n_t, "own_job_id": own, "own_job_excluded": excluded}
    rows: list[FloatArray] = []
    kept: list[dict[str, Any]] = []
    skipped = {"no_latency": 0}
    without = 0
    for r in runs:
        if not all(r[k] is not None and r[k] > 0 for k in ("mean_us", "p50_us", "p99_us")):
            skipped["no_latency"] += 1
            continue
        nodes = tuple(r["nodes"] or ())
        cand = Candidate(
            benchmark=r["benchmark"] or "",
            msg_size_bytes=int(r["msg_size_bytes"] or 0),
            nodes=len(nodes) or int(r["ranks"] or 0),
            ranks=int(r["ranks"] or len(nodes)),
            node_list=nodes,
            locality=r["locality"],
        )
        when: datetime = r["started_at"]
        sid = _snapshot_id(r["versions_json"])
        util = util_of.get(sid or "")
        if sid is not None and util is not None and util["n_t"]:
            x, _ = feature_row(
                queue_jobs_from_rows(jobs_of.get(sid, [])),
                int(util["n_t"]),
                cand,
                when,
                topo,
                util["own_job_id"],
                bool(util["own_job_excluded"]),
            )
        else:
            x = feature_row_from_b(float(r["b_before"]), cand, when, topo)
            without += 1
        rows.append(x)
        kept.append(r)
    if not kept:
        raise NotAcceptedError(
            "no accepted runs with latency data in the store: run a campaign first "
            "(tailcast agent submit)"
        )

    def arr(name: str) -> FloatArray:
        return np.array([float(r[name]) for r in kept], dtype=np.float64)

    def b_mean(r: dict[str, Any]) -> float:
        present = [b for b in (r["b_before"], r["b_after"]) if b is not None]
        return float(np.mean(present))

    mean, p50, p99 = arr("mean_us"), arr("p50_us"), arr("p99_us")
    return TrainingSet(
        X=np.vstack(rows),
        targets={"mean_us": mean, "p99_us": p99, "p99_over_p50": p99 / p50},
        run_ids=[r["run_id"] for r in kept],
        cv_groups=[str(r["slurm_job_id"] or r["run_id"]) for r in kept],
        started=np.array([r["started_at"].timestamp() for r in kept]),
        ended=np.array([(r["ended_at"] or r["started_at"]).timestamp() for r in kept]),
        key=[
            (r["benchmark"] or "", int(r["msg_size_bytes"] or 0), r["locality"] or "unknown")
            for r in kept
        ],
        b_run=np.array([b_mean(r) for r in kept]),
        b_submit=arr("b_before"),
        without_snapshot=without,
        skipped=skipped,
    )
