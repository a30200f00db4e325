"""Runs the OTF2 decoding in a child process under a wall-clock and an address-space limit.

Why: the OTF2 reader is C underneath (the PyPI `otf2` bindings). On a damaged archive it
can loop or allocate without bound inside the library, where no Python-level check runs
(one CI run stalled there with the test process at 3.4 GB). A child process can be capped
(RLIMIT_AS) and killed; the caller then gets an InputError naming the file instead of a hang.

Protocol: the parent runs `python -m tailcast.traces.otf2_sandbox ANCHOR WORKDIR LIMIT` in
its own session (process group), WORKDIR being a private temporary directory. The child
imports what it needs, lowers its RLIMIT_AS to LIMIT bytes, decodes with
`otf2_decode.decode_otf2` and writes either `table.arrow` (Arrow IPC file) and
`meta.json`, or `error.json`. The parent waits for the child's exit without reaping it, so
its pid and process group id cannot be reused, kills the whole group (nothing outlives the
call), reaps it, and removes WORKDIR on every path.

The child's work (`decode_into`), the limits (`limits`) and the reading of WORKDIR
(`outcome`) are functions of their own: the fuzz bench (bench/trace_fuzz.py) forks a child
per damaged archive from a process that has imported the same modules, and runs exactly
this code, without an interpreter start per archive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa

from tailcast.errors import InputError, UsageError
from tailcast.traces.io import TraceMeta

TIMEOUT_ENV = "TAILCAST_OTF2_TIMEOUT_S"
MEMORY_ENV = "TAILCAST_OTF2_MEMORY_MB"
# The in-process import decodes ~2.5 MB of archive per CPU-second (sst-macro-10rank, ~0.5 MB:
# ~0.12 s); the child's start-up (interpreter, pyarrow, otf2) takes ~0.3 s. The floor covers
# start-up on a loaded CI machine, the slope is ~10x the measured decoding rate.
TIMEOUT_FLOOR_S = 60.0
TIMEOUT_S_PER_MIB = 5.0
# The child's address space is ~0.45 GB after its imports, and the converter holds ~50-80
# bytes of Python objects per archive byte; pyarrow's allocator reserves address space
# generously but adapts to the limit. So: a few GB, growing with the archive.
MEMORY_FLOOR_BYTES = 4 << 30
MEMORY_BYTES_PER_ARCHIVE_BYTE = 128
_MIB = 1 << 20
_EXIT_MEMORY = 3  # the child's exit status when it ran out of memory


def run(
    path: Path, *, timeout_s: float | None = None, memory_mb: float | None = None
) -> tuple[pa.Table, TraceMeta]:
    """Decodes the OTF2 archive anchored at `path` in a child process (see module doc)."""
    timeout, memory = limits(path, timeout_s=timeout_s, memory_mb=memory_mb)
    work = Path(tempfile.mkdtemp(prefix="tailcast-otf2-"))
    try:
        with (work / "stderr.txt").open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", __name__, str(path), str(work), str(memory)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env=_child_env(),
            )
        try:
            exited = _wait_unreaped(proc, timeout)
        finally:
            _kill_and_reap(proc)
        if not exited:
            raise InputError(
                path, f"OTF2 decoding timed out after {timeout:g} s (raise {TIMEOUT_ENV})"
            )
        return outcome(path, work, proc.returncode, memory)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def limits(
    path: Path, *, timeout_s: float | None = None, memory_mb: float | None = None
) -> tuple[float, int]:
    """The child's wall-clock limit in seconds and address-space limit in bytes for the
    archive anchored at `path`: the arguments, else the environment, else scaled by size."""
    size = archive_bytes(path)
    default_s = max(TIMEOUT_FLOOR_S, TIMEOUT_S_PER_MIB * size / _MIB)
    default_mb = max(MEMORY_FLOOR_BYTES, MEMORY_BYTES_PER_ARCHIVE_BYTE * size) / _MIB
    timeout = _limit(timeout_s, TIMEOUT_ENV, default_s, "seconds")
    return timeout, int(_limit(memory_mb, MEMORY_ENV, default_mb, "MiB") * _MIB)


def archive_bytes(anchor: Path) -> int:
    """Bytes of the anchor, its global definitions and the files of its archive directory."""
    files = [anchor, anchor.with_suffix(".def")]
    if anchor.with_suffix("").is_dir():
        files += anchor.with_suffix("").rglob("*")
    return sum(f.stat().st_size for f in files if f.is_file())


def _limit(explicit: float | None, env: str, default: float, unit: str) -> float:
    """The argument if given, else the environment variable if set, else the default."""
    if explicit is not None:
        value, source = explicit, "the argument"
    elif os.environ.get(env, "").strip():
        text = os.environ[env].strip()
        try:
            value, source = float(text), env
        except ValueError:
            raise UsageError(f"{env}={text!r} is not a number") from None
    else:
        return default
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{source} must be a positive number of {unit} (got {value!r})")
    return value


def _child_env() -> dict[str, str]:
    """The caller's environment, with the caller's module path first on the child's: the
    child imports the same tailcast, pyarrow and otf2, however the caller found them."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)
    return env


