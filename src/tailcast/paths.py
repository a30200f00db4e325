"""Where tailcast keeps results and caches. Never the current directory (DESIGN.md)."""

from __future__ import annotations

import os
from pathlib import Path


def results_home() -> Path:
    """`$TAILCAST_HOME`, else `${XDG_DATA_HOME:-~/.local/share}/tailcast`."""
    explicit = os.environ.get("TAILCAST_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "tailcast"


def cache_home() -> Path:
    """`${XDG_CACHE_HOME:-~/.cache}/tailcast`: built artefacts such as the PMPI tracer."""
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "tailcast"
