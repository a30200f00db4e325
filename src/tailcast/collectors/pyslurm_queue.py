"""The queue through pyslurm (libslurm in-process, no squeue subprocess), when a pyslurm that
matches the cluster's Slurm is installed.

Importing pyslurm reads slurm.conf inside libslurm, and a missing or incomplete one makes
libslurm call fatal(), which exits the whole process. So whether pyslurm can be imported
here is first asked of a child process (once per process), and only then imported.

API shapes: pyslurm ≥ 22.5 has `pyslurm.Jobs.load()` (objects); 22.5's property
`array_task_id` reads task 0 as None (u32_parse treats 0 as unset), so a task whose id
differs from its array's id and shows no task number is task 0 — the array's meta job keeps
the array's own id. Older releases have only the dict API `pyslurm.job().get()`.
"""

from __future__ import annotations

import functools
import importlib.util
import pwd
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

from tailcast.collectors.jobs import QueueJob, QueueSnapshot, expand_nodes
from tailcast.errors import ExternalToolError

PROBE_TIMEOUT_S = 30


@functools.cache
def pyslurm_problem() -> str | None:
    """None when pyslurm imports cleanly here, else why not (not installed, or what
    libslurm said before exiting)."""
    if importlib.util.find_spec("pyslurm") is None:
        return "not installed"
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import pyslurm"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"import probe failed ({exc})"
    if probe.returncode != 0:
        lines = [ln for ln in probe.stderr.strip().splitlines() if ln.strip()]
        return lines[-1] if lines else f"import exited with status {probe.returncode}"
    return None


def _user(uid: Any) -> str:
    try:
        return pwd.getpwuid(int(uid)).pw_name
    except (KeyError, TypeError, ValueError):
        return "" if uid is None else str(uid)


def _display_id(job_id: int, array_id: int | None, task_id: int | None) -> str:
    if array_id is None or array_id == 0:
        return str(job_id)
    if task_id is None:
        return f"{array_id}_0" if job_id != array_id else str(job_id)
    return f"{array_id}_{task_id}"


def _from_objects(pyslurm: Any) -> tuple[list[QueueJob], str | None]:
    jobs, cluster = [], None
    for job in pyslurm.Jobs.load().values():
        nodes = expand_nodes(str(job.allocated_nodes or ""))
        jobs.append(
            QueueJob(
                _display_id(int(job.id), job.array_id, job.array_task_id),
                str(job.id),
                str(job.user_name or _user(job.user_id)),
                (str(job.state).upper(),),
                int(job.num_nodes or len(nodes)),
                nodes,
            )
        )
        cluster = cluster or job.cluster
    return jobs, cluster


def _from_dicts(pyslurm: Any) -> tuple[list[QueueJob], str | None]:
    jobs = []
    for job_id, info in pyslurm.job().get().items():
        nodes = expand_nodes(str(info.get("nodes") or ""))
        array_id, task_id = info.get("array_job_id"), info.get("array_task_id")
        shown = f"{array_id}_{task_id}" if array_id and task_id is not None else str(job_id)
        jobs.append(
            QueueJob(
                shown,
                str(job_id),
                _user(info.get("user_id")),
                (str(info.get("job_state", "")).upper(),),
                int(info.get("num_nodes") or len(nodes)),
                nodes,
            )
        )
    return jobs, None


def read_pyslurm() -> QueueSnapshot:
    """All jobs the controller knows, through pyslurm."""
    problem = pyslurm_problem()
    if problem is not None:
        raise ExternalToolError("pyslurm", f"not usable: {problem}")
    import pyslurm

    taken = datetime.now(UTC)
    failures = (ValueError, RuntimeError, AttributeError, getattr(pyslurm, "PyslurmError", OSError))
    try:
        jobs, cluster = _from_objects(pyslurm) if hasattr(pyslurm, "Jobs") else _from_dicts(pyslurm)
        major, minor, micro = pyslurm.slurm_api_version()
        version = f"{major}.{minor:02d}.{micro}"  # as Slurm writes it: 22.05.8
    except failures as exc:
        raise ExternalToolError("pyslurm", f"could not read the queue ({exc})") from exc
    return QueueSnapshot(tuple(jobs), "pyslurm", taken, cluster, version)
