"""Running a benchmark child process and measuring its CPU time and peak RSS.

CPU (user + sys of the child and its waited-for descendants) comes from wait4. Peak RSS
does not: Linux starts a forked child's high-water mark at the parent's RSS, so wait4's
ru_maxrss of a child of a big Python process is at least that process's size. GNU time
(Debian package `time`) forks from a small process and reports the command's own peak;
without it the figure is an upper bound and says so.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


def run_measured(argv: list[str], cwd: Path) -> tuple[str, float, float, bool]:
    """(output, CPU seconds, peak RSS MiB, whether the RSS is exact) of `argv`."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = Path(tmp) / "rss"
        exact = Path("/usr/bin/time").exists()
        full = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *argv] if exact else argv
        with open(Path(tmp) / "log", "wb") as log:
            proc = subprocess.Popen(full, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        text = (Path(tmp) / "log").read_text(errors="replace")
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {text[-2000:]}")
        rss_kib = int(rss_file.read_text().split()[-1]) if exact else usage.ru_maxrss
    rss_mib = rss_kib / 1024
    return text, usage.ru_utime + usage.ru_stime, rss_mib, exact
