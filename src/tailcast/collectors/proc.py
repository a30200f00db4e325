"""Running the Slurm and MPI command-line tools: argv lists (never shell strings), timeouts,
bounded retries with exponential backoff and jitter, and a fixed time format.

Slurm commands are polled on busy production controllers, so a transient failure (timeout,
"Socket timed out", controller restart) is retried a few times with growing pauses rather
than hammering slurmctld (DESIGN.md conventions: polite polling)."""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tailcast.errors import ExternalToolError

# Slurm prints times in this format when SLURM_TIME_FORMAT=standard (ISO 8601 without zone);
# we set it ourselves so parsed output never depends on the user's locale settings.
SLURM_TIME_FORMAT = "standard"


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` tries in all; pause before try k (k ≥ 1) is backoff_s·2^(k-1)·(1 ± jitter)."""

    attempts: int = 3
    backoff_s: float = 0.5
    jitter: float = 0.25
    timeout_s: float = 30.0


def tool_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The inherited environment (SLURM_* respected) plus our fixed SLURM_TIME_FORMAT."""
    env = dict(os.environ)
    env["SLURM_TIME_FORMAT"] = SLURM_TIME_FORMAT
    if extra:
        env.update(extra)
    return env


def run_tool(
    argv: Sequence[str],
    policy: RetryPolicy = RetryPolicy(),
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Runs `argv` and returns the completed process (rc 0). Raises ExternalToolError with
    the tool's stderr after `policy.attempts` failed tries (missing binary: no retry).
    With `check=False` a non-zero exit is returned as is (the caller reads the output)."""
    if isinstance(argv, str):  # a shell string would be split wrongly; refuse it loudly
        raise TypeError("run_tool takes an argv list, not a string")
    argv = [str(a) for a in argv]
    tool = os.path.basename(argv[0])
    last: ExternalToolError | None = None
    for attempt in range(max(1, policy.attempts)):
        if attempt:
            pause = policy.backoff_s * 2 ** (attempt - 1)
            time.sleep(pause * (1 + random.uniform(-policy.jitter, policy.jitter)))
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=policy.timeout_s,
                env=dict(env) if env is not None else tool_env(),
                input=input_text,
                check=False,
            )
        except FileNotFoundError as exc:
            raise ExternalToolError(tool, f"not found ({exc.filename})") from exc
        except subprocess.TimeoutExpired as exc:
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
            last = ExternalToolError(tool, f"timed out after {policy.timeout_s:g} s", stderr)
            continue
        if proc.returncode == 0 or not check:
            return proc
        last = ExternalToolError(
            tool, f"exited with status {proc.returncode}", proc.stderr, proc.returncode
        )
    assert last is not None
    raise last
