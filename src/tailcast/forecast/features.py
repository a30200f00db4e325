"""Features of a candidate job against one queue snapshot — the same function for training
rows (the snapshot an agent took just before a measured run) and for live forecasts, so a
model never sees a feature computed two ways.

Queue features follow seed 001 §5.1: b (eq. 1 and eq. 2) with its parts N_c, N_c', N_a,
N_t, plus the shape of the running multi-node jobs (count and size distribution). When a
topology is known, the share of the candidate's groups' and islands' nodes held by
multi-node background jobs says how much of that traffic crosses the candidate's switches
(§4.1, §6: locality decides how much background a collective meets). Candidate features:
benchmark and its pattern, message size, ranks, nodes, locality and the levels it spans.
Time of day and day of week (UTC) carry the cluster's daily rhythm. Unknown values are NaN,
which the gradient-boosting models route like any other value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from tailcast.collectors.benchmarks import BENCHMARKS, PATTERNS
from tailcast.collectors.jobs import QueueJob
from tailcast.collectors.topology import (
    DIFFERENT_ISLANDS,
    SAME_GROUP,
    SAME_ISLAND,
    Topology,
    UnknownNodeError,
)
from tailcast.collectors.utilisation import Utilisation, compute_b

FEATURES: tuple[str, ...] = (
    "b",
    "b_simple",
    "n_c",
    "n_c_dup",
    "n_a_dup",
    "n_t",
    "multi_node_jobs",
    "bg_job_nodes_mean",
    "bg_job_nodes_max",
    "bg_job_nodes_std",
    "bg_share_in_groups",
    "bg_share_in_islands",
    "benchmark",
    "pattern",
    "log2_msg_bytes",
    "ranks",
    "nodes",
    "locality",
    "levels_spanned",
    "groups_spanned",
    "islands_spanned",
    "hour_sin",
    "hour_cos",
    "weekday",
)
# What only a queue snapshot tells; unknown (NaN) when only b is given.
QUEUE_FEATURES: tuple[str, ...] = FEATURES[1:12]
# Integer codes of these are categories, not magnitudes.
CATEGORICAL: tuple[str, ...] = ("benchmark", "pattern")
# Seed 001 §5.2: communication time grows with b; the models may not learn otherwise.
MONOTONE_INCREASING: tuple[str, ...] = ("b", "b_simple")
LOCALITY_ORDER = (SAME_GROUP, SAME_ISLAND, DIFFERENT_ISLANDS)  # more spread, larger code
_PATTERN_NAMES = tuple(sorted(set(PATTERNS.values())))


@dataclass(frozen=True)
class Candidate:
    """The job a forecast is for. `node_list` when its nodes are known (a measured run, an
    explicit --nodelist, or the placement Slurm would likely choose); else `locality` may
    still be given."""

    benchmark: str
    msg_size_bytes: int
    nodes: int
    ranks: int
    node_list: tuple[str, ...] = ()
    locality: str | None = None


def _code(value: str | None, vocabulary: Sequence[str]) -> float:
    return float(vocabulary.index(value)) if value in vocabulary else math.nan


def _placement(cand: Candidate, topo: Topology | None) -> tuple[float, float, float, float]:
    """(locality code, levels spanned, groups, islands) of the candidate's nodes."""
    if topo is not None and cand.node_list:
        try:
            loc = topo.classify(cand.node_list)
            return (
                _code(loc.locality, LOCALITY_ORDER),
                float(loc.levels_spanned),
                float(loc.groups),
                float(loc.islands),
            )
        except UnknownNodeError:
            pass
    return _code(cand.locality, LOCALITY_ORDER), math.nan, math.nan, math.nan


def _background_shares(
    cand: Candidate, topo: Topology | None, busy: set[str]
) -> tuple[float, float]:
    """Share of the nodes under the candidate's leaf switches (groups) and under their
    parents (islands) that multi-node background jobs hold."""
    if topo is None or not cand.node_list or any(n not in topo.paths for n in cand.node_list):
        return math.nan, math.nan
    groups = {topo.paths[n] for n in cand.node_list}
    islands = {g[:-1] for g in groups}
    in_groups = [n for n, p in topo.paths.items() if p in groups]
    in_islands = [n for n, p in topo.paths.items() if p[:-1] in islands]
    return (
        sum(n in busy for n in in_groups) / len(in_groups),
        sum(n in busy for n in in_islands) / len(in_islands),
    )


