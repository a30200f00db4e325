"""The experiments of seed 000 (MZI Beneš ToR, `benes_psf`) and seed 003 (Gemini,
`banyan_circuit`) as tailcast replays: the fabric variants they sweep and the replay options
that give a trace the papers' traffic semantics. The bench, the tests and the report build
on these so that a stored replay says by its fabric TOML which point of a sweep it is.

Seed 000 (§IV-A): a flow leaves when its task issues it — INRFlow's flows do not wait for
the receiver — so messages are sent eagerly whatever their size; tasks sit on randomly
chosen ports ("tasks being distributed randomly across the network"); host overheads are
zero (flow-level model). Seed 003 (§4.3): open-loop Poisson arrivals, no handshake.
"""

from __future__ import annotations

from dataclasses import dataclass

from tailcast.replay.fabric import Fabric, parse_fabric
from tailcast.replay.run import ReplayOptions

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
