"""`tailcast replay sweep`: many replays from one spec, locally or as a Slurm job array."""

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tailcast.cli._common import echo, emit_json, new_app, note

if TYPE_CHECKING:
    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import Plan
    from tailcast.sweeps.runner import PointDone
    from tailcast.sweeps.slurm import ArrayOptions

app = new_app(
    "Sweeps: every combination of a spec's axes (fabrics, placements, algorithms, background, "
    "fabric parameters) × seeds, one replay per point, run locally or as a Slurm job array; "
    "resumable, each point stored once."
)

SlurmOpt = Annotated[bool, typer.Option("--slurm", help="Submit as a Slurm job array.")]
ArraySize = Annotated[int, typer.Option("--array-size", min=1, help="Array tasks (shards).")]
Partition = Annotated[str | None, typer.Option("--partition", help="sbatch --partition.")]
TimeOpt = Annotated[str | None, typer.Option("--time", help="sbatch --time per task.")]
SbatchArg = Annotated[
    list[str] | None, typer.Option("--sbatch-arg", help="Extra sbatch argument (repeatable).")
]
Parallel = Annotated[
    int | None, typer.Option("--parallel", min=1, help="At most N tasks at once (--array=…%N).")
]
Jobs = Annotated[
    int | None, typer.Option("--jobs", min=1, help="Local worker processes (default: CPUs).")
]
AsJson = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _array_options(
    partition: str | None, time_limit: str | None, extra: list[str] | None, parallel: int | None
) -> "ArrayOptions":
    from tailcast.sweeps.slurm import ArrayOptions

    return ArrayOptions(partition, time_limit, tuple(extra or ()), parallel)


def _run_local(plan: "Plan", indices: list[int], results: "ResultsDir", jobs: int | None) -> int:
    import sys

    from rich.progress import Progress

    from tailcast.sweeps.runner import default_jobs, run_points

    workers = jobs or default_jobs()
    todo = len(indices)
    if sys.stderr.isatty():
        with Progress(transient=True) as bar:
            task = bar.add_task(f"sweep {plan.sweep_id}", total=todo)
            done = run_points(
                plan, indices, results, "local", workers, lambda _d: bar.advance(task)
            )
    else:
        count = [0]
        last = [time.monotonic()]

        def tick(_d: "PointDone") -> None:
            count[0] += 1
            if time.monotonic() - last[0] > 10 or count[0] == todo:
                note(f"sweep {plan.sweep_id}: {count[0]}/{todo} points")
                last[0] = time.monotonic()

        done = run_points(plan, indices, results, "local", workers, tick)
    return len(done)


@app.command("run")
def run(
    spec: Annotated[Path, typer.Argument(help="The sweep spec (TOML).")],
    slurm: SlurmOpt = False,
    array_size: ArraySize = 16,
    partition: Partition = None,
    time_limit: TimeOpt = None,
    sbatch_arg: SbatchArg = None,
    parallel: Parallel = None,
    jobs: Jobs = None,
    as_json: AsJson = False,
) -> None:
    """Plans SPEC (checked whole before anything runs), then runs it or submits it."""
    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import create_plan
    from tailcast.sweeps.slurm import submit_array
    from tailcast.sweeps.spec import load_spec

    results = ResultsDir()
    parsed = load_spec(spec)
    plan = create_plan(parsed, array_size if slurm else 1, results)
    out: dict[str, Any] = {"sweep_id": plan.sweep_id, "points": len(plan.points)}
    if slurm:
        opts = _array_options(partition, time_limit, sbatch_arg, parallel)
        out["job_id"] = submit_array(plan, results, plan.tasks, None, opts)
        out["tasks"] = plan.tasks
    else:
        out["ran"] = _run_local(plan, [p.index for p in plan.points], results, jobs)
    if as_json:
        emit_json(out)
        return
    echo(plan.sweep_id)
    if slurm:
        note(f"{len(plan.points)} points as array job {out['job_id']} of {plan.tasks} tasks")
    else:
        note(f"{out['ran']} points replayed")


