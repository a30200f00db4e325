"""tailcast: MPI latency tails, measured in Slurm jobs, replayed through modelled fabrics."""

import os
from importlib.metadata import PackageNotFoundError, version

# pyarrow's stock mimalloc pool returns freed huge pages to the kernel, which zeroes them
# again when the next piece of a trace is decoded: a third of a streaming replay's CPU.
# jemalloc keeps them. Read once, when pyarrow loads, so it is set before any import of it
# (a caller's own choice wins).
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")

try:
    __version__ = version("tailcast")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