def _wait_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """True once the child has exited (still a zombie: not reaped), False at the timeout."""
    try:
        return exited_within(proc.pid, timeout)
    except OSError:  # no pidfd (kernel < 5.3): a reaping wait; the group kill then may miss
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True


def exited_within(pid: int, timeout: float) -> bool:
    """True once child `pid` has exited (left unreaped), False at the timeout; OSError
    where the kernel has no pidfd."""
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(min(math.ceil(timeout * 1000), 2**31 - 1)))
    finally:
        os.close(pidfd)


def _kill_and_reap(proc: subprocess.Popen[bytes]) -> None:
    """Kills the child's process group (the child and anything it started), then reaps it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def outcome(path: Path, work: Path, status: int, memory: int) -> tuple[pa.Table, TraceMeta]:
    """The trace the child left in `work`, or the InputError its exit `status` (negative: the
    signal that killed it) and `work` come to, `memory` being its address-space limit."""
    error = child_error(work)
    limit = f"the {memory / _MIB:g} MiB address-space limit (raise {MEMORY_ENV})"
    if status == 0 and error is None:
        try:
            meta = TraceMeta(**json.loads((work / "meta.json").read_text()))
            with pa.OSFile(str(work / "table.arrow")) as source:
                return pa.ipc.open_file(source).read_all(), meta
        except (OSError, ValueError, TypeError, pa.ArrowException) as exc:
            raise InputError(path, f"OTF2 decoding left no readable result ({exc})") from exc
    if error is not None and error.get("kind") == "input":
        raise InputError(path, str(error.get("reason")), error.get("line"))
    if status == _EXIT_MEMORY or (error is not None and error.get("kind") == "memory"):
        raise InputError(path, f"OTF2 decoding ran out of memory under {limit}")
    if status < 0:
        name = signal.Signals(-status).name
        raise InputError(path, f"OTF2 decoding died from {name} (damaged archive, or {limit})")
    detail = str(error.get("message")) if error else last_line(work / "stderr.txt")
    raise InputError(path, f"OTF2 decoding failed (exit {status}: {detail or 'no message'})")


def child_error(work: Path) -> dict[str, Any] | None:
    """The error the child wrote (`kind` "input", "memory" or "other"), if it wrote one."""
    try:
        data = json.loads((work / "error.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


# ---- the child ------------------------------------------------------------------------


def decode_into(anchor: Path, work: Path, memory: int) -> int:
    """Decodes `anchor` under `memory` bytes of address space; writes the result or the
    error into `work`. Returns the exit status."""
    try:
        import otf2  # type: ignore[import-untyped]  # noqa: F401  (loaded before the limit)

        from tailcast.traces.otf2_decode import decode_otf2

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        table, meta = decode_otf2(anchor)
        with (
            pa.OSFile(str(work / "table.arrow"), "wb") as sink,
            pa.ipc.new_file(sink, table.schema) as writer,
        ):
            writer.write_table(table)
        (work / "meta.json").write_text(json.dumps(dataclasses.asdict(meta)))
    except InputError as exc:
        _write_error(work, kind="input", reason=exc.reason, line=exc.line)
        return 1
    except MemoryError:
        _write_error(work, kind="memory")
        return _EXIT_MEMORY
    except Exception as exc:
        _write_error(work, kind="other", message=f"{type(exc).__name__}: {exc}")
        return 1
    return 0


def _write_error(work: Path, **error: Any) -> None:
    with contextlib.suppress(OSError, MemoryError):
        (work / "error.json").write_text(json.dumps(error))


if __name__ == "__main__":
    sys.exit(decode_into(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
