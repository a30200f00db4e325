"""Where a sweep stands: points done and missing, and per array task (of every submission)
its points, how many are done, and its state — done, running or pending (squeue), or failed
(gone from the queue with points left) — plus an ETA from the CPU time of finished points."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow.parquet as pq

from tailcast.collectors.slurm_jobs import array_task_states
from tailcast.store import ResultsDir
from tailcast.sweeps import slurm
from tailcast.sweeps.plan import Plan, assignment, done_points, points_dir


@dataclass
class TaskStatus:
    job_id: str
    assignment: str | None
    task: int
    points: int
    done: int
    state: str  # done | running | pending | failed | <squeue state>


@dataclass
class SweepStatus:
    sweep_id: str
    points: int
    done: int
    missing: list[int]
    # Points neither done nor in a task Slurm still runs or will run.
    stranded: list[int]
    tasks: list[TaskStatus] = field(default_factory=list)
    eta_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sweep_status(plan: Plan, results: ResultsDir, query_slurm: bool = True) -> SweepStatus:
    done = done_points(plan, results)
    missing = sorted({p.index for p in plan.points} - done)
    subs = slurm.submissions(plan, results)
    states = array_task_states([s["job_id"] for s in subs]) if (subs and query_slurm) else {}
    tasks: list[TaskStatus] = []
    active: set[int] = set()
    for sub in subs:
        for k in range(int(sub["tasks"])):
            pts = assignment(plan, sub["assignment"], k, results)
            n_done = sum(1 for i in pts if i in done)
            queued = states.get((sub["job_id"], k))
            if queued in ("RUNNING", "PENDING", "CONFIGURING", "COMPLETING", "SUSPENDED"):
                state = queued.lower()
                active.update(pts)
            elif n_done == len(pts):
                state = "done"
            else:
                state = "failed"
            tasks.append(TaskStatus(sub["job_id"], sub["assignment"], k, len(pts), n_done, state))
    stranded = [i for i in missing if i not in active]
    running = sum(1 for t in tasks if t.state == "running")
    return SweepStatus(
        sweep_id=plan.sweep_id,
        points=len(plan.points),
        done=len(done),
        missing=missing,
        stranded=stranded,
        tasks=tasks,
        eta_s=_eta(plan, results, len(missing), max(1, running)),
    )


def _eta(plan: Plan, results: ResultsDir, missing: int, parallel: int) -> float | None:
    if not missing:
        return 0.0
    folder = points_dir(results, plan.sweep_id)
    files = sorted(folder.glob("p*.parquet"))[-200:] if folder.is_dir() else []
    if not files:
        return None
    cpu = [
        float(v)
        for f in files
        for v in pq.read_table(f, columns=["cpu_s"]).column("cpu_s").to_pylist()
        if v is not None
    ]
    return sum(cpu) / len(cpu) * missing / parallel if cpu else None
