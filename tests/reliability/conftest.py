"""Helpers of the reliability tests: the CLI run as a real process, signalled at a point of
its own CPU time or once a condition holds, and the big synthetic trace they interrupt."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

TAILCAST = str(Path(sys.executable).parent / "tailcast")
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass
class Stopped:
    returncode: int
    stderr: str
    wall_after_s: float  # from the signal to the exit
    cpu_after_s: float  # CPU the process used after the signal


def signal_at_cpu(
    argv: list[str], env: dict[str, str], at_cpu_s: float, signum: int, timeout_s: float = 600
) -> Stopped:
    """Runs `argv`, sends `signum` once it has used `at_cpu_s` of CPU (load-independent,
    unlike wall time on a shared machine) and waits for it."""
    reached = f"{at_cpu_s} s of CPU"
    return signal_when(argv, env, lambda pid: cpu_s(pid) >= at_cpu_s, reached, signum, timeout_s)


def signal_when(
    argv: list[str],
    env: dict[str, str],
    ready: Callable[[int], bool],
    what: str,
    signum: int,
    timeout_s: float = 600,
) -> Stopped:
    """Runs `argv`, sends `signum` once `ready(pid)` holds (polled every 10 ms; `what` says
    what it waits for) and waits for the process."""
    err_path = Path(env["TAILCAST_HOME"]).parent / f"stderr-{time.monotonic_ns()}"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + timeout_s
    try:
        while not ready(proc.pid):
            assert proc.poll() is None, f"{argv} ended before {what}"
            assert time.monotonic() < deadline, f"{argv} did not reach {what}"
            time.sleep(0.01)
        cpu0 = cpu_s(proc.pid)
        t0 = time.monotonic()
        proc.send_signal(signum)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
    finally:
        if proc.returncode is None and proc.poll() is None:
            proc.kill()
            proc.wait()
    return Stopped(
        returncode=os.waitstatus_to_exitcode(status),
        stderr=err_path.read_text(),
        wall_after_s=wall,
        cpu_after_s=usage.ru_utime + usage.ru_stime - cpu0,
    )


def startup_cpu_s(env: dict[str, str]) -> float:
    """CPU a `tailcast replay run --help` costs: the imports every command pays first."""
    before = os.times()
    subprocess.run([TAILCAST, "replay", "run", "--help"], env=env, check=True, capture_output=True)
    after = os.times()
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def write_halo(path: Path, iterations: int) -> Path:
    """bench/halo_trace.py's halo + allreduce trace on 64 ranks (6 rows per iteration)."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from halo_trace import write_halo_trace
    finally:
        sys.path.remove(str(REPO / "bench"))
    write_halo_trace(path, ranks=64, iterations=iterations, halo_bytes=4096)
    return path


@pytest.fixture(scope="session")
def halo_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 000 iterations (3.1 M rows): on the torus fabric its replay costs seconds of engine
    time."""
    return write_halo(tmp_path_factory.mktemp("halo") / "halo.parquet", 8000)
