"""Session fixtures for the third-party components the test setup builds from release
sources with scripts/build-third-party: OSU Micro-Benchmarks 7.4 (`osu_home`) and pyslurm
22.5.3 in this venv (`pyslurm_ready`). Each is built once per machine into
~/.cache/tailcast/third_party (keyed by version and the MPI/Slurm built against); a later
session finds it there in about a second.

A missing prerequisite (mpicc, libslurm-dev, the release sources) or a failed build is a
skip on a developer machine and a test-setup failure in CI (CI=true), never a skip there.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILDER = REPO / "scripts" / "build-third-party"
BUILD_TIMEOUT_S = 3600


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _build(component: str, *extra: str) -> str:
    """Runs the builder; returns what it printed (a path). Fails (CI) or skips otherwise."""
    try:
        proc = subprocess.run(
            [sys.executable, str(BUILDER), component, *extra],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        proc = subprocess.CompletedProcess([], 1, "", f"timed out after {BUILD_TIMEOUT_S} s")
    if proc.returncode != 0:
        message = f"building {component} failed: {proc.stderr.strip()[-2000:]}"
        if _ci():
            pytest.fail(message + " — CI requires it", pytrace=False)
        pytest.skip(message)
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def osu_home(mpi_available: None) -> Path:
    """The OSU 7.4 install prefix ($OSU_HOME layout: libexec/osu-micro-benchmarks/mpi/…,
    plus OMB-Py's sources under python/ and OSU's sample input files under share/)."""
    return Path(_build("osu"))


@pytest.fixture(scope="session")
def pyslurm_ready() -> None:
    """pyslurm 22.5.3 installed into this interpreter's venv (importing it still needs a
    SLURM_CONF, which the slurm_cluster fixture provides)."""
    if sys.prefix == sys.base_prefix:
        message = "pyslurm goes into the project's venv; this Python is not one"
        if _ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    _build("pyslurm", "--python", sys.executable)
    importlib.invalidate_caches()
    from tailcast.collectors.pyslurm_queue import pyslurm_problem

    pyslurm_problem.cache_clear()
