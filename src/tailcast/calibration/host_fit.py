"""The host model fitted to measured small-message runs by replaying them.

What is fitted, and why from these runs: at a few bytes the network's serialisation is
nothing next to the host (TCP over veth on the lab: the kernel's per-message path and the
CPU the ranks share), so a run's latency distribution is o, the links' latency and the
host's detours. Replaying each fitting run (its trace on its nodes beside its background
jobs, tailcast.lab.compare) with trial values and comparing quantiles is the fit:

    loss = mean over runs and q in QUANTILES of |ln(simulated_q / measured_q)|

(a relative error at once of the body and the tail, symmetric in over- and
under-estimation; minimising KS instead weighs the body only). The minimum is searched
on fixed grids by a pattern search (fit_host): 100-250 replays of the fitting set, a few
CPU-seconds for six runs of 200 iterations. Grids, not a gradient method: the replay of a
few hundred noisy iterations is a step function of its parameters.

The detours are searched as (share of run time in detours, mean length), not (rate,
length): the data pin the share down first, and along a rate-length valley of constant
share coordinate sweeps stall (replays at 1600/s x 80 µs taken as measured were fitted
as 3200/s x 40 µs, loss 0.156 against 0.095 at the truth, before this choice).

Every link level gets the same fitted latency (lab calibrate's model: one latency per link
crossed); O (per byte) is not fitted — one small size cannot tell it from o.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from itertools import combinations, product
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

import numpy as np

QUANTILES: tuple[float, ...] = (10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0)
MAX_SWEEPS = 12


@dataclass(frozen=True)
class HostFit:
    """Values a calibration fits: LogGP's o, the latency per link crossed, and Poisson
    detours taking `detour_share` of the run time (rate x mean length), with lognormal
    lengths of mean `length_ns` and shape `length_sigma`: the `[host.noise]` kind
    "poisson" of the engine, at rate_per_s."""

    overhead_ns: float
    link_latency_ns: float
    detour_share: float
    length_ns: float
    length_sigma: float

    @property
    def rate_per_s(self) -> float:
        return self.detour_share / (self.length_ns * 1e-9)

    def as_dict(self) -> dict[str, float]:
        return asdict(self) | {"rate_per_s": self.rate_per_s}


# Grids: o and the link latency span the lab's ping-pong minima (26-96 µs one way); the
# detours span rare long preemptions (ms, a scheduler slice) to frequent short ones (µs).
GRIDS: dict[str, tuple[float, ...]] = {
    "overhead_ns": (2e3, 5e3, 10e3, 15e3, 20e3, 25e3, 30e3, 40e3),
    "link_latency_ns": (0.0, 2e3, 5e3, 10e3, 15e3),
    "detour_share": tuple(0.005 * 2 ** (k / 2) for k in range(13)),  # 0.005 .. 0.32
    "length_ns": (5e3, 10e3, 20e3, 40e3, 80e3, 160e3, 320e3, 1e6),
    "length_sigma": (0.5, 1.0, 1.5, 2.0, 2.5),
}
START = HostFit(
    overhead_ns=10e3, link_latency_ns=5e3, detour_share=0.04, length_ns=40e3, length_sigma=1.5
)

LONG_DETOURS = HostFit(
    overhead_ns=10e3, link_latency_ns=5e3, detour_share=0.04, length_ns=160e3, length_sigma=0.5
)


def quantile_loss(measured: np.ndarray, simulated: np.ndarray) -> float:
    """Mean |ln(simulated / measured)| over QUANTILES (both in the same unit, > 0)."""
    m = np.percentile(measured, QUANTILES)
    s = np.percentile(simulated, QUANTILES)
    return float(np.mean(np.abs(np.log(np.maximum(s, 1e-9) / np.maximum(m, 1e-9)))))


@dataclass(frozen=True)
class FitResult:
    fit: HostFit
    loss: float  # mean quantile loss over the fitting runs at `fit`
    run_losses: dict[str, float]  # run id -> its loss at `fit`
    replays: int  # trial replays of the whole fitting set
    # per parameter, the loss along its grid with the others at `fit`: how sharply the
    # runs pin it down (its residual)
    profiles: dict[str, list[tuple[float, float]]]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# A trial: the fitted values -> each fitting run's simulated latencies, by run id.
Simulate = Callable[[HostFit], dict[str, np.ndarray]]


# A point of a pattern search: a dataclass of grid values (HostFit, or what else is fitted
# the same way, lab/host_load.py's BackgroundDetours)
Point = TypeVar("Point", bound="DataclassInstance")


def _pair_steps(fit: Point, grids: dict[str, tuple[float, ...]]) -> list[Point]:
    """`fit` moved one grid step in each of two parameters at once: the diagonal moves a
    coordinate sweep cannot make."""
    at = {k: grids[k].index(getattr(fit, k)) for k in grids}
    out = []
    for a, b in combinations(grids, 2):
        for da, db in product((-1, 1), repeat=2):
            ia, ib = at[a] + da, at[b] + db
            if 0 <= ia < len(grids[a]) and 0 <= ib < len(grids[b]):
                out.append(replace(fit, **{a: grids[a][ia], b: grids[b][ib]}))
    return out


def fit_host(
    simulate: Simulate,
    measured: dict[str, np.ndarray],
    start: HostFit = START,
    grids: dict[str, tuple[float, ...]] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> FitResult:
    """Pattern search of the quantile loss over `grids` from `start` (a grid point):
    coordinate sweeps until one changes nothing, then the best two-parameter diagonal
    step if it improves (the loss has valleys across two parameters — detour length and
    its spread, o and the link latency — along which coordinate sweeps stall: replays at a
    known point taken as measured were fitted at twice its loss without the diagonal
    steps), and sweeps again; with the default start and grids, also from LONG_DETOURS, the
    better of the two kept."""
    grids = grids or GRIDS
    if not measured:
        raise ValueError("no fitting runs")
    cache: dict[HostFit, dict[str, float]] = {}

    def losses(fit: HostFit) -> dict[str, float]:
        if fit not in cache:
            sim = simulate(fit)
            cache[fit] = {rid: quantile_loss(m, sim[rid]) for rid, m in measured.items()}
        return cache[fit]

    def total(fit: HostFit) -> float:
        return float(np.mean(list(losses(fit).values())))

    found = [pattern_search(start, grids, total, progress)]
    # A second start with long, rare detours: the loss has basins apart along detour length
    # (replays at a known host taken as measured, with buckets and CPU occupancy, stopped at
    # 1.8x the truth's loss from the first start alone)
    if start == START and grids is GRIDS:
        found.append(pattern_search(LONG_DETOURS, grids, total, progress))
    best, best_loss = min(found, key=lambda f: f[1])
    profiles = {  # after a sweep that changed nothing these replays are all cached
        key: [(v, total(replace(best, **{key: v}))) for v in values]
        for key, values in grids.items()
    }
    return FitResult(best, best_loss, losses(best), len(cache), profiles)


def pattern_search(
    start: Point,
    grids: dict[str, tuple[float, ...]],
    total: Callable[[Point], float],
    progress: Callable[[str], None],
) -> tuple[Point, float]:
    """Coordinate sweeps and diagonal steps from `start` (a point on `grids`, keyed by its
    fields) until neither improves `total`."""
    best, best_loss = start, total(start)
    for sweep in range(MAX_SWEEPS):
        changed = False
        for key, values in grids.items():
            for v in values:
                trial = replace(best, **{key: v})
                loss = total(trial)
                if loss < best_loss - 1e-12:
                    best, best_loss, changed = trial, loss, True
        steps = _pair_steps(best, grids) if not changed else []
        if steps:
            diagonal = min(steps, key=total)
            if total(diagonal) < best_loss - 1e-12:
                best, best_loss, changed = diagonal, total(diagonal), True
        progress(f"sweep {sweep + 1}: loss {best_loss:.3f} at {best}")
        if not changed:
            break
    return best, best_loss
