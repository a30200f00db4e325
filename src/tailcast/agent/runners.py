"""One benchmark run (one benchmark at one message size) turned into the rows the store
keeps, and the built-in mpi4py implementation (the OSU one is agent.osu_runner)."""

from __future__ import annotations

import json
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.collectors.launcher import Launcher
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import ExternalToolError, InputError


@dataclass
class RunOutcome:
    samples: list[dict[str, Any]]  # without run_id
    osu_results: list[dict[str, Any]]  # without run_id
    argv: list[str]
    mpi_library: str
    versions: dict[str, str] = field(default_factory=dict)
    hosts: list[str] = field(default_factory=list)
    topology_addrs: dict[str, str] = field(default_factory=dict)
    iterations: int = 0
    warmup_samples: list[dict[str, Any]] = field(default_factory=list)  # without run_id
    ranks: int | None = None  # when the benchmark ran on fewer ranks (pt2pt pairs: 2)
    partial: bool = False  # stopped before it finished; what it measured is kept


@dataclass(frozen=True)
class BuiltinResult:
    times_us: np.ndarray  # iterations × ranks
    hosts: list[str]
    topology_addrs: list[str]
    meta: dict[str, str]


def load_builtin_result(path: Path) -> BuiltinResult:
    """Reads what `python -m tailcast.agent.builtin --out PATH` wrote."""
    try:
        with np.load(path, allow_pickle=False) as z:
            times = np.asarray(z["times_us"], dtype=np.float64)
            hosts = [str(h) for h in z["hosts"]]
            addrs = [str(a) for a in z["topology_addrs"]]
            meta = json.loads(str(z["meta"]))
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(path, f"not a built-in benchmark result ({exc})") from exc
    if times.ndim != 2 or times.shape[1] != len(hosts):
        raise InputError(path, f"times_us shape {times.shape} does not match {len(hosts)} ranks")
    return BuiltinResult(times, hosts, addrs, meta)


def sample_rows(
    times_us: np.ndarray, per_rank: bool = True, first: int = 0
) -> list[dict[str, Any]]:
    """One row per iteration (numbered from `first`): max over ranks (what OSU reports),
    mean over ranks and, optionally, every rank's time. Ranks that took no part (NaN:
    pt2pt) are skipped."""
    if times_us.shape[0] == 0:
        return []
    worst = np.nanmax(times_us, axis=1)
    mean = np.nanmean(times_us, axis=1)
    rows = []
    for i in range(times_us.shape[0]):
        row: dict[str, Any] = {
            "iteration": first + i,
            "latency_us": float(worst[i]),
            "latency_us_mean": float(mean[i]),
        }
        if per_rank:
            row["rank_latency_us"] = [float(x) for x in times_us[i]]
        rows.append(row)
    return rows


def run_builtin(
    launcher: Launcher,
    ranks: int,
    benchmark: str,
    size: int,
    iterations: int,
    warmup: int,
    interval_ms: float,
    timeout_s: float,
    per_rank: bool = True,
    workdir: Path | None = None,
) -> RunOutcome:
    """Launches the mpi4py benchmark as `ranks` processes; rank 0 writes the iterations ×
    ranks matrix to a file this process reads back."""
    with tempfile.TemporaryDirectory(prefix="tailcast-builtin-", dir=workdir) as tmp:
        out = Path(tmp) / f"{uuid.uuid4().hex}.npz"
        program = [
            sys.executable,
            "-m",
            "tailcast.agent.builtin",
            "--benchmark",
            benchmark,
            "--size",
            str(size),
            "--iterations",
            str(iterations),
            "--warmup",
            str(warmup),
            "--interval-ms",
            f"{interval_ms:g}",
            "--out",
            str(out),
        ]
        argv = launcher.argv(ranks, program)
        proc = run_tool(argv, RetryPolicy(attempts=1, timeout_s=timeout_s), check=False)
        if proc.returncode != 0 or not out.exists():
            raise ExternalToolError(
                launcher.name,
                f"built-in {benchmark} benchmark failed (status {proc.returncode})",
                # Open MPI frames its messages in dashed lines: keep the words
                "\n".join(ln for ln in proc.stderr.splitlines() if ln.strip("- ")),
                proc.returncode,
            )
        result = load_builtin_result(out)
    meta = dict(result.meta)
    hosts = result.hosts
    addrs = {a.split(".")[-1]: a for a in result.topology_addrs if a}
    return RunOutcome(
        samples=sample_rows(result.times_us, per_rank),
        osu_results=[],
        argv=argv,
        mpi_library=meta.pop("mpi_library", "unknown"),
        versions=meta,
        hosts=hosts,
        topology_addrs=addrs,
        iterations=int(result.times_us.shape[0]),
    )
