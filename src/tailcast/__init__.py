"""tailcast: MPI latency tails, measured in Slurm jobs, replayed through modelled fabrics."""

from __future__ import annotations

import os

# pyarrow's stock mimalloc pool returns freed huge pages to the kernel, which zeroes them
# again when the next piece of a trace is decoded: a third of a streaming replay's CPU.
# jemalloc keeps them. Read once, when pyarrow loads, so it is set before any import of it
# (a caller's own choice wins).
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # The version is looked up when asked for: importlib.metadata costs ~50 ms of start-up
    # that every command would otherwise pay.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("tailcast")
        except PackageNotFoundError:  # running from a source tree without an install
            found = "0.0.0+unknown"
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module 'tailcast' has no attribute {name!r}")
