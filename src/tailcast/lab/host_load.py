"""Host noise at a run's background traffic. On the lab every node shares the VM's two
cores, and the background jobs' ranks and traffic are CPU work there (their progress loops,
their copies into sockets, TCP/IP over veth in the kernel): a foreground rank loses its CPU
more often while background data moves. A replayed run's detours are those of the
calibration, fitted without background, plus a second, independent Poisson source — the
background's — whose rate grows with the background's data rate during the run:

    rate_per_s(extra source) = rate_per_s_per_mbps * background_mbps(run)

with lognormal lengths of their own (the engine's `[host.noise.extra]` table), fitted on
the calibration's fitting runs that had background (calibration/from_campaign.py).

Why a source of its own: beside background the measured 4 B quantiles move as a body
(quickstart campaign: medians 1.3-2x, p99 about the same), which short, frequent detours
make, while the quiet runs' fitted detours are rare and heavy-tailed (seed 0: 354/s,
lognormal sigma 2.0, median 5.4 µs, mean 40 µs). Scaling their rate instead (the previous
model) left the simulated 4 B medians flat beside background: simulated p99/p50 1.57x the
measured one (median over the 24 runs of 4 B), against 1.02 / 0.77 / 0.50x with this
source (replay seeds 0 / 1 / 2).

The covariate is the data the run's background jobs moved (their calls during it, each an
all-to-all of its size) over its duration, as lab_runs records them. It replaced the host's
1-minute load average, which moved from 2.2 to 4.1 over the bundled campaign while the
measured 4 B medians rose 1.5-2x with background even where it shares no link.
A fabric without host noise gets the background's source alone; a measured profile (kind
empirical) is used as it was taken, so adding a source to it is refused.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tailcast.errors import UsageError
from tailcast.replay.fabric import Fabric, parse_fabric


@dataclass(frozen=True)
class BackgroundDetours:
    """The background's detour source: its rate per MB/s of background traffic, and
    lognormal lengths of mean `length_ns` and shape `length_sigma`."""

    rate_per_s_per_mbps: float
    length_ns: float
    length_sigma: float

    def option(self) -> str:
        """As `lab compare --background-detours` takes it."""
        return f"{self.rate_per_s_per_mbps:g}:{self.length_ns:g}:{self.length_sigma:g}"

    @classmethod
    def parse(cls, text: str) -> BackgroundDetours:
        """From `option()`'s form, RATE_PER_S_PER_MBPS:LENGTH_NS:SIGMA."""
        parts = text.split(":")
        try:
            rate, length, sigma = (float(p) for p in parts)
        except ValueError:
            rate = length = sigma = -1.0
        if len(parts) != 3 or min(rate, sigma) < 0.0 or length <= 0.0:
            raise UsageError(
                f"--background-detours {text!r}: expected RATE_PER_S_PER_MBPS:LENGTH_NS:SIGMA, "
                "three numbers >= 0 (length > 0), e.g. 40:20000:1"
            )
        return cls(rate, length, sigma)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def background_mbps(run: dict[str, Any]) -> float:
    """MB/s the run's background jobs moved while it ran (0 without background): each
    job's calls during the run, each one all-to-all of `bg_msg_size_bytes` among its nodes."""
    calls, nodes = run.get("bg_calls") or [], run.get("bg_nodes") or []
    seconds = (run.get("bg_seconds") or [0.0])[0]
    if not calls or not seconds:
        return 0.0
    size = float(run.get("bg_msg_size_bytes") or 0)
    moved = sum(c * len(n) * (len(n) - 1) * size for c, n in zip(calls, nodes, strict=True))
    return float(moved / seconds / 1e6)


# A host without noise gets a source of rate 0 for the background's to join.
NO_SOURCE_OF_ITS_OWN = '\n[host.noise]\nkind = "poisson"\nrate_per_s = 0.0\nlength_ns = 0.0\n'


def check_noise_takes_detours(fabric: Fabric) -> None:
    """Refuses a fabric whose host noise a background's detours cannot join (a measured
    profile, or an extra source already declared)."""
    noise = fabric.table.get("host", {}).get("noise")
    if noise is not None and (noise.get("kind") != "poisson" or "extra" in noise):
        kind = noise.get("kind")
        what = "[host.noise.extra] is taken" if "extra" in noise else f"its noise is {kind!r}"
        raise UsageError(
            f"fabric {fabric.name}: {what}; the background's detours (--background-detours) "
            "are added to a fitted Poisson host noise or to none"
        )


def noise_beside(fabric: Fabric, detours: BackgroundDetours | None, mbps: float) -> Fabric:
    """`fabric` (one `check_noise_takes_detours` passed) with the background's detour source
    at `mbps` added to its host noise; itself without background or source."""
    rate = detours.rate_per_s_per_mbps * mbps if detours else 0.0
    if detours is None or rate == 0.0:
        return fabric
    own = "" if "noise" in fabric.table.get("host", {}) else NO_SOURCE_OF_ITS_OWN
    extra = (
        "\n[host.noise.extra]              # the background's detours (lab/host_load.py)\n"
        f"rate_per_s = {rate:.1f}\n"
        'length = "lognormal"\n'
        f"length_ns = {detours.length_ns:.1f}\n"
        f"length_sigma = {detours.length_sigma:.3f}\n"
    )
    return parse_fabric(fabric.toml_text + own + extra, fabric.source, name=fabric.name)
