"""b-sweep campaigns: measurement jobs run under background loads chosen on purpose, so the
store holds runs over a planned range of b to train forecasts on (issue 17, part 4).

A campaign's `[background]` table lists target levels of b. Each *phase* is one (level,
placement) pair, repeated `repeats` times, and the phases run one after another in a
shuffled order (seeded): time-ordered validation then sees every level early and late, and
never only the low levels in training and the high ones in testing.

A phase is three kinds of Slurm jobs, chained with dependencies at submission:
1. background jobs — real multi-node MPI jobs (`tailcast agent noise`) on randomly chosen
   nodes outside the measurement's node list, sized from `job_sizes` so that together they
   hold round(level · N_t) nodes; with the measuring job excluded, b (eq. 2) of such a queue
   is N_c/N_t, the level (seed 001 §5.1);
2. one measurement job (`agent run`, every pattern and size), `--dependency=after:` the
   background jobs (it starts once they run) and waiting `settle_s` for their ranks;
3. a one-node end job, `afterany:` the measurement job, that cancels the background jobs;
   the next phase's jobs depend on it, so phases never overlap.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hostlist

from tailcast.agent.noise import NOISE_PATTERNS
from tailcast.collectors.topology import Topology, UnknownNodeError
from tailcast.errors import InputError, UsageError
from tailcast.units import parse_size

MIN_JOB_NODES = 2  # single-node jobs do not count in b (seed 001 §5.1)


@dataclass(frozen=True)
class BackgroundSpec:
    """The `[background]` table of a campaign file."""

    levels: list[float]
    repeats: int = 1
    job_sizes: list[int] = field(default_factory=lambda: [2, 3, 4])
    seed: int = 1
    pattern: str = "alltoall"
    size: str = "64K"
    pause_ms: float = 2.0
    settle_s: float = 3.0


def load_background(body: Any, path: Path) -> BackgroundSpec | None:
    """Checks a campaign's `[background]` table; errors name the file and the key."""
    if body is None:
        return None
    if not isinstance(body, Mapping):
        raise InputError(path, "[background] must be a table")
    known = set(BackgroundSpec.__dataclass_fields__)
    unknown = sorted(set(body) - known)
    if unknown:
        raise InputError(path, f"unknown [background] keys {unknown}")
    if "levels" not in body:
        raise InputError(path, "[background] needs 'levels' (target b of each phase)")
    try:
        spec = BackgroundSpec(**body)
    except TypeError as exc:
        raise InputError(path, f"[background]: {exc}") from exc
    levels = spec.levels
    if not isinstance(levels, list) or not levels:
        raise InputError(path, "[background] levels must be a non-empty list of numbers")
    if not all(isinstance(x, int | float) and 0.0 <= x < 1.0 for x in levels):
        raise InputError(path, f"[background] levels must lie in [0, 1), got {levels}")
    sizes = spec.job_sizes
    if not sizes or not all(isinstance(s, int) and s >= MIN_JOB_NODES for s in sizes):
        raise InputError(path, f"[background] job_sizes must be integers ≥ 2, got {sizes}")
    if not isinstance(spec.repeats, int) or spec.repeats < 1:
        raise InputError(path, "[background] repeats must be an integer ≥ 1")
    if spec.pattern not in NOISE_PATTERNS:
        raise InputError(path, f"[background] pattern must be one of {', '.join(NOISE_PATTERNS)}")
    try:
        parse_size(str(spec.size))
    except UsageError as exc:
        raise InputError(path, f"[background] size: {exc}") from exc
    if spec.pause_ms < 0 or spec.settle_s < 0:
        raise InputError(path, "[background] pause_ms and settle_s must be ≥ 0")
    return spec


@dataclass(frozen=True)
class Phase:
    index: int
    level: float
    placement: str
    measure_nodes: tuple[str, ...]
    background: tuple[tuple[str, ...], ...]  # one node list per background job
    n_t: int

    @property
    def expected_b(self) -> float:
        """b (eq. 2) the phase's queue should show to the measuring job: N_c / N_t, as the
        background jobs are disjoint multi-node jobs."""
        return sum(len(job) for job in self.background) / self.n_t

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.index,
            "level": self.level,
            "expected_b": self.expected_b,
            "placement": self.placement,
            "measure_nodes": hostlist.collect_hostlist(list(self.measure_nodes)),
            "background": [hostlist.collect_hostlist(list(job)) for job in self.background],
        }


def split_sizes(total: int, sizes: list[int], rng: random.Random) -> list[int]:
    """Job sizes drawn from `sizes` that add up to `total` nodes, none below two nodes (a
    remainder of one node joins the last job)."""
    out: list[int] = []
    left = total
    while left >= MIN_JOB_NODES:
        size = min(rng.choice(sizes), left)
        if left - size == 1:  # would leave a single node: one more in this job instead
            size += 1
        out.append(size)
        left -= size
    if left == 1 and out:
        out[-1] += 1
    return out


def plan_phases(
    levels: list[float],
    placements: list[str],
    spec: BackgroundSpec,
    topo: Topology,
    nodes: int,
) -> list[Phase]:
    """Every (level, placement) `repeats` times in a seeded random order, each with its
    background jobs' node lists."""
    rng = random.Random(spec.seed)
    all_nodes = list(topo.paths)
    n_t = len(all_nodes)
    combos = [(lv, pl) for _ in range(spec.repeats) for lv in levels for pl in placements]
    rng.shuffle(combos)
    phases = []
    for index, (level, placement) in enumerate(combos):
        try:
            measure = topo.pick_nodes(nodes, placement)
        except UnknownNodeError as exc:
            raise UsageError(f"placement {placement}: {exc}") from exc
        free = [n for n in all_nodes if n not in set(measure)]
        wanted = round(level * n_t)
        if wanted == 1:
            wanted = MIN_JOB_NODES  # one node cannot be background traffic
        if wanted > len(free):
            raise UsageError(
                f"background level {level} needs {wanted} nodes besides the {nodes} measured "
                f"ones; the topology has {n_t} nodes"
            )
        chosen = rng.sample(free, wanted)
        jobs = []
        start = 0
        for size in split_sizes(wanted, spec.job_sizes, rng):
            jobs.append(tuple(sorted(chosen[start : start + size])))
            start += size
        phases.append(Phase(index, float(level), placement, tuple(measure), tuple(jobs), n_t))
    return phases
