"""Background network utilisation `b` (Salimi Beni & Cosenza, seed 001 §5.1), exactly as
DESIGN.md "The heuristic":

Over *running* jobs with ≥ 2 allocated nodes (pending and single-node jobs are ignored —
they do not communicate over the network):
- N_c  = unique nodes of those jobs;
- N_c' = the same nodes counted with duplication (a node shared by k such jobs counts k times);
- N_a  = all allocated nodes of all running jobs, with duplication;
- N_t  = physical nodes of the cluster.
eq. 1: b = N_c / N_t;  eq. 2 (the one used): b = (N_c / N_t) · (N_c' / N_a).
A run's b is accepted only if |b_after - b_before| < threshold (default 0.05, seed 001's 5 %).
Whether the measuring job itself is excluded is an option, recorded with the result
(default: excluded, so our own traffic is not counted as background).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from tailcast.collectors.jobs import QueueJob
from tailcast.errors import UsageError

DEFAULT_THRESHOLD = 0.05


@dataclass(frozen=True)
class Utilisation:
    """b and every quantity it is made of."""

    n_t: int
    n_c: int
    n_c_dup: int
    n_a_dup: int
    b_simple: float  # eq. 1
    b: float  # eq. 2
    running_jobs: int
    pending_jobs: int
    multi_node_jobs: int
    own_job_id: str | None
    own_job_excluded: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def own_job_id_from_env() -> str | None:
    """The job we run in, if any (SLURM_JOB_ID is the raw id, also for array tasks)."""
    return os.environ.get("SLURM_JOB_ID") or None


def compute_b(
    jobs: list[QueueJob] | tuple[QueueJob, ...],
    n_t: int,
    own_job_id: str | None = None,
    exclude_own: bool = True,
) -> Utilisation:
    """b for one snapshot. `own_job_id` is removed from every count when `exclude_own`."""
    if n_t <= 0:
        raise UsageError(f"N_t (total nodes) must be positive, got {n_t}")
    excluded = bool(exclude_own and own_job_id)
    running = [
        j for j in jobs if j.running and not (excluded and own_job_id and j.matches(own_job_id))
    ]
    pending = sum(1 for j in jobs if j.pending)
    communicating = [j for j in running if j.allocated_nodes >= 2]
    unique: set[str] = set()
    anonymous = 0  # multi-node jobs whose node names are unknown (only a count): assume disjoint
    for job in communicating:
        if job.nodes:
            unique.update(job.nodes)
        else:
            anonymous += job.node_count
    n_c = len(unique) + anonymous
    n_c_dup = sum(j.allocated_nodes for j in communicating)
    n_a_dup = sum(j.allocated_nodes for j in running)
    b_simple = n_c / n_t
    b = b_simple * (n_c_dup / n_a_dup) if n_a_dup else 0.0
    return Utilisation(
        n_t=n_t,
        n_c=n_c,
        n_c_dup=n_c_dup,
        n_a_dup=n_a_dup,
        b_simple=b_simple,
        b=b,
        running_jobs=len(running),
        pending_jobs=pending,
        multi_node_jobs=len(communicating),
        own_job_id=own_job_id,
        own_job_excluded=excluded,
    )


def b_accepted(b_before: float, b_after: float, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """Seed 001: keep a run's b only if it did not move by `threshold` or more during it."""
    return abs(b_after - b_before) < threshold
