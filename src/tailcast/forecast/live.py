"""A forecast for one job from a trained model and a queue: the live queue, a stored
snapshot, or only a value of b. Shared by `predict tail` and the warm forecast service."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import hostlist

from tailcast.collectors.jobs import QueueJob
from tailcast.collectors.topology import UnknownNodeError
from tailcast.errors import UsageError
from tailcast.forecast.dataset import queue_jobs_from_rows
from tailcast.forecast.features import FEATURES, Candidate, feature_row, feature_row_from_b
from tailcast.forecast.models import BANDS, QUANTILES, band_of
from tailcast.forecast.persist import LoadedModel
from tailcast.forecast.placement import likely_nodes
from tailcast.units import format_size

LIKELY, UNLIKELY = 0.5, 0.15  # P(tail) cut-offs for the words; 0.15 = the rate p85 implies


@dataclass(frozen=True)
class Request:
    benchmark: str
    msg_size_bytes: int
    nodes: int
    ranks: int | None = None  # default: one per node (seed 001)
    nodelist: tuple[str, ...] = ()
    locality: str | None = None


@dataclass(frozen=True)
class QueueState:
    """The jobs of one snapshot (own job already left out) and N_t."""

    jobs: tuple[QueueJob, ...]
    n_t: int
    taken_at: datetime
    source: str


@dataclass
class Forecast:
    benchmark: str
    msg_size_bytes: int
    nodes: int
    ranks: int
    b: float
    b_source: str
    placement: str  # how the nodes/locality were chosen
    locality: str | None
    node_list: str | None
    median: dict[str, float]
    bands: dict[str, dict[str, list[float]]]
    quantiles: dict[str, dict[str, float]]
    tail_probability: float
    tail_verdict: str
    model: str
    outside_training: list[str] = field(default_factory=list)
    # share of held-out runs inside the 90 % band when the model was validated, per target
    band_90_coverage: dict[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One line for a terminal, as the cli_filter hook prints it."""
        lo, hi = self.bands["p99_us"]["90%"]
        point = self.median["p99_us"]
        unit, div = ("s", 1e6) if point >= 1e6 else ("ms", 1e3) if point >= 1e3 else ("µs", 1.0)
        where = f" ({self.locality.replace('_', ' ')})" if self.locality else ""
        text = (
            f"{self.benchmark} {format_size(self.msg_size_bytes)} on {self.nodes} nodes{where} "
            f"now: p99 ≈ {point / div:.2g} {unit} [{lo / div:.2g}, {hi / div:.2g}], "
            f"long tail {self.tail_verdict} (P = {self.tail_probability:.2f}, b = {self.b:.2f})"
        )
        if self.outside_training:
            text += " — outside the training data: " + "; ".join(self.outside_training)
        return text


def _verdict(p: float) -> str:
    return "likely" if p >= LIKELY else "unlikely" if p < UNLIKELY else "possible"


def _outside(model: LoadedModel, req: Request, b: float, locality: str | None) -> list[str]:
    rng = model.meta.get("data_range", {})
    notes = []
    b_span = rng.get("b")
    if b_span and not b_span[0] - 0.05 <= b <= b_span[1] + 0.05:
        notes.append(f"b trained on {b_span[0]:.2f}–{b_span[1]:.2f}")
    n_span = rng.get("nodes")
    if n_span and not n_span[0] <= req.nodes <= n_span[1]:
        notes.append(f"nodes trained on {n_span[0]:g}–{n_span[1]:g}")
    if req.benchmark not in rng.get("benchmarks", [req.benchmark]):
        notes.append(f"no {req.benchmark} runs")
    if req.msg_size_bytes not in rng.get("msg_size_bytes", [req.msg_size_bytes]):
        notes.append(f"no {format_size(req.msg_size_bytes)} runs")
    if locality is not None and locality not in rng.get("localities", [locality]):
        notes.append(f"no {locality} runs")
    return notes


