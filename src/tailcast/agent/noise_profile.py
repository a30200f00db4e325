"""`tailcast agent noise-profile`: the fixed-work-quantum loop (fwq/fwq.c) on every node of
the allocation at once, one process per node under srun (each task's output to its own
file, srun's `%t`), or on this host alone (`local`), turned into one noise profile per
node (collectors/noise_profile.py) and stored. Each loop names its node (Slurm's name in a
job step, else the host name) in its output.

The loop is C, built with the system's C compiler into the per-user cache (a file name
carrying a hash of the source, so a changed loop is rebuilt, and a build lock as the
tracer's): a Python loop would add its interpreter's own pauses (reference counting, the
cyclic collector) to the detours it measures. fwq prints its own floor (one clock reading,
~20 ns here) with every profile.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from tailcast.collectors.noise_profile import NoiseProfile, parse_fwq_output
from tailcast.errors import ExternalToolError, UsageError
from tailcast.paths import cache_home

BUILD_TIMEOUT_S = 120
SOURCE = "fwq.c"
# fwq keeps each quantum's duration (8 bytes) until it ends: at most 120 MB.
MAX_QUANTA = 15_000_000


def _check(seconds: float, quantum_ns: int) -> None:
    quanta = seconds * 1e9 / quantum_ns
    if quanta > MAX_QUANTA:
        raise UsageError(
            f"{seconds:g} s of {quantum_ns / 1000:g} µs quanta are {quanta:,.0f} quanta; at most "
            f"{MAX_QUANTA:,} (fewer seconds or a longer quantum)"
        )


def _source() -> Path:
    return Path(str(resources.files("tailcast.agent") / "fwq" / SOURCE))


def build_fwq() -> Path:
    """The fwq binary for the current source, built once per source."""
    source = _source()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_home() / "fwq" / f"fwq-{digest}"
    if target.is_file():
        return target
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise ExternalToolError("cc", "no C compiler to build the noise loop (set $CC)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        proc = subprocess.run(
            [compiler, "-O2", "-o", str(tmp), str(source)],
            capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise ExternalToolError("cc", "failed to build fwq", proc.stderr, proc.returncode)
        os.replace(tmp, target)
    return target


def _run(argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ExternalToolError(Path(argv[0]).name, f"timed out after {timeout_s:g} s") from exc
    if proc.returncode != 0:
        raise ExternalToolError(
            Path(argv[0]).name, "the noise loop failed", proc.stderr, proc.returncode
        )
    return proc


def measure_local(seconds: float, quantum_ns: int, threshold_ns: int) -> list[NoiseProfile]:
    _check(seconds, quantum_ns)
    fwq = build_fwq()
    proc = _run([str(fwq), str(quantum_ns), f"{seconds:g}", str(threshold_ns)], seconds * 3 + 60)
    return [parse_fwq_output(proc.stdout, f"{fwq} output")]


def measure_allocation(
    nodes: list[str], seconds: float, quantum_ns: int, threshold_ns: int, workdir: Path
) -> list[NoiseProfile]:
    """One fwq per node of the allocation, all at once (srun); `workdir` must be on a file
    system every node writes to (the results directory is)."""
    if not nodes:
        raise UsageError("noise-profile runs inside a Slurm allocation (or give --local)")
    _check(seconds, quantum_ns)
    srun = shutil.which("srun")
    if srun is None:
        raise ExternalToolError("srun", "not on PATH")
    fwq = build_fwq()
    workdir.mkdir(parents=True, exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix=".noise-", dir=workdir))
    try:
        argv = [srun, f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}",
                "--ntasks-per-node=1", f"--output={out}/%t.txt",
                str(fwq), str(quantum_ns), f"{seconds:g}", str(threshold_ns)]  # fmt: skip
        _run(argv, seconds * 3 + 120)
        profiles = [
            parse_fwq_output(path.read_text(), str(path)) for path in sorted(out.glob("*.txt"))
        ]
        missing = sorted(set(nodes) - {p.node for p in profiles})
        if missing:
            raise ExternalToolError("srun", f"no fwq output from nodes {missing} (in {out})")
        return sorted(profiles, key=lambda p: nodes.index(p.node) if p.node in nodes else 0)
    finally:
        shutil.rmtree(out, ignore_errors=True)
