"""Builds the PMPI tracer (C source shipped in this package) with the site's `mpicc`.

The shared library lands in the per-user cache, `tailcast.paths.cache_home()/tracer/<MPI>/`,
where <MPI> names the MPI family and version the wrapper reports plus a hash of its path and
command line (`openmpi-4.1.4-1a2b3c4d`): loading another MPI module gets its own build, and
going back to the first finds it again. The file name carries a hash of the sources. It is
built once: concurrent first captures wait on a lock and reuse the winner's build, which is
compiled to a temporary name and renamed into place."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from tailcast.errors import ExternalToolError
from tailcast.mpicc import MpiCompiler, identify
from tailcast.paths import cache_home

SOURCES = ("tailcast_pmpi.c", "tailcast_pmpi_calls.h", "tailcast_pmpi_colls.h")
BUILD_TIMEOUT_S = 300


def _source_dir() -> Path:
    return Path(str(resources.files("tailcast.traces.capture")))


def _source_hash() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((_source_dir() / name).read_bytes())
    return h.hexdigest()[:16]


def tracer_dir(compiler: MpiCompiler) -> Path:
    """The cache directory of one MPI's tracer builds."""
    return cache_home() / "tracer" / compiler.cache_key


def tracer_path(compiler: MpiCompiler | None = None) -> Path:
    """Where the tracer for the current sources and MPI lives (built or not)."""
    compiler = compiler or identify()
    return tracer_dir(compiler) / f"libtailcast-pmpi-{_source_hash()}.so"


def build_tracer(force: bool = False, progress: Callable[[str], None] | None = None) -> Path:
    """Compiles the tracer unless a build for these sources and this MPI exists; returns the
    .so path. `progress` hears one line when a build actually happens."""
    compiler = identify()
    target = tracer_path(compiler)
    if target.is_file() and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if target.is_file() and not force:  # another process built it while we waited
            return target
        if progress:
            progress(f"building the PMPI tracer with {compiler.path} ({compiler.label}) → {target}")
        _compile(compiler.path, target)
    return target


def _compile(mpicc: str, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    argv = [mpicc, "-O2", "-fPIC", "-shared", "-o", str(tmp),
            str(_source_dir() / SOURCES[0])]  # fmt: skip
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        tmp.unlink(missing_ok=True)
        raise ExternalToolError("mpicc", f"timed out after {BUILD_TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise ExternalToolError(
            "mpicc", "failed to build the PMPI tracer", proc.stderr, proc.returncode
        )
    os.replace(tmp, target)
