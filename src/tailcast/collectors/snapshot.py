"""A queue snapshot with its b, and how it is stored (`snapshots` + `utilisation` tables)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast.collectors.jobs import QueueSnapshot
from tailcast.collectors.proc import RetryPolicy
from tailcast.collectors.sinfo import total_nodes
from tailcast.collectors.squeue import read_queue
from tailcast.collectors.utilisation import Utilisation, compute_b, own_job_id_from_env
from tailcast.store import ResultsDir


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: str
    queue: QueueSnapshot
    utilisation: Utilisation

    def summary(self) -> dict[str, Any]:
        """The JSON-friendly view `collect snapshot --json` prints."""
        return {
            "snapshot_id": self.snapshot_id,
            "taken_at": self.queue.taken_at,
            "cluster": self.queue.cluster,
            "source": self.queue.source,
            "slurm_version": self.queue.slurm_version,
            **self.utilisation.as_dict(),
        }


def snapshot_of(
    queue: QueueSnapshot,
    n_t: int,
    own_job_id: str | None = None,
    exclude_own: bool = True,
) -> Snapshot:
    util = compute_b(queue.jobs, n_t, own_job_id, exclude_own)
    return Snapshot(uuid.uuid4().hex, queue, util)


def take_snapshot(
    backend: str = "auto",
    n_t: int | None = None,
    own_job_id: str | None = None,
    exclude_own: bool = True,
    policy: RetryPolicy = RetryPolicy(),
) -> Snapshot:
    """Reads the live queue (and N_t from sinfo unless given) and computes b. The own job
    defaults to $SLURM_JOB_ID."""
    queue = read_queue(backend, policy)
    if n_t is None:
        n_t = total_nodes(policy)
    if own_job_id is None:
        own_job_id = own_job_id_from_env()
    return snapshot_of(queue, n_t, own_job_id, exclude_own)


def job_rows(snap: Snapshot) -> list[dict[str, Any]]:
    q = snap.queue
    return [
        {
            "snapshot_id": snap.snapshot_id,
            "cluster": q.cluster,
            "taken_at": q.taken_at,
            "source": q.source,
            "job_id": j.job_id,
            "user": j.user,
            "state": ",".join(j.states),
            "node_count": j.node_count,
            "nodes": list(j.nodes),
        }
        for j in q.jobs
    ]


def utilisation_row(snap: Snapshot) -> dict[str, Any]:
    q = snap.queue
    return {
        "snapshot_id": snap.snapshot_id,
        "cluster": q.cluster,
        "taken_at": q.taken_at,
        "source": q.source,
        **snap.utilisation.as_dict(),
    }


def write_snapshots(snaps: Sequence[Snapshot], results: ResultsDir | None = None) -> list[Path]:
    """Writes the snapshots as one `utilisation` file and one `snapshots` file (each atomic;
    the job rows are a part of the utilisation rows, written last: store/results.py)."""
    if not snaps:
        return []
    results = results or ResultsDir()
    stem = snaps[0].snapshot_id if len(snaps) == 1 else uuid.uuid4().hex
    jobs = [row for s in snaps for row in job_rows(s)]
    with results.all_or_nothing() as written:
        if jobs:
            results.write("snapshots", jobs, name=stem, part_of=f"utilisation/{stem}")
        results.write("utilisation", [utilisation_row(s) for s in snaps], name=stem)
    return list(written)
