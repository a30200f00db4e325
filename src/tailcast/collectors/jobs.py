"""What a queue snapshot holds, independent of where it came from (squeue JSON, squeue -o,
pyslurm): one `QueueJob` per job with its expanded node list."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import UTC, datetime

import hostlist

# Slurm's terminal states: 22.05's `squeue --json` lists recently finished jobs although
# they hold no nodes any more, so they are dropped client-side.
TERMINAL_STATES = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "REVOKED",
        "SPECIAL_EXIT",
        "TIMEOUT",
    }
)


@functools.lru_cache(maxsize=1 << 16)
def expand_nodes(expr: str) -> tuple[str, ...]:
    """Expands a Slurm hostlist ("node[01-03,07]") with python-hostlist; "" and "(null)"
    (what Slurm prints for pending jobs) mean no nodes. Raises ValueError when malformed.
    Cached: successive snapshots of a queue repeat almost every hostlist."""
    expr = expr.strip()
    if not expr or expr in {"(null)", "None", "n/a"}:
        return ()
    if not any(c in expr for c in "[],"):  # one plain node name: nothing to expand
        return (expr,)
    try:
        return tuple(hostlist.expand_hostlist(expr))
    except hostlist.BadHostlist as exc:
        raise ValueError(f"bad hostlist {expr!r}: {exc}") from exc


@dataclass(frozen=True)
class QueueJob:
    """One job of a queue snapshot.

    `job_id` is what users see ("12", or "12_3" for an array task); `raw_id` is the id the
    job's own environment holds in SLURM_JOB_ID (used to exclude the measuring job)."""

    job_id: str
    raw_id: str
    user: str
    states: tuple[str, ...]
    node_count: int
    nodes: tuple[str, ...]

    @property
    def state(self) -> str:
        return self.states[0] if self.states else "UNKNOWN"

    @property
    def running(self) -> bool:
        return "RUNNING" in self.states

    @property
    def pending(self) -> bool:
        return "PENDING" in self.states

    @property
    def finished(self) -> bool:
        return bool(self.states) and self.states[0] in TERMINAL_STATES

    @property
    def allocated_nodes(self) -> int:
        """Nodes the job holds: the expanded list when known, else Slurm's count."""
        return len(self.nodes) if self.nodes else self.node_count

    def matches(self, job_id: str) -> bool:
        return job_id in {self.job_id, self.raw_id}


@dataclass(frozen=True)
class QueueSnapshot:
    """All active jobs at one instant, from one source."""

    jobs: tuple[QueueJob, ...]
    source: str  # squeue-json | squeue-format | pyslurm | file
    taken_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    cluster: str | None = None
    slurm_version: str | None = None

    def active(self) -> QueueSnapshot:
        """The snapshot without finished jobs (22.05 lists them despite any filter)."""
        kept = tuple(j for j in self.jobs if not j.finished)
        return QueueSnapshot(kept, self.source, self.taken_at, self.cluster, self.slurm_version)
