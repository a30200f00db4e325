"""Builds the PMPI tracer (C source shipped in this package) with the local `mpicc`.

The shared library lands in `tailcast.paths.cache_home()/tracer/`, named after a hash of
the sources and of `mpicc -show` (so a different MPI gets its own build); it is built once,
atomically (compile to a temporary name, then rename)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from tailcast.errors import ExternalToolError
from tailcast.paths import cache_home

SOURCES = (
    "tailcast_pmpi.c",
    "tailcast_pmpi_calls.h",
    "tailcast_pmpi_colls.h",
    "tailcast_pmpi_nbc.h",
    "tailcast_pmpi_timing.h",
)
BUILD_TIMEOUT_S = 300


def _source_dir() -> Path:
    return Path(str(resources.files("tailcast.traces.capture")))


def _mpicc() -> str:
    path = os.environ.get("MPICC") or shutil.which("mpicc")
    if not path:
        raise ExternalToolError("mpicc", "not found on PATH; install an MPI compiler wrapper")
    return path


def _fingerprint(mpicc: str) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((_source_dir() / name).read_bytes())
    try:
        show = subprocess.run(
            [mpicc, "-show"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        show = ""
    h.update(show.encode())
    return h.hexdigest()[:16]


def tracer_path() -> Path:
    """Where the tracer for the current sources and mpicc lives (built or not)."""
    return cache_home() / "tracer" / f"libtailcast-pmpi-{_fingerprint(_mpicc())}.so"


def build_tracer(force: bool = False) -> Path:
    """Compiles the tracer unless an up-to-date build exists; returns the .so path."""
    mpicc = _mpicc()
    target = cache_home() / "tracer" / f"libtailcast-pmpi-{_fingerprint(mpicc)}.so"
    if target.is_file() and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    argv = [mpicc, "-O2", "-fPIC", "-shared", "-o", str(tmp),
            str(_source_dir() / SOURCES[0])]  # fmt: skip
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ExternalToolError("mpicc", f"timed out after {BUILD_TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise ExternalToolError(
            "mpicc", "failed to build the PMPI tracer", proc.stderr, proc.returncode
        )
    os.replace(tmp, target)
    return target
