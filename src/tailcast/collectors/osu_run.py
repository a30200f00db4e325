"""Running OSU Micro-Benchmarks: find the binaries, detect their version, build the argv
each version accepts, launch under srun/mpirun, and parse the result.

Version rules (OMB docs and real 7.2/7.4 behaviour in shared/data/osu-7.4):
- `-m MIN:MAX`, `-i ITER`, `-x WARMUP` everywhere;
- `-f` (min/max/iterations columns) only for collectives — pt2pt benchmarks reject it;
- `-z` (P50/P90/P99 tail columns) only from 7.3, and a custom list only attached (`-z50,90`);
- `-c` (validation) from 7.0;
- never a positional argument: OSU silently ignores every option after one.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tailcast.collectors.launcher import Launcher
from tailcast.collectors.osu_parse import (
    OsuError,
    OsuOptionsIgnoredError,
    OsuOutput,
    parse_osu_output,
)
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import ExternalToolError, UsageError

# benchmark key -> (binary, kind)
OSU_BENCHMARKS: dict[str, tuple[str, str]] = {
    "bcast": ("osu_bcast", "collective"),
    "reduce": ("osu_reduce", "collective"),
    "allreduce": ("osu_allreduce", "collective"),
    "alltoall": ("osu_alltoall", "collective"),
    "allgather": ("osu_allgather", "collective"),
    "barrier": ("osu_barrier", "collective"),
    "latency": ("osu_latency", "pt2pt"),
}
# Where `make install` puts them under a prefix, and where a build tree has them.
_SUBDIRS = (
    ".",
    "libexec/osu-micro-benchmarks/mpi/collective",
    "libexec/osu-micro-benchmarks/mpi/pt2pt",
    "libexec/osu-micro-benchmarks/mpi/pt2pt/standard",
    "mpi/collective",
    "mpi/pt2pt",
    "mpi/pt2pt/standard",
    "c/mpi/collective/blocking",
    "c/mpi/pt2pt/standard",
    "collective",
    "pt2pt",
    "bin",
)
_VERSION = re.compile(rb"# OSU MPI[^\n]*? v(\d+(?:\.\d+)+)")


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def find_osu_binary(benchmark: str, osu_dir: Path | None = None) -> Path:
    """`--osu-dir`, then $OSU_HOME, then PATH."""
    if benchmark not in OSU_BENCHMARKS:
        raise UsageError(f"no OSU benchmark {benchmark!r}; known: {', '.join(OSU_BENCHMARKS)}")
    name = OSU_BENCHMARKS[benchmark][0]
    roots = [r for r in (osu_dir, os.environ.get("OSU_HOME")) if r]
    for root in roots:
        for sub in _SUBDIRS:
            candidate = Path(root) / sub / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which(name)
    if found:
        return Path(found)
    looked = ", ".join(str(r) for r in roots) or "no --osu-dir/$OSU_HOME"
    raise ExternalToolError(name, f"OSU binary not found ({looked}; not on PATH either)")


def osu_version(binary: Path, policy: RetryPolicy = RetryPolicy(attempts=1, timeout_s=30)) -> str:
    """Runs `binary -v` (an MPI singleton); if that fails, reads the version from the header
    string compiled into the binary."""
    try:
        out = run_tool([str(binary), "-v"], policy, check=False).stdout
        found = _VERSION.search(out.encode())
        if found:
            return found.group(1).decode()
    except ExternalToolError:
        pass
    try:
        found = _VERSION.search(binary.read_bytes())
    except OSError as exc:
        raise ExternalToolError(binary.name, f"cannot read binary ({exc})") from exc
    if not found:
        raise ExternalToolError(binary.name, "cannot tell the OSU version (-v printed none)")
    return found.group(1).decode()


@dataclass(frozen=True)
class OsuRequest:
    benchmark: str
    size_bytes: int
    iterations: int
    warmup: int
    tail: bool = True  # -z when the version has it
    validate: bool = False  # -c
    percentiles: tuple[int, ...] = ()  # custom -z list (attached form)


def osu_argv(binary: Path | str, version: str, req: OsuRequest) -> list[str]:
    """The options one OSU version accepts for `req` (no positional arguments ever)."""
    kind = OSU_BENCHMARKS[req.benchmark][1]
    ver = version_tuple(version)
    argv = [str(binary)]
    if req.benchmark != "barrier":
        argv += ["-m", f"{req.size_bytes}:{req.size_bytes}"]
    argv += ["-i", str(req.iterations), "-x", str(req.warmup)]
    if kind == "collective":
        argv.append("-f")
    if req.validate:
        if ver < (7, 0):
            raise UsageError(f"OSU {version} has no validation (-c needs ≥ 7.0)")
        argv.append("-c")
    if req.tail and ver >= (7, 3):
        argv.append("-z" + ",".join(str(p) for p in req.percentiles))
    elif req.percentiles:
        raise UsageError(f"OSU {version} has no tail percentiles (-z needs ≥ 7.3)")
    return argv


def expected_columns(version: str, req: OsuRequest) -> list[str]:
    """Columns the output must have if OSU honoured every option we gave."""
    want = []
    if OSU_BENCHMARKS[req.benchmark][1] == "collective":
        want += ["Min Latency(us)", "Max Latency(us)", "Iterations"]
    if req.validate:
        want.append("Validation")
    if req.tail and version_tuple(version) >= (7, 3):
        want += [f"P{p} Tail Lat(us)" for p in (req.percentiles or (50, 90, 99))]
    return want


def run_osu(
    launcher: Launcher,
    ranks: int,
    binary: Path,
    version: str,
    req: OsuRequest,
    timeout_s: float = 3600.0,
) -> tuple[OsuOutput, list[str]]:
    """Runs one OSU benchmark; returns the parsed output and the argv used. OSU problems
    raise OsuError subclasses carrying OSU's text."""
    argv = launcher.argv(ranks, osu_argv(binary, version, req))
    proc = run_tool(argv, RetryPolicy(attempts=1, timeout_s=timeout_s), check=False)
    try:
        out = parse_osu_output(proc.stdout, stderr=proc.stderr, tool=binary.name)
    except OsuError as exc:
        exc.returncode = proc.returncode
        raise
    if proc.returncode != 0:
        raise OsuError(
            f"exited with status {proc.returncode}",
            proc.stderr.strip()[-500:],
            returncode=proc.returncode,
            tool=binary.name,
        )
    missing = [c for c in expected_columns(version, req) if c not in out.columns]
    if missing:
        raise OsuOptionsIgnoredError(
            "OSU ignored options", f"missing columns {missing} for argv {argv}", tool=binary.name
        )
    if req.validate:
        out.raise_for_validation()
    return out, argv
