"""Background jobs sized from a background utilisation b (seed 001 §5.1): other users' jobs
of at least two nodes occupying round(b · N_t) of the fabric's N_t endpoints, each a
synthetic generator of the engine (see background.py). This module holds what the user
declares; the engine draws the sizes and places the jobs on the fabric it builds for the
replay (`crates/replay-engine/src/scenario/sized_b.rs`).

- **Sizes.** From a recorded snapshot (`--background-snapshot ID`: the node counts of its
  running jobs with ≥ 2 nodes, the jobs b counts), drawn with replacement; otherwise
  `DEFAULT_JOB_SIZES`, drawn uniformly.
- **Placement.** `scattered` over the free endpoints, or `around` the foreground job (its
  groups first, then its islands, then the rest: Slurm's topology-aware best fit).
- **Traffic.** Every background node offers `load` (a fraction of its injection bandwidth)
  in messages of `bytes`, Poisson arrivals, destinations by `pattern` within its job.
  b counts nodes, not bytes: squeue shows who runs, not how much they send, so the load
  per node is an assumption (`DEFAULT_LOAD`), not a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tailcast.errors import UsageError
from tailcast.replay.background import PATTERNS

# Default job sizes (nodes), drawn uniformly: the powers of two from 2 to 64. An assumption
# (MPI jobs come in powers of two far more often than not; 64 nodes is 6.5 % of a
# 980-node machine), used when no snapshot of the real queue is given.
DEFAULT_JOB_SIZES = (2, 4, 8, 16, 32, 64)
# Offered load per background node, as a fraction of its injection bandwidth, and the size
# of its messages (see the module doc). At b = 0.7 on `marconi100` they load the inner links
# to about a third of their capacity on average (local 0.31, global 0.28 in a 16-rank
# alltoall replay; the busiest local link 0.55); 4 MiB messages keep background events few
# enough for a 1000-iteration replay to take seconds.
DEFAULT_LOAD = 0.3
DEFAULT_BYTES = 4 << 20
PLACEMENTS = ("scattered", "around")


@dataclass(frozen=True)
class BackgroundB:
    """Background traffic sized from b."""

    b: float
    pattern: str = "uniform"
    load: float = DEFAULT_LOAD
    bytes: int = DEFAULT_BYTES
    # Job sizes (from a snapshot); empty: DEFAULT_JOB_SIZES.
    job_sizes: tuple[int, ...] = ()
    # Where the sizes came from ("default" or "snapshot:ID"), for the record.
    sizes_from: str = "default"
    # How the jobs sit on the free endpoints: PLACEMENTS.
    placement: str = "scattered"

    def __post_init__(self) -> None:
        if not 0.0 <= self.b <= 1.0:
            raise UsageError(f"--background-b {self.b}: must be in [0, 1]")
        if self.pattern not in PATTERNS:
            raise UsageError(f"--background-pattern {self.pattern!r}: one of {', '.join(PATTERNS)}")
        if not 0.0 <= self.load <= 1.0:
            raise UsageError(f"--background-load {self.load}: must be in [0, 1]")
        if self.bytes <= 0:
            raise UsageError("--background-bytes must be > 0")
        if self.placement not in PLACEMENTS:
            raise UsageError(
                f"--background-placement {self.placement!r}: one of {', '.join(PLACEMENTS)}"
            )
        if any(s < 2 for s in self.job_sizes):
            raise UsageError("background job sizes must be >= 2 nodes (b counts only those)")

    def describe(self) -> dict[str, Any]:
        return {
            "b": self.b,
            "pattern": self.pattern,
            "load": self.load,
            "bytes": self.bytes,
            "sizes_from": self.sizes_from,
            "placement": self.placement,
        }
