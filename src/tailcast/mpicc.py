"""The site's MPI C compiler wrapper (`$MPICC`, else `mpicc` on PATH): where it is, which MPI
and version it belongs to, and the one line a user without one needs to read.

The PMPI tracer is built with it (traces/capture/build.py) into a cache keyed by the MPI's
identity, and `tailcast doctor` reports it."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from tailcast.errors import ExternalToolError

MISSING_HINT = "load your site's MPI first (e.g. `module load openmpi`) or set $MPICC"
PROBE_TIMEOUT_S = 15.0

# What each family's wrapper prints: Open MPI `mpicc --showme:version`
# ("mpicc: Open MPI 4.1.4 (Language: C)"); MPICH, MVAPICH and Intel MPI `mpicc -v`
# ("mpicc for MPICH version 4.0.2", "mpicc for MVAPICH2 version 2.3.7",
# "mpiicc for the Intel(R) MPI Library 2021.6 for Linux*").
_FAMILIES = (
    ("Open MPI", re.compile(r"Open MPI (\d+(?:\.\d+)+)")),
    ("MVAPICH", re.compile(r"MVAPICH\d* version (\d+(?:\.\d+)*)")),
    ("MPICH", re.compile(r"MPICH version (\d+(?:\.\d+)*)")),
    ("Intel MPI", re.compile(r"Intel\(R\) MPI Library (\d+(?:\.\d+)*)")),
)
_VERSION_ARGS = (("--showme:version",), ("-v",))


@dataclass(frozen=True)
class MpiCompiler:
    """An MPI compiler wrapper and the MPI it belongs to."""

    path: str
    library: str  # "Open MPI", "MPICH", "MVAPICH", "Intel MPI" or "unknown MPI"
    version: str  # "4.1.4"; "" when the wrapper did not say
    show: str  # the compiler command line the wrapper runs (`-show`)

    @property
    def label(self) -> str:
        return f"{self.library} {self.version}".strip()

    @property
    def cache_key(self) -> str:
        """A directory name per MPI build: family and version for people, plus a hash of
        the wrapper's path and command line so two installs of one version stay apart."""
        family = re.sub(r"[^a-z0-9]+", "", self.library.lower()) or "mpi"
        digest = hashlib.sha256(f"{self.path}\n{self.show}".encode()).hexdigest()[:8]
        return f"{family}-{self.version or 'unknown'}-{digest}"


def which_mpicc() -> str | None:
    """`$MPICC` (a name or a path), else `mpicc` on PATH; None when neither is there."""
    return shutil.which(os.environ.get("MPICC") or "mpicc")


def find_mpicc() -> str:
    """`which_mpicc()`, or one line saying what to load."""
    path = which_mpicc()
    if not path:
        explicit = os.environ.get("MPICC")
        where = f"$MPICC={explicit} is not an executable" if explicit else "not found on PATH"
        raise ExternalToolError("mpicc", f"{where}; {MISSING_HINT}")
    return path


def _output(argv: list[str], timeout: float) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout + proc.stderr if proc.returncode == 0 else ""


def identify(path: str | None = None, timeout: float = PROBE_TIMEOUT_S) -> MpiCompiler:
    """Asks the wrapper which MPI it belongs to (each probe bounded by `timeout`)."""
    wrapper = path or find_mpicc()
    library, version = "unknown MPI", ""
    for args in _VERSION_ARGS:
        text = _output([wrapper, *args], timeout)
        found = next(((name, m) for name, rx in _FAMILIES if (m := rx.search(text))), None)
        if found:
            library, version = found[0], found[1].group(1)
            break
    show = _output([wrapper, "-show"], timeout).strip()
    return MpiCompiler(wrapper, library, version, show)
