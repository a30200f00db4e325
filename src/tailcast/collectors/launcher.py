"""Which MPI launcher starts benchmark ranks, and the argv it needs.

Auto-detection: `mpirun` when it is on PATH (Open MPI/MPICH read the Slurm allocation
themselves), else `srun` inside an allocation (needs an MPI built with Slurm PMI support).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tailcast.collectors.jobs import expand_nodes
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import ExternalToolError, UsageError

LAUNCHERS = ("auto", "mpirun", "srun")


@dataclass(frozen=True)
class Launcher:
    name: str  # mpirun | srun
    path: str
    extra_args: tuple[str, ...] = ()

    def argv(
        self, ranks: int, program: Sequence[str], rank_env: Mapping[str, str] | None = None
    ) -> list[str]:
        """Starts `program` as `ranks` MPI processes, one per node when the allocation has
        that many nodes (seed 001: one process per node leaves cores to the OS). `rank_env`
        is set in the ranks' environment only (mpirun -x, srun --export), so e.g. an
        LD_PRELOAD reaches the ranks and not the launcher."""
        if ranks < 1:
            raise UsageError(f"ranks must be ≥ 1, got {ranks}")
        env = dict(rank_env or {})
        if self.name == "srun":
            base = [self.path, f"--ntasks={ranks}"]
            if _allocation_nodes() == ranks:
                base.append("--ntasks-per-node=1")
            if any("," in v for v in env.values()):
                raise UsageError(f"srun --export cannot pass values with commas: {env}")
            if env:
                base.append("--export=" + ",".join(["ALL", *(f"{k}={v}" for k, v in env.items())]))
        else:
            base = [self.path, "-np", str(ranks)]
            if _allocation_nodes() is not None and "--map-by" not in self.extra_args:
                base += ["--map-by", "node"]
            for key, value in env.items():
                base += ["-x", f"{key}={value}"]
        return [*base, *self.extra_args, *program]

    def version(self, policy: RetryPolicy = RetryPolicy(attempts=1, timeout_s=20)) -> str:
        """First line of `<launcher> --version`, e.g. "mpirun (Open MPI) 4.1.4"."""
        try:
            out = run_tool([self.path, "--version"], policy).stdout
        except ExternalToolError as exc:
            return f"unknown ({exc})"
        return out.strip().splitlines()[0] if out.strip() else "unknown"


def _allocation_nodes() -> int | None:
    value = os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES")
    return int(value) if value and value.isascii() and value.isdigit() else None


def detect_launcher(name: str = "auto", extra_args: Sequence[str] = ()) -> Launcher:
    if name not in LAUNCHERS:
        raise UsageError(f"unknown launcher {name!r}; choose from {', '.join(LAUNCHERS)}")
    candidates = ("mpirun", "srun") if name == "auto" else (name,)
    for candidate in candidates:
        if candidate == "srun" and name == "auto" and "SLURM_JOB_ID" not in os.environ:
            continue  # srun outside an allocation would queue a new job
        path = shutil.which(candidate)
        if path:
            return Launcher(candidate, path, tuple(extra_args))
    raise ExternalToolError(name, "no MPI launcher found (looked for mpirun, srun on PATH)")


def allocation_nodes_list() -> list[str]:
    """Expanded SLURM_JOB_NODELIST of the allocation we run in (empty outside one)."""
    return list(expand_nodes(os.environ.get("SLURM_JOB_NODELIST", "")))
