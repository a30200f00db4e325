"""Background traffic of a replay: synthetic jobs of other users (the engine's generators)
and background traces, each with its own nodes; the replay ends when the foreground trace
ends and the background is dropped then.

A generator is written `PATTERN:key=value:…` on the command line, e.g.
`uniform:nodes=8:load=0.5:bytes=64K` — keys `nodes` (how many endpoints), `load` (offered
load per node, a fraction of its injection bandwidth), `bytes` (message size, K/M/G
suffixes), `arrivals` (`poisson` | `periodic`), `hot` (hot-spot fraction), `placement`
(`random` free endpoints, `linear` free endpoints from the lowest, or `E0,E1,…`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast.errors import UsageError
from tailcast.units import parse_size

PATTERNS = ("uniform", "nearest_neighbour", "all_to_all", "permutation", "hot_spot")
ARRIVALS = ("poisson", "periodic")


@dataclass(frozen=True)
class BackgroundJob:
    """A synthetic background job."""

    pattern: str
    nodes: int
    load: float
    bytes: int = 65536
    arrivals: str = "poisson"
    hot_fraction: float = 0.5
    placement: str = "random"  # random | linear | explicit endpoint list "E0,E1,…"


@dataclass(frozen=True)
class BackgroundTrace:
    """A trace replayed in the background on its own endpoints."""

    path: Path
    placement: str = "random"


def parse_job(text: str) -> BackgroundJob:
    """`PATTERN:key=value:…` (see the module doc)."""
    head, *pairs = text.split(":")
    if head not in PATTERNS:
        raise UsageError(f"--background {text!r}: pattern must be one of {', '.join(PATTERNS)}")
    fields: dict[str, Any] = {"pattern": head}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--background {text!r}: expected key=value, got {pair!r}")
        try:
            if key == "nodes":
                fields["nodes"] = int(value)
            elif key == "load":
                fields["load"] = float(value)
            elif key == "bytes":
                try:
                    fields["bytes"] = parse_size(value)
                except UsageError as exc:
                    raise UsageError(f"--background {text!r}: {exc}") from exc
            elif key == "hot":
                fields["hot_fraction"] = float(value)
            elif key in ("arrivals", "placement"):
                fields[key] = value
            else:
                raise UsageError(
                    f"--background {text!r}: unknown key {key!r} "
                    "(nodes, load, bytes, arrivals, hot, placement)"
                )
        except ValueError as exc:
            raise UsageError(f"--background {text!r}: {key}={value!r} is not a number") from exc
    for required in ("nodes", "load"):
        if required not in fields:
            raise UsageError(f"--background {text!r}: {required}=… is required")
    job = BackgroundJob(**fields)
    if job.arrivals not in ARRIVALS:
        raise UsageError(f"--background {text!r}: arrivals must be poisson or periodic")
    if not 0.0 <= job.load <= 1.0:
        raise UsageError(f"--background {text!r}: load must be in [0, 1]")
    if job.nodes < 2:
        raise UsageError(f"--background {text!r}: nodes must be >= 2")
    return job


def parse_trace(text: str) -> BackgroundTrace:
    """`FILE[@PLACEMENT]`."""
    path, _, placement = text.partition("@")
    return BackgroundTrace(Path(path), placement or "random")
