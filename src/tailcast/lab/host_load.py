"""Host noise at a run's background traffic. On the lab every node shares the VM's two
cores, and the background jobs' traffic is CPU work there (their ranks' copies into
sockets, TCP/IP over veth in the kernel): a foreground rank loses its CPU more often while
background data moves. A replayed run's detours are those of the calibration, fitted
without background, at a rate scaled by the background's data rate during the run:

    rate_per_s(run) = rate_per_s(fabric) * (1 + noise_per_mbps * background_mbps(run))

Detour lengths stay (a competitor's burst does not lengthen a detour; more bursts come).
`noise_per_mbps` is fitted on the calibration's fitting runs that had background
(calibration/from_campaign.py). The covariate is the data the run's background jobs moved
(their calls during it, each an all-to-all of its size) over its duration, as lab_runs
records them. It replaced the host's 1-minute load average, which moved from 2.2 to 4.1
over the bundled campaign while the measured 4 B medians rose 1.5-2x with background even
where it shares no link: median KS over the 72 runs 0.65 against 0.73 (seed 0).
Only fitted (Poisson) detours are scaled: a measured profile is used as it was taken.
"""

from __future__ import annotations

import re
from typing import Any

from tailcast.replay.fabric import Fabric, parse_fabric

_RATE = re.compile(r"^(rate_per_s\s*=\s*)([0-9.eE+-]+)", re.MULTILINE)


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


def noise_at(fabric: Fabric, factor: float) -> Fabric:
    """`fabric` with its Poisson detour rate multiplied by `factor` (itself when it has
    none, or factor 1)."""
    noise = fabric.table.get("host", {}).get("noise", {})
    if noise.get("kind") != "poisson" or factor == 1.0:
        return fabric
    host = fabric.toml_text.find("[host.noise]")
    head, table = fabric.toml_text[:host], fabric.toml_text[host:]
    rate = float(noise["rate_per_s"]) * factor
    table = _RATE.sub(lambda m: f"{m.group(1)}{rate:.1f}", table, count=1)
    return parse_fabric(head + table, fabric.source, name=fabric.name)
