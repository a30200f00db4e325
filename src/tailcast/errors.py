"""Typed errors. Every error tailcast raises on purpose derives from TailcastError and
carries the exit code the CLI returns for it (DESIGN.md conventions: 1 failure, 2 usage,
3 ran-but-not-accepted)."""

from __future__ import annotations

import signal
from pathlib import Path

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_ACCEPTED = 3


class TailcastError(Exception):
    """Base of all deliberate tailcast errors; `str(err)` is a one-line message."""

    exit_code = EXIT_FAILURE


class UsageError(TailcastError):
    """The user asked for something that cannot mean anything (bad option values)."""

    exit_code = EXIT_USAGE


class NotAcceptedError(TailcastError):
    """The command ran, but its result did not pass an acceptance check (e.g. b unstable)."""

    exit_code = EXIT_NOT_ACCEPTED


class InputError(TailcastError):
    """Malformed input: names the file and, where known, the line (or row) at fault."""

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class StoreError(TailcastError):
    """The results store could not be read or written."""


class ExternalToolError(TailcastError):
    """A subprocess we depend on (squeue, sbatch, mpirun, OSU, mpicc) failed.

    Carries the tool's own text so the user sees what the tool said."""

    def __init__(self, tool: str, message: str, stderr: str = "", returncode: int | None = None):
        self.tool = tool
        self.stderr = stderr
        self.returncode = returncode
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        text = f"{tool}: {message}" + (f" ({detail})" if detail else "")
        super().__init__(text)


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (the CLI's handlers raise it). A BaseException, so
    `except Exception` never swallows it and every `finally` / `except BaseException`
    cleanup runs; not a KeyboardInterrupt, which typer turns into a silent exit 130 before
    the CLI's handler sees it. `detail` says what was kept; the CLI exits 128 + signal."""

    def __init__(self, signum: int, detail: str = "") -> None:
        self.signum = signum
        self.detail = detail
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum
