"""`tailcast doctor` against the real local Slurm 22.05 and Open MPI 4.1: what it finds, what
it says when their binaries are off PATH, and its exit code when offline replay cannot work."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tailcast.doctor import Status
from tailcast.doctor.site import slurm_check
from tests.slurm_fixture import LocalCluster

CLI = [sys.executable, "-m", "tailcast", "doctor"]
SITE_TOOLS = ("sinfo", "scontrol", "squeue", "srun", "mpicc", "mpirun", "smpirun")


def _doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=600)


def _checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.slurm
@pytest.mark.mpi
def test_doctor_finds_the_local_slurm_and_open_mpi(
    slurm_cluster: LocalCluster, mpi_available: None, tmp_path: Path
) -> None:
    env = slurm_cluster.full_env(TAILCAST_HOME=str(tmp_path / "store"))
    proc = _doctor(env, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    checks = _checks(report)
    assert report["offline_replay_works"] is True
    for name in ("python", "packages", "engine", "replay", "store"):
        assert checks[name]["status"] == "ok" and checks[name]["essential"], checks[name]

    slurm = checks["slurm"]
    assert slurm["status"] == "ok", slurm
    assert slurm["details"]["version"].startswith("22.05.")
    assert slurm["details"]["controller_reachable"] is True
    assert slurm["details"]["topology_plugin"] == "topology/tree"

    mpicc, mpirun = checks["mpicc"], checks["mpirun"]
    assert (mpicc["status"], mpicc["details"]["library"]) == ("ok", "Open MPI")
    assert mpicc["details"]["version"].startswith("4.1.")
    assert mpirun["status"] == "ok" and mpirun["details"]["version"].startswith("4.1.")
    assert checks["mpi4py"]["status"] == "ok" and "Open MPI" in checks["mpi4py"]["summary"]
    assert checks["simgrid"]["status"] == "ok" and checks["simgrid"]["details"]["version"]
    assert checks["store"]["details"]["path"] == str(tmp_path / "store")
    assert checks["replay"]["details"]["actions"] > 1000
    for check in report["checks"]:
        assert check["turns_off"] == ([] if check["status"] == "ok" else check["needed_for"])


@pytest.mark.slurm
@pytest.mark.mpi
def test_doctor_without_slurm_and_mpi_on_path_names_what_is_off_and_exits_0(
    slurm_cluster: LocalCluster, mpi_available: None, tmp_path: Path
) -> None:
    env = slurm_cluster.full_env(TAILCAST_HOME=str(tmp_path / "store"))
    env.pop("MPICC", None)
    env.pop("OSU_HOME", None)
    env["PATH"] = os.pathsep.join(
        d
        for d in env["PATH"].split(os.pathsep)
        if d and not any((Path(d) / tool).exists() for tool in SITE_TOOLS)
    )
    proc = _doctor(env, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    checks = _checks(report)
    assert report["offline_replay_works"] is True
    for name in ("slurm", "mpicc", "mpirun", "simgrid"):
        assert checks[name]["status"] == "missing", checks[name]
        assert checks[name]["turns_off"] and checks[name]["hint"]
    assert "agent run / submit" in checks["slurm"]["turns_off"]
    assert any("trace capture" in f for f in checks["mpicc"]["turns_off"])
    assert "module load openmpi" in checks["mpicc"]["hint"]
    off = set(report["turned_off"])
    assert "agent run / submit" in off and "agent run outside srun" in off

    text = _doctor(env)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0] == "offline replay works here"
    slurm_line = next(i for i, line in enumerate(lines) if line.startswith("missing  slurm "))
    assert lines[slurm_line + 1].strip().startswith("turns off: collect snapshot")


@pytest.mark.slurm
def test_doctor_says_when_the_controller_is_not_reachable(
    slurm_cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client is configured but points at a port where no slurmctld listens."""
    etc = tmp_path / "etc"
    shutil.copytree(slurm_cluster.dir / "etc", etc)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    conf = etc / "slurm.conf"
    conf.write_text(
        re.sub(r"(?m)^SlurmctldPort=.*$", f"SlurmctldPort={dead_port}", conf.read_text())
    )
    monkeypatch.setenv("SLURM_CONF", str(conf))
    check = slurm_check(timeout=30)
    assert check.status is Status.ERROR and check.details["controller_reachable"] is False
    assert "controller not reachable" in check.summary and "DOWN" in check.summary
    assert check.details["version"].startswith("22.05.")
    assert "agent run / submit" in check.to_dict()["turns_off"]


def test_doctor_exits_1_when_the_store_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    env = {**os.environ, "TAILCAST_HOME": str(blocker / "store")}
    proc = _doctor(env, "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    store = _checks(report)["store"]
    assert report["offline_replay_works"] is False
    assert store["status"] == "error" and "is not a directory" in store["summary"]
    assert "storing results (replay run, agent, collect, quickstart)" in report["turned_off"]


def test_doctor_reports_osu_missing_in_an_empty_osu_dir(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OSU_HOME"}
    env["TAILCAST_HOME"] = str(tmp_path / "store")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if "osu" not in p)
    proc = _doctor(env, "--json", "--osu-dir", str(tmp_path))
    report = json.loads(proc.stdout)
    osu = _checks(report)["osu"]
    assert osu["status"] == "missing" and str(tmp_path) in osu["summary"]
    assert osu["turns_off"] == ["agent run --impl osu"]


def test_doctor_modules_import_no_heavy_library() -> None:
    code = (
        "import sys, tailcast.cli.doctor, tailcast.doctor.runner\n"
        "heavy = ('numpy', 'pyarrow', 'duckdb', 'scipy', 'sklearn', 'matplotlib', 'mpi4py')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
