"""What went wrong when OSU (or the launcher under it) did not print results: typed errors
that carry OSU's own words, and the classification of OSU's error texts.

Texts seen from OMB 7.4 under Open MPI 4.1 (shared/data/osu-7.4 and the suite test):
usage errors print "Invalid option [-Q]" / "Invalid Message Size [-m -5]" (osu_util_mpi.c
print_bad_usage_message) then the usage text; wrong process counts "This test requires at
least two processes" / "exactly two processes"; failed -c validation "DATA VALIDATION ERROR:
<argv0> exited with status 1 on message size N."; other failures a line such as
"[utils/osu_bw_fan_util.c:102] Error: 'Please run this benchmark on more than 1 node'".
mpirun frames its own report in dashed lines; that frame is not OSU's message.
"""

from __future__ import annotations

import re
from pathlib import Path

from tailcast.collectors.osu_output import OsuOutput
from tailcast.errors import ExternalToolError


class OsuError(ExternalToolError):
    """OSU reported a problem; `osu_text` is its message, `path` the file when parsing one."""

    def __init__(
        self,
        message: str,
        osu_text: str,
        path: str | Path | None = None,
        returncode: int | None = None,
        tool: str = "osu",
    ) -> None:
        self.osu_text = osu_text
        self.path = str(path) if path is not None else None
        where = f"{self.path}: " if self.path else ""
        super().__init__(tool, f"{where}{message}: {osu_text}", "", returncode)


class OsuUsageError(OsuError):
    """OSU rejected its arguments (it printed its usage text)."""


class OsuRankCountError(OsuError):
    """The benchmark was started with a process count it does not accept."""


class OsuTimedOutError(OsuError):
    """The run overstayed its time limit and was stopped before OSU printed a result row."""


class OsuNoRowsError(OsuError):
    """OSU printed its title and column header but no result row: a size range holding no
    size (`-m 64:8`; `-T mpi_int -m 1:2`, where no size holds a whole element) or a run
    that ended before its first row without saying why (OMB-Py's crashed allreduce, its
    traceback on a stderr not given). A run that measured nothing is not a result."""


class OsuOptionsIgnoredError(OsuError):
    """OSU's output lacks columns we asked for (e.g. a stray positional argument made OSU
    silently ignore later options)."""


class OsuValidationError(OsuError):
    """With -c, OSU found wrong data at `size_bytes`. `output` keeps the rows printed before
    the failure (and the failing row, validation "Fail")."""

    def __init__(
        self,
        benchmark: str,
        size_bytes: int | None,
        osu_text: str,
        output: OsuOutput | None = None,
        path: str | Path | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.size_bytes = size_bytes
        self.output = output
        at = f" at {size_bytes} bytes" if size_bytes is not None else ""
        super().__init__(f"{benchmark}: data validation failed{at}", osu_text, path)


# "DATA VALIDATION ERROR: ./osu_bcast exited with status 1 on message size 4."
VALIDATION_LINE = re.compile(
    r"^DATA VALIDATION ERROR: (\S+) exited with status (\d+) on message size (\d+)\.?\s*$"
)
# What OSU says when the process count is wrong (osu_util / osu_latency, 5.x-7.x).
_RANK_TEXT = re.compile(
    r"requires (at least|exactly) (\w+) processes|requires an even number of processes|"
    r"must be (even|a multiple)",
    re.IGNORECASE,
)
# OSU's bad-usage lines (osu_util_mpi.c print_bad_usage_message): "<message> [-<opt> <arg>]".
_USAGE_TEXT = re.compile(r"^(Usage: |Invalid |.* \[-.?( [^\]]*)?\]\s*$)", re.MULTILINE)
_PROBLEM = re.compile(r"error|fail|abort|requires|invalid|cannot|unable|not ", re.IGNORECASE)
# The first line of a launcher's report on a failed or killed rank (mpirun's dashed frame,
# srun/slurmstepd errors, Open MPI's signal report).
LAUNCHER_START = re.compile(
    r"^(Primary job|mpirun (detected|noticed|has exited)|prterun|"
    r"srun: |slurmstepd: |\[[^\]]+\] \*\*\* Process received signal)"
)
# Lines that are not OSU's own message: the launcher's report, OSU's usage text.
_NOT_OSU = re.compile(
    r"^(-{10,}|Primary job|a non-zero exit|mpirun (detected|noticed|has exited)|the job to be|"
    r"\s+Process name|\s+Exit code|prterun|mpiexec|node \S+ exiting improperly|"
    r"srun: |slurmstepd: |Usage: |Options:|\s{2,}\S)"
)
# The launcher's words for a rank that was killed or timed out: the output is partial.
KILLED_TEXT = re.compile(
    r"exited on signal|killed|Terminated|timed out|TIME LIMIT|CANCELLED|"
    r"exiting improperly|aborted",
    re.IGNORECASE,
)


def osu_message(text: str) -> str:
    """The first line OSU itself wrote (not its usage text, not mpirun's banner); for an
    OMB-Py traceback, the exception line that ends it."""
    lines = text.splitlines()
    header = "Traceback (most recent call last):"
    if header in lines:  # every rank may print one, interleaved
        after = lines[lines.index(header) + 1 :]
        raised = next((ln for ln in after if ln.strip() and ln[0] != " " and ln != header), "")
        if raised:
            return raised.strip()
    own = [ln.strip() for ln in lines if ln.strip() and not _NOT_OSU.match(ln)]
    # OSU's remarks ("Dimensions size = 2 2") may come before the error itself
    return next((ln for ln in own if _PROBLEM.search(ln)), own[0] if own else "") or (
        text.strip().splitlines()[0] if text.strip() else ""
    )


def error_for(text: str, stderr: str, path: str | Path | None, tool: str) -> OsuError:
    """The typed error for an output that holds no results."""
    both = "\n".join(t for t in (stderr, text) if t.strip())
    message = osu_message(stderr) or osu_message(text)
    found = _RANK_TEXT.search(both)
    if found is not None:
        line = next(ln for ln in both.splitlines() if found.group(0) in ln).strip()
        return OsuRankCountError("wrong number of processes", line, path, tool=tool)
    if _USAGE_TEXT.search(both):
        return OsuUsageError(
            "OSU rejected its arguments", message or "usage printed", path, tool=tool
        )
    if not both.strip():
        return OsuError("no output (OSU printed nothing)", "", path, tool=tool)
    if not _PROBLEM.search(both):  # no title and no error either: some other text
        return OsuError(
            "not an OSU output (no '# OSU MPI … Test' title, no error message)",
            message,
            path,
            tool=tool,
        )
    return OsuError("OSU reported an error", message, path, tool=tool)
