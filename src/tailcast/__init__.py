"""tailcast: MPI latency tails, measured in Slurm jobs, replayed through modelled fabrics."""

from __future__ import annotations

import os

# pyarrow's stock mimalloc pool returns freed huge pages to the kernel, which zeroes them
# again when the next batch is decoded (a third of a streamed replay's CPU when replays
# decoded with pyarrow; conversion and analysis still do). jemalloc keeps them. Read once,
# when pyarrow loads, so it is set before any import of it (a caller's own choice wins).
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")

__all__ = ["__version__"]


def _installed_version() -> str:
    """The `Version:` of the installed distribution's METADATA, found the way
    importlib.metadata finds it (first `tailcast-*.dist-info` on sys.path) without
    importing it: importlib.metadata costs ~70 ms of CPU, half a `tailcast --version`."""
    import sys
    from pathlib import Path

    for entry in sys.path:
        for info in sorted(Path(entry or ".").glob("tailcast-*.dist-info")):
            try:
                with open(info / "METADATA", encoding="utf-8") as fh:
                    for line in fh:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break  # end of the headers
            except OSError:
                continue
    return "0.0.0+unknown"  # running from a source tree without an install


def __getattr__(name: str) -> str:
    # Looked up when asked for (--version, provenance records), not at every start-up.
    if name == "__version__":
        found = _installed_version()
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module 'tailcast' has no attribute {name!r}")
