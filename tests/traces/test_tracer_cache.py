"""The PMPI tracer is built on first use with the site's mpicc into a per-user cache keyed by
the MPI's family and version, once, and reused; without an mpicc the user reads one line
saying what to load. Real Open MPI 4.1, real compiles, the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast.doctor.site import mpicc_check
from tailcast.mpicc import identify
from tailcast.traces.capture import build_tracer

pytestmark = [pytest.mark.mpi]
CLI = [sys.executable, "-m", "tailcast"]
MPI_NAMES = ("mpicc", "mpirun", "mpiexec", "orterun")
PROGRAM = "from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n"


@pytest.fixture()
def mpi_env(tmp_path: Path, mpi_available: None) -> dict[str, str]:
    """Open MPI as root on one host, and a clean per-user cache."""
    if shutil.which("mpicc") is None:
        pytest.fail("mpicc missing while mpirun exists: Open MPI is half installed")
    env = {k: v for k, v in os.environ.items() if k != "MPICC"}
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_btl="self,vader",
        OMPI_MCA_rmaps_base_oversubscribe="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    return env


def _tracers(env: dict[str, str]) -> list[Path]:
    return sorted((Path(env["XDG_CACHE_HOME"]) / "tailcast" / "tracer").glob("*/*.so"))


def _capture(tmp_path: Path, env: dict[str, str], name: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "barrier.py"
    program.write_text(PROGRAM)
    argv = [
        *CLI,
        "trace",
        "capture",
        "-o",
        str(tmp_path / f"{name}.parquet"),
        "--",
        "mpirun",
        "-np",
        "2",
        sys.executable,
        str(program),
    ]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


def test_first_capture_builds_the_tracer_once_then_reuses_it(
    tmp_path: Path, mpi_env: dict[str, str]
) -> None:
    assert _tracers(mpi_env) == []
    first = _capture(tmp_path, mpi_env, "first")
    assert first.returncode == 0, first.stderr
    assert "building the PMPI tracer" in first.stderr and "Open MPI 4.1" in first.stderr
    (built,) = _tracers(mpi_env)
    assert built.parent.name.startswith("openmpi-4.1.")  # keyed by the MPI's version
    stamp = (built.stat().st_ino, built.stat().st_mtime_ns)

    second = _capture(tmp_path, mpi_env, "second")
    assert second.returncode == 0, second.stderr
    assert "building the PMPI tracer" not in second.stderr
    assert _tracers(mpi_env) == [built]
    assert (built.stat().st_ino, built.stat().st_mtime_ns) == stamp
    assert (tmp_path / "second.parquet").stat().st_size > 0

    os.environ["XDG_CACHE_HOME"] = mpi_env["XDG_CACHE_HOME"]
    try:  # doctor finds the same build
        check = mpicc_check(timeout=15)
    finally:
        os.environ.pop("XDG_CACHE_HOME")
    assert check.details["tracer_built"] is True and check.details["tracer"] == str(built)


def test_concurrent_first_builds_compile_once(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    procs = [
        subprocess.Popen(
            [*CLI, "trace", "build-tracer"],
            env=mpi_env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err for _, err in outs]
    assert sum("building the PMPI tracer" in err for _, err in outs) == 1
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1 and [Path(p) for p in paths] == _tracers(mpi_env)


def test_another_mpi_install_gets_its_own_build(
    tmp_path: Path, mpi_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", mpi_env["XDG_CACHE_HOME"])
    default = build_tracer()
    # A second install of the same MPI (here: the same wrapper behind another path).
    wrapper = tmp_path / "site-mpi" / "mpicc"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("mpicc")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("MPICC", str(wrapper))
    other = build_tracer()
    assert other != default and other.is_file() and default.is_file()
    # same family and version in the name, told apart by the wrapper's hash
    assert identify(str(wrapper)).label == identify().label
    assert other.parent.name.split("-")[:2] == default.parent.name.split("-")[:2]


def test_missing_mpicc_is_one_line_saying_what_to_load(
    tmp_path: Path, mpi_env: dict[str, str]
) -> None:
    env = dict(mpi_env)
    env["PATH"] = os.pathsep.join(
        d
        for d in env["PATH"].split(os.pathsep)
        if d and not any((Path(d) / n).exists() for n in MPI_NAMES)
    )
    proc = _capture(tmp_path, env, "nompi")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "mpicc" in lines[0] and "module load openmpi" in lines[0]
    assert _tracers(env) == []

    env["MPICC"] = str(tmp_path / "no-such-mpicc")
    proc = _capture(tmp_path, env, "badmpicc")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1
    assert "$MPICC=" in lines[0] and "module load openmpi" in lines[0]
