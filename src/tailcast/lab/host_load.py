"""Host noise at a run's host load. On the lab every node shares the VM's cores, so how often
a rank loses its CPU grows with how many processes are runnable: a replayed run's detours
are those of the calibration scaled by the run's host load over the load the calibration
was fitted at (the Linux 1-minute load average, recorded before and after each lab run):

    rate_per_s(run) = rate_per_s(fabric) * load(run) / reference_load

Detour lengths stay (a scheduler slice does not lengthen with more competitors; their
frequency rises). Only fitted (Poisson) detours are scaled: a measured profile is used as
it was taken.
"""

from __future__ import annotations

import re
from typing import Any

from tailcast.replay.fabric import Fabric, parse_fabric

_RATE = re.compile(r"^(rate_per_s\s*=\s*)([0-9.eE+-]+)", re.MULTILINE)


def run_load(run: dict[str, Any]) -> float | None:
    """The host's load during a lab run: the mean of the loads recorded before and after."""
    before, after = run.get("host_load_1m_before"), run.get("host_load_1m_after")
    if before is None or after is None:
        return None
    return (float(before) + float(after)) / 2


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
