"""Running a benchmark child process and measuring its CPU time and peak RSS.

CPU (user + sys of the child and its waited-for descendants) comes from wait4. Peak RSS
does not: Linux starts a forked child's high-water mark at the parent's RSS, so wait4's
ru_maxrss of a child of a big Python process is at least that process's size. GNU time
(Debian package `time`) forks from a small process and reports the command's own peak;
without it the figure is an upper bound and says so.

Children run with Python's bytecode cache on (PYTHONDONTWRITEBYTECODE removed from their
environment), as in a user's shell: a command's first run writes the cache, later runs use
it.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    stdout: str
    stderr: str
    cpu_s: float
    peak_rss_mib: float
    rss_exact: bool

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_measured(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, success: int = 0
) -> Run:
    """Runs `argv` (in `cwd`, with `env` added to the environment) and measures it; an exit
    status other than `success` is an error."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = Path(tmp) / "rss"
        exact = Path("/usr/bin/time").exists()
        full = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *argv] if exact else argv
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        with open(out, "wb") as fo, open(err, "wb") as fe:
            environ = {**os.environ, **(env or {})}
            environ.pop("PYTHONDONTWRITEBYTECODE", None)
            proc = subprocess.Popen(full, cwd=cwd, stdout=fo, stderr=fe, env=environ)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        stdout = out.read_text(errors="replace")
        stderr = err.read_text(errors="replace")
        if proc.returncode != success:
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {(stdout + stderr)[-2000:]}")
        rss_kib = int(rss_file.read_text().split()[-1]) if exact else usage.ru_maxrss
    return Run(stdout, stderr, usage.ru_utime + usage.ru_stime, rss_kib / 1024, exact)
