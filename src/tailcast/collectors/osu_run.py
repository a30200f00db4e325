"""Running OSU Micro-Benchmarks: find the binaries, detect their version, build the argv
each version accepts, launch under srun/mpirun, and parse the result.

Version rules (OMB docs and real 7.2/7.4 behaviour in shared/data/osu-7.4):
- `-m MIN:MAX`, `-i ITER`, `-x WARMUP` everywhere (barriers and start-up tests take no -m);
- `-f` (min/max/iterations columns) only for collectives — pt2pt benchmarks reject it;
- `-z` (tail percentile columns) only from 7.3, and a custom list only attached (`-z50,90`);
- `-c` (validation) from 7.0;
- never a positional argument: OSU silently ignores every option after one.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tailcast.collectors.launcher import Launcher
from tailcast.collectors.osu_errors import OsuError, OsuOptionsIgnoredError, OsuTimedOutError
from tailcast.collectors.osu_output import OsuOutput
from tailcast.collectors.osu_parse import check_validation, parse_osu_output
from tailcast.collectors.osu_suite import BANDWIDTH, BLOCKING, NONBLOCKING, SUITE, benchmark
from tailcast.collectors.proc import RetryPolicy, run_tool, tool_env
from tailcast.errors import ExternalToolError, UsageError

# Where `make install` puts a benchmark under a prefix, and where a build tree has it.
_INSTALLED = "libexec/osu-micro-benchmarks/mpi"
_BUILD_TREE = {
    "collective": ("c/mpi/collective/blocking", "c/mpi/collective/non_blocking",
                   "c/mpi/collective/neighborhood", "c/mpi/collective/persistent"),
    "pt2pt": ("c/mpi/pt2pt/standard",),
    "pt2pt/persistent": ("c/mpi/pt2pt/persistent",),
    "congestion": ("c/mpi/pt2pt/congestion",),
    "one-sided": ("c/mpi/one-sided",),
    "startup": ("c/mpi/startup",),
}  # fmt: skip
_VERSION = re.compile(rb"# OSU MPI[^\n]*? v(\d+(?:\.\d+)+)")
# Grace between SIGTERM and SIGKILL when a run overstays its time: the launcher forwards
# SIGTERM to the ranks, whose tracer flushes what it recorded.
KILL_GRACE_S = 10.0


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def find_osu_binary(name: str, osu_dir: Path | None = None) -> Path:
    """`--osu-dir`, then $OSU_HOME, then PATH; each root may be an install prefix, a build
    tree, or a directory holding the binaries."""
    try:
        bench = benchmark(name)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    roots = [r for r in (osu_dir, os.environ.get("OSU_HOME")) if r]
    subdirs = (".", "bin", f"{_INSTALLED}/{bench.subdir}", f"mpi/{bench.subdir}", bench.subdir,
               *_BUILD_TREE.get(bench.subdir, ()))  # fmt: skip
    for root in roots:
        for sub in subdirs:
            candidate = Path(root) / sub / bench.binary
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which(bench.binary)
    if found:
        return Path(found)
    looked = ", ".join(str(r) for r in roots) or "no --osu-dir/$OSU_HOME"
    raise ExternalToolError(bench.binary, f"OSU binary not found ({looked}; not on PATH either)")


@functools.lru_cache(maxsize=256)
def osu_version(binary: Path, policy: RetryPolicy = RetryPolicy(attempts=1, timeout_s=30)) -> str:
    """Runs `binary -v` (an MPI singleton, ~1 s: remembered per binary for the process);
    if that fails, reads the version from the header string compiled into the binary."""
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
    bench = benchmark(req.benchmark)
    ver = version_tuple(version)
    argv = [str(binary)]
    if bench.sized:
        argv += ["-m", f"{req.size_bytes}:{req.size_bytes}"]
    argv += ["-i", str(req.iterations), "-x", str(req.warmup)]
    if bench.collective:
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


_FULL = {
    BLOCKING: ["Min Latency(us)", "Max Latency(us)", "Iterations"],
    NONBLOCKING: ["Coll. Init(us)", "MPI_Test(us)", "MPI_Wait(us)", "Pure Comm.(us)",
                  "Min Comm.(us)", "Max Comm.(us)", "Overlap(%)"],
}  # fmt: skip


def expected_columns(version: str, req: OsuRequest) -> list[str]:
    """Columns the output must have if OSU honoured every option we gave."""
    bench = SUITE[req.benchmark]
    want = list(_FULL.get(bench.loop, [])) if bench.collective else []
    if req.validate:
        want.append("Validation")
    if req.tail and version_tuple(version) >= (7, 3):
        unit = "BW(MB/s)" if bench.metric == BANDWIDTH else "Lat(us)"
        want += [f"P{p} Tail {unit}" for p in (req.percentiles or (50, 90, 99))]
    return want


@dataclass(frozen=True)
class Finished:
    """A launched command's output, also when it was stopped for overstaying."""

    stdout: str
    stderr: str
    returncode: int
    timed_out: bool


def run_to_end(argv: list[str], timeout_s: float, env: Mapping[str, str] | None = None) -> Finished:
    """Runs `argv` in its own process group; past `timeout_s` the group gets SIGTERM, then
    SIGKILL after KILL_GRACE_S. What it printed until then is kept (a partial OSU output)."""
    try:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else tool_env(),
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise ExternalToolError(Path(argv[0]).name, f"not found ({exc.filename})") from exc
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return Finished(out.decode(errors="replace"), err.decode(errors="replace"),
                        proc.returncode, False)  # fmt: skip
    except subprocess.TimeoutExpired:
        pass
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            out, err = proc.communicate(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        out, err = proc.communicate()
    note = f"\ntailcast: stopped after the {timeout_s:g} s time limit\n"
    return Finished(out.decode(errors="replace"), err.decode(errors="replace") + note,
                    proc.returncode, True)  # fmt: skip


def run_osu(
    launcher: Launcher,
    ranks: int,
    binary: Path,
    version: str,
    req: OsuRequest,
    timeout_s: float = 3600.0,
    rank_env: Mapping[str, str] | None = None,
) -> tuple[OsuOutput, list[str]]:
    """Runs one OSU benchmark; returns the parsed output and the argv used. OSU problems
    raise OsuError subclasses carrying OSU's text (OsuTimedOutError: stopped before any row).
    A run that was stopped or whose ranks failed after printing rows comes back `partial`,
    rows kept. `rank_env` is set for the
    ranks only (through the launcher), not for the launcher itself."""
    argv = launcher.argv(ranks, osu_argv(binary, version, req), rank_env or {})
    done = run_to_end(argv, timeout_s)
    try:
        out = parse_osu_output(
            done.stdout, stderr=done.stderr, tool=binary.name, returncode=done.returncode
        )
    except OsuError as exc:
        if done.timed_out:
            raise OsuTimedOutError(
                f"stopped after {timeout_s:g} s before a result row", exc.osu_text,
                returncode=done.returncode, tool=binary.name,
            ) from exc  # fmt: skip
        exc.returncode = done.returncode
        raise
    if not out.partial:
        missing = [c for c in expected_columns(version, req) if c not in out.columns]
        if missing:
            raise OsuOptionsIgnoredError(
                "OSU ignored options", f"missing columns {missing} for argv {argv}",
                tool=binary.name,
            )  # fmt: skip
    if req.validate:
        check_validation(out, binary.name)
    return out, argv