def _candidate(
    model: LoadedModel, req: Request, queue: QueueState | None
) -> tuple[Candidate, str, str | None]:
    """The candidate with its nodes (given, or where Slurm would likely put it)."""
    ranks = req.ranks or req.nodes
    if req.nodelist:
        nodes, how = req.nodelist, "--nodelist"
    elif req.locality is None and queue is not None and model.topology is not None:
        busy = {n for j in queue.jobs if j.running for n in j.nodes}
        picked = likely_nodes(model.topology, busy, req.nodes)
        nodes, how = (tuple(picked), "likely placement") if picked else ((), "job would wait")
    else:
        nodes, how = (), "--locality" if req.locality else "unknown"
    locality = req.locality
    if nodes and model.topology is not None:
        try:
            locality = model.topology.classify(nodes).locality
        except UnknownNodeError:  # nodes outside the model's topology: locality as given
            locality = req.locality
    cand = Candidate(req.benchmark, req.msg_size_bytes, req.nodes, ranks, nodes, locality)
    return cand, how, locality


def forecast(
    model: LoadedModel,
    req: Request,
    queue: QueueState | None = None,
    b: float | None = None,
    when: datetime | None = None,
) -> Forecast:
    """From a queue (every feature) or, without one, from b alone."""
    if req.nodes < 2:
        raise UsageError("a forecast needs a multi-node job (--nodes ≥ 2)")
    when = when or (queue.taken_at if queue is not None else datetime.now(UTC))
    cand, how, locality = _candidate(model, req, queue)
    if queue is not None:
        x, util = feature_row(queue.jobs, queue.n_t, cand, when, model.topology)
        b_value, b_source = util.b, queue.source
    elif b is not None:
        profiles = model.meta.get("b_profiles", [])
        x = feature_row_from_b(b, cand, when, model.topology, profiles)
        b_value, b_source = b, "--b"
    else:
        raise UsageError("a forecast needs a queue snapshot or a value of b")
    if not math.isfinite(x[FEATURES.index("locality")]) and (
        "locality" in model.forecaster.feature_names()
    ):
        # A tree sends an unknown value down its larger branch: a forecast for one placement
        # presented as one for any. The caller must say where the job runs.
        trained = ", ".join(model.meta.get("data_range", {}).get("localities", []))
        raise UsageError(
            f"where the job runs is unknown (no --nodelist, --locality, or topology to place "
            f"it) and the model's latencies depend on it: give --locality ({trained}) or "
            "--nodelist"
        )
    X = x[None, :]
    q = model.forecaster.quantiles(X)
    key = (req.benchmark, req.msg_size_bytes, locality or "unknown")
    p = float(model.forecaster.tail_probability(X, [key])[0])
    if not math.isfinite(p):
        p = model.forecaster.base_rate
    median = {t: float(v[0, QUANTILES.index(0.5)]) for t, v in q.items()}
    bands = {
        t: {name: [float(a[0]), float(z[0])] for name in BANDS for a, z in [band_of(v, name)]}
        for t, v in q.items()
    }
    return Forecast(
        benchmark=req.benchmark,
        msg_size_bytes=req.msg_size_bytes,
        nodes=req.nodes,
        ranks=cand.ranks,
        b=float(b_value),
        b_source=b_source,
        placement=how,
        locality=locality,
        node_list=hostlist.collect_hostlist(list(cand.node_list)) if cand.node_list else None,
        median=median,
        bands=bands,
        quantiles={
            t: {f"{tau:g}": float(v[0, j]) for j, tau in enumerate(QUANTILES)} for t, v in q.items()
        },
        tail_probability=p,
        tail_verdict=_verdict(p),
        model=str(model.meta.get("name", model.path.name)),
        outside_training=_outside(model, req, float(b_value), locality),
        band_90_coverage=_band_coverage(model),
    )


def _band_coverage(model: LoadedModel) -> dict[str, float] | None:
    scores = model.meta.get("scores")
    if not scores:
        return None
    return {t: float(r["model"]["coverage"]["90%"]) for t, r in scores["targets"].items()}


def queue_from_rows(
    rows: list[dict[str, Any]], n_t: int, taken_at: datetime, source: str
) -> QueueState:
    """A stored snapshot's job rows as a QueueState (for `predict tail --snapshot`)."""
    return QueueState(tuple(queue_jobs_from_rows(rows)), n_t, taken_at, source)
