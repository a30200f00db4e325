"""`tailcast predict tail`'s question and answer: the tail of a job that would start now,
from the queue it would meet (live, a stored snapshot, or a bare b) — a learned model's
forecast when one is trained, the linear baseline in b, and, when asked, the tail a fabric
model gives under the queue's running jobs (`simulate.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tailcast.errors import NotAcceptedError, UsageError

if TYPE_CHECKING:
    from tailcast.forecast.baseline import TailPrediction
    from tailcast.forecast.live import QueueState
    from tailcast.forecast.simulate import SimulatedTail
    from tailcast.replay.fabric import Fabric
    from tailcast.store import Catalog


@dataclass(frozen=True)
class TailQuestion:
    benchmark: str
    size_bytes: int
    nodes: int | None = None
    ranks: int | None = None
    nodelist: tuple[str, ...] = ()
    locality: str | None = None
    # A bare b (no queue shape); else the stored snapshot `snapshot`, else the live queue.
    b: float | None = None
    snapshot: str | None = None
    model: str = "tail"
    # With a fabric: also replay the job under the queue's running jobs.
    simulate: Fabric | None = None
    simulate_trace: Path | None = None
    simulate_load: float = 0.3
    simulate_iterations: int = 200


@dataclass
class TailAnswer:
    b: float
    b_source: str
    learned: dict[str, Any] | None
    # The learned forecast as one line (None: no trained model).
    line: str | None
    baseline: TailPrediction | None
    simulated: SimulatedTail | None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "b": self.b,
            "b_source": self.b_source,
            "learned": self.learned,
            "baseline": self.baseline.as_dict() if self.baseline else None,
            "simulated": self.simulated.as_dict() if self.simulated else None,
            "notes": self.notes,
        }


def answer(q: TailQuestion, catalog: Catalog) -> TailAnswer:
    """The forecasts `q` asks for, from the runs and models in `catalog`'s store."""
    from tailcast.forecast.baseline import load_run_stats, predict_tail
    from tailcast.forecast.live import Request, forecast
    from tailcast.forecast.persist import load_model, model_dir

    if q.b is not None and q.snapshot is not None:
        raise UsageError("give --b or --snapshot, not both")
    if q.simulate is not None and q.b is not None:
        raise UsageError("--simulate places the queue's jobs: use the live queue or --snapshot")
    notes: list[str] = []
    queue = stored_queue(catalog, q.snapshot) if q.snapshot else None
    if queue is None and q.b is None:
        queue = live_queue()
    b_value = q.b if queue is None else None
    learned: dict[str, Any] | None = None
    line = None
    if (model_dir(q.model, catalog.results) / "model.json").exists():
        loaded = load_model(q.model, catalog.results)
        span = loaded.meta["data_range"].get("nodes") or [None, None]
        n = q.nodes or (int(span[0]) if span[0] is not None and span[0] == span[1] else None)
        if n is None:
            raise UsageError("give --nodes (the model was trained on several node counts)")
        req = Request(q.benchmark, q.size_bytes, n, q.ranks, q.nodelist, q.locality)
        fc = forecast(loaded, req, queue, b_value)
        learned, line, b_value = fc.as_dict(), fc.line(), fc.b
    else:
        notes.append(f"no trained model {q.model!r} (tailcast predict train): baseline only")
    if b_value is None and queue is not None:
        from tailcast.collectors.utilisation import compute_b

        b_value = compute_b(queue.jobs, queue.n_t).b
    assert b_value is not None
    runs = load_run_stats(catalog, q.benchmark, q.size_bytes, q.locality)
    simulated = _simulated(q, queue, learned, catalog) if q.simulate is not None else None
    try:
        baseline = predict_tail(runs, b_value, q.benchmark, q.size_bytes, q.locality)
    except NotAcceptedError as exc:
        if learned is None and simulated is None:
            raise
        baseline = None
        notes.append(f"baseline: {exc}")
    source = "--b" if queue is None else queue.source
    return TailAnswer(b_value, source, learned, line, baseline, simulated, notes)


def _simulated(
    q: TailQuestion, queue: QueueState | None, learned: dict[str, Any] | None, catalog: Catalog
) -> SimulatedTail:
    from tailcast.collectors.jobs import expand_nodes
    from tailcast.forecast.simulate import simulate_tail
    from tailcast.replay.measured_inputs import recorded_eager_threshold

    assert queue is not None and q.simulate is not None
    sim_nodes = (learned or {}).get("nodes") or q.nodes
    if sim_nodes is None:
        raise UsageError("--simulate needs --nodes (no trained model gives the count)")
    wanted = q.nodelist
    if not wanted and learned and learned.get("node_list"):
        wanted = tuple(expand_nodes(learned["node_list"]))
    return simulate_tail(
        q.simulate,
        queue,
        q.benchmark,
        q.size_bytes,
        int(sim_nodes),
        q.ranks or int(sim_nodes),
        wanted=wanted,
        trace=q.simulate_trace,
        iterations=q.simulate_iterations,
        load=q.simulate_load,
        # the eager threshold of the cluster's MPI as its runs recorded it (None: the
        # fabric's [host] value)
        eager_threshold_bytes=recorded_eager_threshold(catalog, q.benchmark),
    )


def stored_queue(catalog: Catalog, snapshot_id: str) -> QueueState:
    """The queue of a stored snapshot, without the measuring job when it was excluded."""
    from tailcast.forecast.live import queue_from_rows

    util = catalog.con.execute(
        "SELECT n_t, taken_at, own_job_id, own_job_excluded FROM utilisation WHERE snapshot_id = ?",
        [snapshot_id],
    ).fetchall()
    if not util:
        raise UsageError(f"no snapshot {snapshot_id!r} in the store (see `db sql`)")
    n_t, taken_at, own_id, excluded = util[0]
    jobs = catalog.con.execute(
        "SELECT job_id, state, node_count, nodes FROM snapshots WHERE snapshot_id = ?",
        [snapshot_id],
    ).fetchall()
    own = own_id if excluded else None
    rows = [
        {"job_id": j, "state": st, "node_count": c, "nodes": ns}
        for j, st, c, ns in jobs
        if own is None or str(j) != str(own)
    ]
    return queue_from_rows(rows, int(n_t), taken_at, f"snapshot {snapshot_id}")


def live_queue() -> QueueState:
    """The cluster's queue now, without the job that asks."""
    from tailcast.collectors.snapshot import take_snapshot
    from tailcast.forecast.live import QueueState

    snap = take_snapshot()
    own = snap.utilisation.own_job_id if snap.utilisation.own_job_excluded else None
    jobs = tuple(j for j in snap.queue.jobs if own is None or not j.matches(own))
    return QueueState(
        jobs, snap.utilisation.n_t, snap.queue.taken_at, f"live {snap.queue.source} snapshot"
    )
