"""Slurm jobs for the lab's drivers (calibration, campaign): submit a script on a given node
list, wait for states, cancel. argv lists, timeouts, inherited SBATCH_* scrubbed."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import hostlist

from tailcast.collectors.slurm_jobs import job_state, sbatch, scancel
from tailcast.errors import ExternalToolError

ENDED = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}
)
# Open MPI refuses to run as root without these; the lab runs everything as root.
MPI_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@dataclass(frozen=True)
class Job:
    job_id: str
    nodes: tuple[str, ...]
    name: str
    output: Path


def submit(
    name: str,
    nodes: Sequence[str],
    commands: Sequence[Sequence[str]],
    workdir: Path,
    env: dict[str, str] | None = None,
    time_limit: str = "02:00:00",
) -> Job:
    """One job on exactly `nodes` (one task per node) running `commands` in order."""
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / f"{name}.sbatch"
    output = workdir / f"{name}.out"
    lines = ["#!/bin/bash", "set -euo pipefail"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in {**MPI_ROOT_ENV, **(env or {})}.items()]
    lines += [shlex.join(list(argv)) for argv in commands]
    script.write_text("\n".join(lines) + "\n")
    nodelist = hostlist.collect_hostlist(list(nodes))
    options = [
        f"--job-name={name}",
        f"--nodes={len(nodes)}",
        f"--nodelist={nodelist}",
        "--ntasks-per-node=1",
        f"--time={time_limit}",
        f"--output={output}",
        f"--chdir={workdir}",
    ]
    return Job(sbatch(options, script), tuple(nodes), name, output)


def wait_for(job: Job, states: frozenset[str], timeout_s: float, poll_s: float = 1.0) -> str:
    """Polls until the job is in one of `states` (or gone from squeue, which counts as ended)."""
    deadline = time.monotonic() + timeout_s
    current = ""
    while time.monotonic() < deadline:
        current = job_state(job.job_id)
        if current in states or (current == "GONE" and states & ENDED):
            return current
        if current in ENDED and not states & ENDED:
            raise ExternalToolError("slurm", f"job {job.job_id} ({job.name}) ended {current}")
        time.sleep(poll_s)
    raise ExternalToolError(
        "slurm", f"job {job.job_id} ({job.name}) still {current} after {timeout_s:g} s"
    )


def cancel(jobs: Sequence[Job], timeout_s: float = 60) -> None:
    if not jobs:
        return
    scancel([j.job_id for j in jobs], check=False)
    for job in jobs:
        wait_for(job, ENDED, timeout_s)