@app.command("task")
def task(
    sweep_id: Annotated[str, typer.Argument(help="The sweep id.")],
    task_index: Annotated[int, typer.Option("--task", help="The array task index.")],
    assignment_name: Annotated[
        str | None, typer.Option("--assignment", help="A resubmission's assignment.")
    ] = None,
) -> None:
    """Runs one array task's points (what the sbatch script calls)."""
    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import assignment, load_plan
    from tailcast.sweeps.runner import run_points

    results = ResultsDir()
    plan = load_plan(sweep_id, results)
    indices = assignment(plan, assignment_name, task_index, results)
    label = f"{assignment_name or 'plan'}:{task_index}"
    done = run_points(plan, indices, results, label)
    note(f"sweep {sweep_id} task {label}: {len(done)} points replayed")


@app.command("status")
def status(
    sweep_id: Annotated[str, typer.Argument(help="The sweep id.")],
    watch: Annotated[
        bool, typer.Option("--watch", help="Refresh until every point is done.")
    ] = False,
    interval: Annotated[float, typer.Option("--interval", min=1, help="--watch period, s.")] = 10,
    as_json: AsJson = False,
) -> None:
    """Done / running / failed / missing per task, with Slurm job ids and an ETA."""
    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import load_plan
    from tailcast.sweeps.status import sweep_status

    results = ResultsDir()
    plan = load_plan(sweep_id, results)
    while True:
        st = sweep_status(plan, results)
        if as_json:
            emit_json(st.to_json())
        else:
            eta = "" if st.eta_s is None else f", ETA {st.eta_s:.0f} s of CPU per task"
            echo(f"{st.sweep_id}: {st.done}/{st.points} points done{eta}")
            for t in st.tasks:
                echo(f"  job {t.job_id} task {t.task:>3} ({t.assignment or 'plan'}): "
                     f"{t.state:<8} {t.done}/{t.points}")  # fmt: skip
            if st.stranded:
                shown = ", ".join(map(str, st.stranded[:20]))
                more = f" … ({len(st.stranded)})" if len(st.stranded) > 20 else ""
                echo(f"  missing (no task will run them): {shown}{more}")
        if not watch or st.done == st.points:
            return
        time.sleep(interval)


@app.command("resume")
def resume(
    sweep_id: Annotated[str, typer.Argument(help="The sweep id.")],
    slurm: SlurmOpt = False,
    array_size: ArraySize = 16,
    partition: Partition = None,
    time_limit: TimeOpt = None,
    sbatch_arg: SbatchArg = None,
    parallel: Parallel = None,
    jobs: Jobs = None,
    as_json: AsJson = False,
) -> None:
    """Runs (or submits) only the points neither done nor in a live task."""
    from tailcast.store import ResultsDir
    from tailcast.sweeps.plan import load_plan, write_assignment
    from tailcast.sweeps.slurm import submit_array
    from tailcast.sweeps.status import sweep_status

    results = ResultsDir()
    plan = load_plan(sweep_id, results)
    todo = sweep_status(plan, results).stranded
    out: dict[str, Any] = {"sweep_id": sweep_id, "points": len(todo)}
    if todo and slurm:
        k = min(array_size, len(todo))
        shards = [todo[i::k] for i in range(k)]
        name = write_assignment(plan, shards, results)
        opts = _array_options(partition, time_limit, sbatch_arg, parallel)
        out |= {"job_id": submit_array(plan, results, k, name, opts), "assignment": name}
    elif todo:
        out["ran"] = _run_local(plan, todo, results, jobs)
    if as_json:
        emit_json(out)
    elif not todo:
        note(f"sweep {sweep_id}: nothing to resume")
    elif slurm:
        note(f"{len(todo)} points resubmitted as array job {out['job_id']}")
    else:
        note(f"{out['ran']} points replayed")


@app.command("cancel")
def cancel(sweep_id: Annotated[str, typer.Argument(help="The sweep id.")]) -> None:
    """Cancels every array job of the sweep (finished points stay)."""
    from tailcast.collectors.slurm_jobs import scancel
    from tailcast.store import ResultsDir
    from tailcast.sweeps import slurm
    from tailcast.sweeps.plan import load_plan

    results = ResultsDir()
    plan = load_plan(sweep_id, results)
    ids = [s["job_id"] for s in slurm.submissions(plan, results)]
    scancel(ids)
    note(f"sweep {sweep_id}: cancelled {', '.join(ids) or 'nothing (never submitted)'}")
