"""A sweep as a Slurm job array: one sbatch script per submission (task k runs shard k of
the plan, or of a resubmission's assignment), and the record of what was submitted. Job
control itself (sbatch, squeue -r states, scancel) is collectors/slurm_jobs.py. A task squeue
no longer lists is judged by its stored points, so no accounting (sacct) is needed."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from tailcast.collectors.slurm_jobs import sbatch
from tailcast.store import ResultsDir
from tailcast.sweeps.plan import Plan, sweep_dir, write_json
from tailcast.sweeps.runner import python_command


@dataclass(frozen=True)
class ArrayOptions:
    partition: str | None = None
    time: str | None = None
    extra: tuple[str, ...] = ()
    # At most this many tasks running at once (sbatch --array=…%N); None: no limit.
    parallel: int | None = None


def render_script(
    plan: Plan, results: ResultsDir, tasks: int, assignment: str | None, opts: ArrayOptions
) -> str:
    """The sbatch script of one submission (its name selects the assignment)."""
    folder = sweep_dir(results, plan.sweep_id)
    logs = folder / "logs"
    label = assignment or "plan"
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name=tailcast-sweep-{plan.sweep_id}"[:200],
        f"#SBATCH --output={logs}/{label}-%a.out",
        "#SBATCH --ntasks=1",
    ]
    if opts.partition:
        lines.append(f"#SBATCH --partition={opts.partition}")
    if opts.time:
        lines.append(f"#SBATCH --time={opts.time}")
    argv = [*python_command(), "replay", "sweep", "task", plan.sweep_id]
    if assignment:
        argv += ["--assignment", assignment]
    lines += [
        f"export TAILCAST_HOME={shlex.quote(str(results.root))}",
        # One thread per task: the array is the parallelism.
        "export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1",
        "exec " + " ".join(shlex.quote(a) for a in argv) + ' --task "$SLURM_ARRAY_TASK_ID"',
        "",
    ]
    return "\n".join(lines)


def submit_array(
    plan: Plan,
    results: ResultsDir,
    tasks: int,
    assignment: str | None,
    opts: ArrayOptions,
) -> str:
    """Submits `tasks` array tasks; records the job id in submissions.json; returns it."""
    folder = sweep_dir(results, plan.sweep_id)
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    script = folder / f"{assignment or 'plan'}.sbatch"
    script.write_text(render_script(plan, results, tasks, assignment, opts))
    spec = f"0-{tasks - 1}" + (f"%{opts.parallel}" if opts.parallel else "")
    job_id = sbatch([f"--array={spec}", *opts.extra], script)
    subs = submissions(plan, results)
    subs.append({"job_id": job_id, "assignment": assignment, "tasks": tasks})
    write_json(folder / "submissions.json", subs)
    return job_id


def submissions(plan: Plan, results: ResultsDir) -> list[dict[str, Any]]:
    path = sweep_dir(results, plan.sweep_id) / "submissions.json"
    if not path.is_file():
        return []
    return list(json.loads(path.read_text()))
