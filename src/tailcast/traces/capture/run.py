"""`tailcast trace capture`: runs a launcher command with the tracer preloaded, then turns
the per-rank files into one Parquet trace (also when the program failed: a partial trace)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tailcast.errors import ExternalToolError
from tailcast.traces.capture.build import build_tracer
from tailcast.traces.capture.raw import convert_raw
from tailcast.traces.io import TraceMeta, write_trace

OPEN_MPI_LAUNCHERS = {"mpirun", "mpiexec", "orterun"}


@dataclass
class CaptureResult:
    output: Path
    returncode: int
    ranks: int
    calls: int
    meta: TraceMeta


def _launch_argv(argv: list[str]) -> list[str]:
    """Open MPI's mpirun forwards only some variables to remote daemons: ask for ours."""
    if Path(argv[0]).name in OPEN_MPI_LAUNCHERS:
        return [argv[0], "-x", "LD_PRELOAD", "-x", "TAILCAST_TRACE_DIR", *argv[1:]]
    return list(argv)


def capture_run(
    argv: list[str],
    output: Path,
    application: str | None = None,
    keep_raw: bool = False,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> CaptureResult:
    """Runs `argv` (e.g. mpirun -np 4 ./app) under the tracer and writes `output`; the
    tracer is built first if this MPI has no build yet (`progress` hears about it)."""
    output = Path(output).resolve()
    library = build_tracer(progress=progress)
    # Next to the output: a shared file system when the output is on one (multi-node runs).
    output.parent.mkdir(parents=True, exist_ok=True)
    raw_dir = Path(tempfile.mkdtemp(prefix=f".{output.stem}-raw-", dir=output.parent))
    run_env = dict(os.environ if env is None else env)
    preload = run_env.get("LD_PRELOAD", "")
    run_env["LD_PRELOAD"] = f"{library}:{preload}" if preload else str(library)
    run_env["TAILCAST_TRACE_DIR"] = str(raw_dir)
    try:
        try:
            proc = subprocess.run(_launch_argv(argv), env=run_env, timeout=timeout, check=False)
            returncode = proc.returncode
        except FileNotFoundError as exc:
            raise ExternalToolError(argv[0], "command not found") from exc
        except subprocess.TimeoutExpired:
            returncode = -9
        name = application or Path(argv[-1]).name
        table, meta = convert_raw(raw_dir, application=name)
        meta.extra["command"] = " ".join(argv)
        meta.extra["returncode"] = str(returncode)
        write_trace(table, output, meta)
    finally:
        if not keep_raw:
            shutil.rmtree(raw_dir, ignore_errors=True)
    return CaptureResult(output, returncode, meta.ranks, table.num_rows, meta)