def feature_row(
    jobs: Sequence[QueueJob],
    n_t: int,
    cand: Candidate,
    when: datetime,
    topo: Topology | None = None,
    own_job_id: str | None = None,
    exclude_own: bool = True,
) -> tuple[npt.NDArray[np.float64], Utilisation]:
    """One row in FEATURES order, and the snapshot's b with its parts."""
    util = compute_b(tuple(jobs), n_t, own_job_id, exclude_own)
    own = own_job_id if exclude_own else None
    multi = [
        j
        for j in jobs
        if j.running and j.allocated_nodes >= 2 and not (own is not None and j.matches(own))
    ]
    sizes = np.array([j.allocated_nodes for j in multi], dtype=np.float64)
    busy = {n for j in multi for n in j.nodes}
    share_groups, share_islands = _background_shares(cand, topo, busy)
    locality, levels, groups, islands = _placement(cand, topo)
    hour = when.hour + when.minute / 60.0
    values = {
        "b": util.b,
        "b_simple": util.b_simple,
        "n_c": util.n_c,
        "n_c_dup": util.n_c_dup,
        "n_a_dup": util.n_a_dup,
        "n_t": util.n_t,
        "multi_node_jobs": util.multi_node_jobs,
        "bg_job_nodes_mean": float(sizes.mean()) if sizes.size else 0.0,
        "bg_job_nodes_max": float(sizes.max()) if sizes.size else 0.0,
        "bg_job_nodes_std": float(sizes.std()) if sizes.size else 0.0,
        "bg_share_in_groups": share_groups,
        "bg_share_in_islands": share_islands,
        "benchmark": _code(cand.benchmark, BENCHMARKS),
        "pattern": _code(PATTERNS.get(cand.benchmark), _PATTERN_NAMES),
        "log2_msg_bytes": math.log2(max(cand.msg_size_bytes, 1)),
        "ranks": cand.ranks,
        "nodes": cand.nodes,
        "locality": locality,
        "levels_spanned": levels,
        "groups_spanned": groups,
        "islands_spanned": islands,
        "hour_sin": math.sin(2 * math.pi * hour / 24),
        "hour_cos": math.cos(2 * math.pi * hour / 24),
        "weekday": float(when.weekday()),
    }
    return np.array([float(values[name]) for name in FEATURES], dtype=np.float64), util


def feature_row_from_b(
    b: float,
    cand: Candidate,
    when: datetime,
    topo: Topology | None = None,
    profiles: Sequence[dict[str, float | None]] = (),
) -> npt.NDArray[np.float64]:
    """A row when only b is known (`predict tail --b`, runs stored without a snapshot): the
    other queue features are those of the training queues at the nearest b (`b_profiles`),
    or NaN without profiles. A model trained on snapshots never saw them unknown, and its
    trees would send an unknown value down whichever branch held more runs."""
    row, _ = feature_row((), 1, cand, when, topo)
    nearest = min(profiles, key=lambda p: abs(float(p["b"] or 0.0) - b), default=None)
    for name in QUEUE_FEATURES:
        value = nearest.get(name) if nearest is not None else None
        row[FEATURES.index(name)] = math.nan if value is None else float(value)
    row[FEATURES.index("b")] = b
    return row


def b_profiles(X: npt.NDArray[np.float64]) -> list[dict[str, float | None]]:
    """For each distinct b of training rows (X in FEATURES order), the median of every queue
    feature over the rows at that b (None where none is known): what a queue at that b
    looked like, for forecasts from b alone."""
    b = X[:, FEATURES.index("b")]
    out: list[dict[str, float | None]] = []
    for level in np.unique(np.round(b[np.isfinite(b)], 3)):
        at = np.isfinite(b) & (np.abs(b - level) < 5e-4)
        profile: dict[str, float | None] = {"b": float(level)}
        for name in QUEUE_FEATURES:
            known = X[at, FEATURES.index(name)]
            known = known[np.isfinite(known)]
            profile[name] = float(np.median(known)) if known.size else None
        out.append(profile)
    return out
