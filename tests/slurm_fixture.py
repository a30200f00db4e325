"""The `slurm_cluster` session fixture: a real Slurm 22.05 (munged, slurmctld, 16 slurmd) on
localhost, started by scripts/slurm-local.

`make test` starts one cluster and passes its directory in $TAILCAST_SLURM_DIR; the fixture
then reuses it (and `make` stops it). Otherwise the fixture starts its own and stops it at the
end of the session, checking by PID that no daemon is left. A missing Slurm is a skip on a
developer machine and a failure in CI (CI=true).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-local"
MPI_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@dataclass
class LocalCluster:
    """Handle on a running local cluster."""

    dir: Path
    nodes: list[str]
    env: dict[str, str]
    pids: dict[str, int]
    owned: bool = False
    jobs: list[str] = field(default_factory=list)
    lab: dict[str, Any] | None = None  # the network lab's record (`up --network lab`)

    @classmethod
    def start(cls, directory: Path, n_nodes: int = 16, network: str = "none") -> LocalCluster:
        res = subprocess.run(
            [str(SCRIPT), "up", str(directory), "--nodes", str(n_nodes), "--network", network],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if res.returncode != 0:
            raise RuntimeError(f"slurm-local up failed: {res.stderr.strip()}")
        return cls.attach(directory, owned=True)

    @classmethod
    def attach(cls, directory: Path, owned: bool = False) -> LocalCluster:
        rec = json.loads((directory / "cluster.json").read_text())
        return cls(
            Path(rec["dir"]), rec["nodes"], rec["env"], rec["pids"], owned, lab=rec.get("lab")
        )

    def alive_pids(self) -> dict[str, int]:
        return {name: pid for name, pid in self.pids.items() if _alive(pid)}

    def stop(self) -> None:
        res = subprocess.run(
            [str(SCRIPT), "down", str(self.dir)], capture_output=True, text=True, timeout=120
        )
        if res.returncode != 0:
            raise RuntimeError(f"slurm-local down failed: {res.stderr.strip()}")

    def stop_ctld(self) -> None:
        """Stops slurmctld alone (`slurm-local stop-ctld`): jobs and slurmd keep running."""
        subprocess.run([str(SCRIPT), "stop-ctld", str(self.dir)], check=True, timeout=60)

    def start_ctld(self) -> None:
        """Starts slurmctld again on its saved state and waits until it answers."""
        subprocess.run([str(SCRIPT), "start-ctld", str(self.dir)], check=True, timeout=120)
        self.pids = json.loads((self.dir / "cluster.json").read_text())["pids"]

    def kill_node(self, node: str) -> None:
        """`slurm-local kill-node`: the node's slurmd, stepds and tasks get SIGKILL."""
        subprocess.run([str(SCRIPT), "kill-node", str(self.dir), node], check=True, timeout=60)

    def start_node(self, node: str) -> None:
        subprocess.run([str(SCRIPT), "start-node", str(self.dir), node], check=True, timeout=120)
        self.pids = json.loads((self.dir / "cluster.json").read_text())["pids"]

    def full_env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SBATCH_", "SLURM_"))}
        env.update(self.env)
        env.update(MPI_ROOT_ENV)
        env.update(extra)
        return env

    def run(self, argv: list[str], timeout: float = 60, check: bool = True) -> str:
        res = subprocess.run(
            argv, env=self.full_env(), capture_output=True, text=True, timeout=timeout
        )
        if check and res.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({res.returncode}): {res.stderr.strip()}")
        return res.stdout

    def sbatch(self, args: list[str], script: str, workdir: Path) -> str:
        """Submits `script` text; returns the job id."""
        path = workdir / f"job-{time.monotonic_ns()}.sh"
        path.write_text(script)
        out = self.run(["sbatch", "--parsable", "-D", str(workdir), *args, str(path)])
        job_id = out.strip().split(";")[0]
        self.jobs.append(job_id)
        return job_id

    def job_state(self, job_id: str) -> str:
        out = self.run(["squeue", "-h", "-j", job_id, "-t", "all", "-o", "%T"], check=False)
        return out.strip() or "GONE"

    def wait_state(self, job_id: str, states: set[str], timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            state = self.job_state(job_id)
            if state in states:
                return state
            time.sleep(0.2)
        raise TimeoutError(f"job {job_id} stayed {state}, wanted {sorted(states)}")

    def cancel_all(self) -> None:
        self.run(["scancel", "--quiet", "-u", "root"], check=False)


def _slurm_available() -> bool:
    return all(
        shutil.which(t) or Path(f"/usr/sbin/{t}").exists()
        for t in ("munged", "slurmctld", "slurmd", "sbatch")
    )


def _install_if_root() -> None:
    if os.geteuid() == 0 and not _slurm_available():
        subprocess.run([str(REPO / "scripts" / "install-system-deps")], check=False, timeout=900)


def _require_slurm() -> None:
    """Installs Slurm as root when missing; still missing is a skip locally, a failure in CI."""
    _install_if_root()
    if not _slurm_available():
        message = "Slurm (munged, slurmctld, slurmd, sbatch) is not installed"
        if _ci():
            pytest.fail(message + " — CI requires the real local cluster")
        pytest.skip(message)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[LocalCluster]:
    shared = os.environ.get("TAILCAST_SLURM_DIR")
    if shared and (Path(shared) / "cluster.json").exists():
        cluster = LocalCluster.attach(Path(shared))
        if len(cluster.alive_pids()) == len(cluster.pids):
            saved = {k: os.environ.get(k) for k in cluster.env}
            os.environ.update(cluster.env)
            yield cluster
            cluster.cancel_all()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            return
    _require_slurm()
    directory = Path(tempfile.mkdtemp(prefix="tailcast-slurm-"))
    cluster = LocalCluster.start(directory)
    saved = {k: os.environ.get(k) for k in cluster.env}
    os.environ.update(cluster.env)
    try:
        yield cluster
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        cluster.stop()
        left = cluster.alive_pids()
        assert not left, f"daemons left after teardown: {left}"
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture()
def private_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A 4-node cluster of the test's own, for tests that stop its daemons."""
    _require_slurm()
    cluster = LocalCluster.start(tmp_path_factory.mktemp("slurm"), n_nodes=4)
    try:
        yield cluster
    finally:
        cluster.stop()
        left = cluster.alive_pids()
        assert not left, f"daemons left after teardown: {left}"


@pytest.fixture(scope="session")
def mpi_available() -> None:
    """Open MPI's mpirun must exist; missing is a skip locally and a failure in CI."""
    if shutil.which("mpirun") is None:
        if _ci():
            pytest.fail("mpirun (Open MPI) is not installed — CI requires it")
        pytest.skip("mpirun not installed")


def _lab_available() -> str | None:
    """Why the network lab cannot run here (None when it can): root, iproute2, nsenter."""
    if os.geteuid() != 0:
        return "the network lab needs root (network namespaces, tc)"
    missing = [t for t in ("ip", "tc", "nsenter", "sysctl") if shutil.which(t) is None]
    return f"the network lab needs {missing} on PATH" if missing else None


@pytest.fixture(scope="session")
def lab_cluster() -> Iterator[LocalCluster]:
    """A 16-node Slurm on the network lab (`slurm-local up --network lab`), its own for the
    session ($TAILCAST_LAB_DIR reuses a running one). Missing pieces: skip here, fail in CI."""
    shared = os.environ.get("TAILCAST_LAB_DIR")
    if shared and (Path(shared) / "cluster.json").exists():
        cluster = LocalCluster.attach(Path(shared))
        if cluster.lab and len(cluster.alive_pids()) == len(cluster.pids):
            yield cluster
            cluster.cancel_all()
            return
    _install_if_root()
    reason = None if _slurm_available() else "Slurm is not installed"
    reason = reason or _lab_available()
    if reason:
        if _ci():
            pytest.fail(reason + " — CI requires the network lab")
        pytest.skip(reason)
    directory = Path(tempfile.mkdtemp(prefix="tailcast-lab-"))
    cluster = LocalCluster.start(directory, network="lab")
    try:
        yield cluster
    finally:
        cluster.stop()
        left = cluster.alive_pids()
        assert not left, f"daemons left after teardown: {left}"
        shutil.rmtree(directory, ignore_errors=True)
