"""Slurm job control, one place for every submitter (campaigns, the lab, sweeps): `sbatch`
with inherited SBATCH_* scrubbed, job states from squeue, scancel. argv lists with timeouts."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import ExternalToolError

# Never retried: a retry after a timeout could submit the job twice.
_SUBMIT = RetryPolicy(attempts=1, timeout_s=60)
_QUERY = RetryPolicy(attempts=3, timeout_s=20)
_CANCEL = RetryPolicy(attempts=2, timeout_s=30)


def scrubbed_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for sbatch without inherited SBATCH_* variables: sbatch reads them as
    options, and they would silently override the rendered #SBATCH lines."""
    env = dict(os.environ if base is None else base)
    return {k: v for k, v in env.items() if not k.startswith("SBATCH_")}


def sbatch(options: Sequence[str], script: Path | None = None) -> str:
    """`sbatch --parsable OPTIONS [SCRIPT]` (with no script, `options` carry `--wrap`);
    returns the job id."""
    argv = ["sbatch", "--parsable", *options]
    if script is not None:
        argv.append(str(script))
    proc = run_tool(argv, _SUBMIT, env=scrubbed_env())
    job_id = proc.stdout.strip().split(";")[0]
    if not (job_id.isascii() and job_id.isdigit()):
        raise ExternalToolError("sbatch", f"unexpected output {proc.stdout.strip()!r}")
    return job_id


def job_state(job_id: str) -> str:
    """The job's state as squeue shows it, or "GONE" when squeue no longer knows it."""
    out = run_tool(["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T"], _QUERY, check=False)
    return out.stdout.strip() or "GONE"


def array_task_states(job_ids: Sequence[str]) -> dict[tuple[str, int], str]:
    """(array job id, task) → state of the array tasks Slurm still knows (squeue -r)."""
    if not job_ids:
        return {}
    argv = ["squeue", "-h", "-r", "-o", "%F %K %T", "-j", ",".join(job_ids)]
    proc = run_tool(argv, _QUERY, check=False)
    states: dict[tuple[str, int], str] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isascii() and parts[1].isdigit():
            states[(parts[0], int(parts[1]))] = parts[2]
    return states


def scancel(job_ids: Sequence[str], check: bool = True) -> None:
    if job_ids:
        run_tool(["scancel", *job_ids], _CANCEL, check=check)
