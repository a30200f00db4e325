"""A fabric with a calibration's fitted host: the base fabric's text (its network as lab
calibrate measured it) with every level's `link_latency_ns` set to the fitted latency and
its `[host]` table replaced by the fitted one, provenance in comments. The base's [host]
table, when it has one, must be its last table (as `lab calibrate --fabric-out` writes
it): everything from `[host]` on is replaced."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tailcast.calibration.host_fit import HostFit
from tailcast.errors import UsageError
from tailcast.replay.fabric import Fabric, parse_fabric

_LATENCY = re.compile(r"^(\s*link_latency_ns\s*=\s*)[0-9.eE+-]+", re.MULTILINE)
_HOST = re.compile(r"^\[host(\.[a-z_]+)?\]", re.MULTILINE)


def host_table(
    fit: HostFit,
    gamma_ns_per_byte: float,
    eager_threshold_bytes: int | None,
    measured_noise: str | None = None,
    overheads_occupy_cpu: bool = False,
) -> str:
    """The `[host]` table; its noise is `measured_noise` (a pooled `[host.noise]` table of
    stored profiles) when given, else the fitted Poisson detours (none at share 0)."""
    lines = [
        "[host]",
        f"overhead_ns = {fit.overhead_ns:.1f}",
        f"gamma_ns_per_byte = {gamma_ns_per_byte:.6g}",
    ]
    if overheads_occupy_cpu:
        lines.append("overheads_occupy_cpu = true")
    if eager_threshold_bytes is not None:
        lines.append(f"eager_threshold_bytes = {eager_threshold_bytes}")
    lines.append("")
    if measured_noise is not None:
        lines.append(measured_noise)
    elif fit.detour_share > 0:
        lines += [
            "[host.noise]",
            'kind = "poisson"',
            f"rate_per_s = {fit.rate_per_s:.1f}",
            'length = "lognormal"',
            f"length_ns = {fit.length_ns:.1f}",
            f"length_sigma = {fit.length_sigma:.3f}",
            "",
        ]
    return "\n".join(lines)


def calibrated_text(
    base: Fabric,
    fit: HostFit,
    eager_threshold_bytes: int | None,
    provenance: Sequence[str] = (),
    measured_noise: str | None = None,
) -> str:
    text = base.toml_text
    tables = list(_HOST.finditer(text))
    if tables and re.search(r"^\[(?!host)", text[tables[0].start() :], re.MULTILINE):
        raise UsageError(f"{base.source}: its [host] table must come last to be recalibrated")
    network = text[: tables[0].start()] if tables else text
    if "link_latency_ns" in network:
        network = _LATENCY.sub(lambda m: f"{m.group(1)}{fit.link_latency_ns:.1f}", network)
    # what the fit does not change stays the base's
    host = base.table.get("host", {})
    declared = host.get("gamma_ns_per_byte")
    gamma = float(declared if declared is not None else base.table.get("gamma_ns_per_byte", 0.0))
    occupy = bool(host.get("overheads_occupy_cpu", False))
    head = [f"# {line}" for line in provenance]
    return (
        "\n".join(head)
        + ("\n" if head else "")
        + network.rstrip()
        + "\n\n"
        + host_table(fit, gamma, eager_threshold_bytes, measured_noise, occupy)
    )


def calibrated_fabric(
    base: Fabric,
    fit: HostFit,
    eager_threshold_bytes: int | None = None,
    measured_noise: str | None = None,
) -> Fabric:
    text = calibrated_text(base, fit, eager_threshold_bytes, measured_noise=measured_noise)
    return parse_fabric(text, base.source, name=base.name)
