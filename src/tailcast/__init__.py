"""tailcast: MPI latency tails, measured in Slurm jobs, replayed through modelled fabrics."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tailcast")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
