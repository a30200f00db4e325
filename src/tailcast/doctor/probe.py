"""What one doctor check reports, and how it asks the machine: argv lists with a timeout,
never a shell string, never an exception for a missing or hanging tool."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    OK = "ok"
    MISSING = "missing"  # not on this machine (or not found where we looked)
    ERROR = "error"  # present, but it does not work (no config, unreachable, wrong version)


@dataclass(frozen=True)
class Check:
    """One line of `tailcast doctor`. `needed_for` names the features that stop working
    when the check is not ok; `essential` checks decide whether offline replay works."""

    name: str
    status: Status
    summary: str
    needed_for: tuple[str, ...]
    essential: bool = False
    hint: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": str(self.status),
            "summary": self.summary,
            "essential": self.essential,
            "needed_for": list(self.needed_for),
            "turns_off": [] if self.ok else list(self.needed_for),
            "hint": self.hint,
            "details": self.details,
        }


@dataclass(frozen=True)
class ProbeResult:
    """`found` is False when the program does not exist; `timed_out` when it hung."""

    argv: tuple[str, ...]
    found: bool
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.found and not self.timed_out and self.returncode == 0

    def why(self) -> str:
        """One line for the report: what went wrong, in the tool's own words when it said."""
        tool = os.path.basename(self.argv[0])
        if not self.found:
            return f"{tool} not found"
        if self.timed_out:
            return f"`{' '.join(self.argv)}` timed out"
        said = (self.stderr.strip() or self.stdout.strip()).splitlines()
        last = said[-1] if said else f"exit {self.returncode}"
        return f"`{' '.join(self.argv)}` failed: {last}"


def run_probe(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> ProbeResult:
    """Runs `argv` with no input and a deadline; never raises for a missing or hung tool."""
    key = tuple(argv)
    try:
        # Own session: on a timeout the whole group goes (an MPI singleton's helper daemons
        # would otherwise keep the pipes open and the wait going).
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return ProbeResult(key, False, None, "", "")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return ProbeResult(key, True, None, out, err, timed_out=True)
    return ProbeResult(key, True, proc.returncode, out, err)
