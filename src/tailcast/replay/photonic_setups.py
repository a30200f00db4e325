"""The experiments of seed 000 (MZI Beneš ToR, `benes_psf`) and seed 003 (Gemini,
`banyan_circuit`) as tailcast replays: the fabric variants they sweep, the replay options
that give a trace the papers' traffic semantics, and seed 003's load normalised to a Gemini
fabric (Eq. 8). The bench, the tests and the report build
on these so that a stored replay says by its fabric TOML which point of a sweep it is.

Seed 000 (§IV-A): a flow leaves when its task issues it — INRFlow's flows do not wait for
the receiver — so messages are sent eagerly whatever their size; tasks sit on randomly
chosen ports ("tasks being distributed randomly across the network"); host overheads are
zero (flow-level model). Seed 003 (§4.3): open-loop Poisson arrivals, no handshake.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tailcast.errors import UsageError
from tailcast.replay.fabric import Fabric, parse_fabric
from tailcast.replay.scenario import ReplayOptions

if TYPE_CHECKING:
    import pyarrow as pa

POLICIES = ("fifo", "lru", "lfu", "rnd", "rr", "arr", "mrr")
ROUTINGS = ("rnd", "mb", "mx")
SWITCHINGS = ("cs", "tdm")
REGULAR = ("all2all", "allreduce", "bisection", "nbodies", "shift")
IRREGULAR = ("hotregion", "randomapp", "torlocal", "torremote")
PROTOCOLS = ("basic", "voq")

# Larger than any flow: every message is eager (no rendezvous wait for the receiver).
ALWAYS_EAGER = 1 << 50


@dataclass(frozen=True)
class PsfPoint:
    """One configuration of seed 000's sweep."""

    ports: int = 16
    arbitration: str = "fifo"
    routing: str = "rnd"
    switching: str = "cs"

    def fabric(self) -> Fabric:
        text = (
            f'# seed 000 sweep point\nmodel = "benes_psf"\nports = {self.ports}\n'
            f'arbitration = "{self.arbitration}"\nrouting = "{self.routing}"\n'
            f'switching = "{self.switching}"\n'
        )
        name = f"benes-psf-{self.ports}-{self.switching}-{self.routing}-{self.arbitration}"
        return parse_fabric(text, f"<{name}>", name=name)


def seed000_options(seed: int) -> ReplayOptions:
    return ReplayOptions(
        seed=seed, placement="random", eager_threshold_bytes=ALWAYS_EAGER, record_messages=False
    )


@dataclass(frozen=True)
class GeminiPoint:
    """One network of seed 003's simulations (Γ, Θ, α_sig from the model's defaults)."""

    ports: int = 16
    protocol: str = "basic"

    def fabric(self) -> Fabric:
        text = (
            f'# seed 003 sweep point\nmodel = "banyan_circuit"\nports = {self.ports}\n'
            f'protocol = "{self.protocol}"\nrendezvous = "none"\n'
        )
        name = f"gemini-{self.ports}-{self.protocol}"
        return parse_fabric(text, f"<{name}>", name=name)


def seed003_options(seed: int) -> ReplayOptions:
    return ReplayOptions(seed=seed, placement="linear", record_messages=False)


@dataclass(frozen=True)
class GeminiLink:
    """What Eq. 8 needs of a Gemini fabric."""

    ports: int
    optical_gbps: float
    electrical_gbps: float
    signal_bytes: int
    alpha_sig: float

    def max_efficiency(self, mean_bytes: float) -> float:
        """Eq. 9: η = Γ / (Γ + Θ(2(1 + α_sig) log2 N + 3))."""
        gamma = mean_bytes / self.signal_bytes
        theta = self.optical_gbps / self.electrical_gbps
        return gamma / (gamma + theta * (2 * (1 + self.alpha_sig) * math.log2(self.ports) + 3))

    def message_rate_per_ns(self, load: float, mean_bytes: float) -> float:
        """Messages per ns per terminal at `load` × Eq. 8's per-terminal throughput."""
        bytes_per_ns = self.optical_gbps / 8.0 * self.max_efficiency(mean_bytes)
        return load * bytes_per_ns / mean_bytes


def gemini_link(fabric: Fabric) -> GeminiLink:
    """Eq. 8's inputs from a `banyan_circuit` fabric (UsageError for another model)."""
    if fabric.model != "banyan_circuit" or fabric.endpoints is None:
        raise UsageError(
            f"poisson loads are normalised to a banyan_circuit fabric, not {fabric.model}"
        )
    return GeminiLink(
        ports=fabric.endpoints,
        optical_gbps=float(fabric.value("optical_gbps")),
        electrical_gbps=float(fabric.value("electrical_gbps")),
        signal_bytes=int(fabric.value("signal_bytes")),
        alpha_sig=float(fabric.value("alpha_sig")),
    )


def seed003_poisson_trace(
    ranks: int,
    link: GeminiLink,
    *,
    load: float,
    messages: int,
    mean_bytes: int,
    lengths: str = "exponential",
    seed: int = 0,
) -> pa.Table:
    """Seed 003's Poisson load (traces/synth/poisson.py) on `ranks` of `link`'s terminals,
    offered at `load` × Eq. 8's throughput, `messages` per rank on average."""
    from tailcast.traces.synth.poisson import poisson_trace

    if ranks < 2 or ranks > link.ports:
        raise UsageError(f"poisson needs 2 to {link.ports} ranks (the fabric's terminals)")
    if not 0 < load <= 10 or mean_bytes < 1:
        raise UsageError("poisson needs 0 < load <= 10 and mean bytes >= 1")
    rate = link.message_rate_per_ns(load, mean_bytes)
    return poisson_trace(
        ranks, rate, messages=messages, mean_bytes=mean_bytes, lengths=lengths, seed=seed
    )
