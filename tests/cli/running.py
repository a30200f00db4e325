"""Running the real console entry (`python -m tailcast`) against a results home, and what
the bad-input tests check of it: one error line, and a home left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXE = [sys.executable, "-m", "tailcast"]


def run(home: Path, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run(
        [*EXE, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=300
    )


def one_error(proc: subprocess.CompletedProcess[str], status: int) -> str:
    """The one error line of a failed command (and nothing on stdout)."""
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tailcast: error: "), proc.stderr
    assert proc.stdout == ""
    return lines[0]


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and modification time (empty: no `root`)."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }
