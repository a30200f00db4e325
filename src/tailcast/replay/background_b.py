"""Background jobs sized from a background utilisation b (seed 001 §5.1): other users' jobs
of at least two nodes occupying ≈ b · N_t of the fabric's N_t endpoints, placed around the
foreground job, each a synthetic generator of the engine (see background.py).

- **Sizes.** From a recorded snapshot (`--background-snapshot ID`: the node counts of its
  running jobs with ≥ 2 nodes, the jobs b counts), drawn with replacement; otherwise
  `DEFAULT_JOB_SIZES`, drawn uniformly. Jobs are drawn until they hold round(b · N_t)
  nodes; the last one is cut to fit (a draw that would leave a single node behind, which
  could not communicate, takes it too).
- **Placement.** The free endpoints ordered by distance from the foreground: first those on
  the foreground's groups (leaf switches), then on the rest of its islands, then the
  others; groups in a seeded random order within each tier, endpoints of a group together.
  Jobs take consecutive runs of that order. This is what Slurm's topology-aware best fit
  does when the foreground's switches are the partly used ones (seed 001 §4.1: it fills
  the switches with the fewest idle nodes first).
- **Traffic.** Every background node offers `load` (a fraction of its injection bandwidth)
  in messages of `bytes`, Poisson arrivals, destinations by `pattern` within its job.
  b counts nodes, not bytes: squeue shows who runs, not how much they send, so the load
  per node is an assumption (`DEFAULT_LOAD`), not a measurement.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast.errors import UsageError
from tailcast.replay.background import PATTERNS, BackgroundJob
from tailcast.replay.fabric import Fabric
from tailcast.replay.placement import endpoints_of, placement_spec
from tailcast.traces.meta import read_meta

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


def draw_sizes(total: int, sizes: tuple[int, ...], rng: random.Random) -> list[int]:
    """Job sizes summing to exactly `total` nodes (0 or ≥ 2), each ≥ 2."""
    if total == 1:
        raise UsageError("b · N_t rounds to 1 node: a background job needs at least 2")
    pool = sizes or DEFAULT_JOB_SIZES
    out: list[int] = []
    left = total
    while left > 0:
        size = min(rng.choice(pool), left)
        if left - size == 1:
            size += 1  # never leave a single node behind
        out.append(size)
        left -= size
    return out


def nodes_around(
    layout: dict[str, Any], foreground: list[int], busy: list[int], rng: random.Random
) -> list[int]:
    """Endpoints not in `busy`, nearest to the `foreground` ones first (module doc)."""
    groups, islands = layout["group"], layout["island"]
    endpoints = int(layout["endpoints"])
    taken = set(busy)
    if groups is None:  # no hierarchy: the free endpoints in a seeded order
        free = [e for e in range(endpoints) if e not in taken]
        rng.shuffle(free)
        return free
    fg_groups = {groups[e] for e in foreground}
    fg_islands = {islands[e] for e in foreground}
    members: dict[int, list[int]] = {}
    for e in range(endpoints):
        if e not in taken:
            members.setdefault(int(groups[e]), []).append(e)
    tiers: list[list[int]] = [[], [], []]
    for g, nodes in members.items():
        rank = 0 if g in fg_groups else 1 if islands[nodes[0]] in fg_islands else 2
        tiers[rank].append(g)
    order: list[int] = []
    for tier in tiers:
        rng.shuffle(tier)
        for g in tier:
            order.extend(members[g])
    return order


def check_room(spec: BackgroundB, layout: dict[str, Any], taken: int) -> int:
    """The number of background nodes b sizes, round(b · N_t); UsageError when the fabric
    has no endpoint count or they do not fit on the endpoints `taken` ones leave free (the
    largest b in [0, 1] is not always placeable: the replayed job needs endpoints too)."""
    endpoints = layout["endpoints"]
    if endpoints is None:
        raise UsageError(
            "--background-b needs a fabric with a fixed number of endpoints (N_t), "
            f"not the contention-free {layout['model']}"
        )
    total = int(endpoints)
    target = round(spec.b * total)
    free = total - taken
    if target > free:
        largest = math.floor(free / total * 1e4) / 1e4
        raise UsageError(
            f"--background-b {spec.b}: b · N_t = {target} background nodes (N_t = {total} "
            f"endpoints) but only {free} are free ({taken} taken by the replayed job and any "
            f"other background): b <= {free}/{total} ({largest:g}) fits"
        )
    return target


def check_room_beside(
    sized: BackgroundB,
    trace: Path,
    fabric: Fabric,
    placement: str,
    seed: int,
    nodes: int | None,
    jobs: tuple[BackgroundJob, ...],
) -> None:
    """UsageError when the b-sized background cannot be placed beside the trace's ranks
    (placed as the replay will place them) and the --background jobs."""
    if fabric.endpoints is not None:
        ranks = read_meta(trace).ranks
        spec = placement_spec(placement, ranks, seed, fabric, nodes)
        taken = len(set(endpoints_of(fabric, ranks, spec))) + sum(j.nodes for j in jobs)
    else:
        taken = 0  # (check_room refuses a fabric without an endpoint count)
    check_room(sized, fabric.layout, taken)


def sized_jobs(
    spec: BackgroundB, layout: dict[str, Any], foreground: list[int], busy: list[int], seed: int
) -> list[BackgroundJob]:
    """The background jobs of `spec` on endpoints not `busy`, around the `foreground`."""
    endpoints = layout["endpoints"]
    target = check_room(spec, layout, len(set(busy)))
    rng = random.Random(seed ^ 0xB0B)
    if spec.placement == "around":
        order = nodes_around(layout, foreground, busy, rng)
    else:
        taken = set(busy)
        order = [e for e in range(int(endpoints)) if e not in taken]
        rng.shuffle(order)
    jobs, at = [], 0
    for size in draw_sizes(target, spec.job_sizes, rng):
        chosen = order[at : at + size]
        at += size
        jobs.append(
            BackgroundJob(
                pattern=spec.pattern,
                nodes=size,
                load=spec.load,
                bytes=spec.bytes,
                placement=",".join(map(str, chosen)),
            )
        )
    return jobs
