"""Parser for OSU Micro-Benchmarks 5.x-7.x latency output (what rank 0 prints to stdout).

Grammar (checked against real 7.2/7.4 outputs in shared/data/osu-7.4):
    [blank line]                          7.4 starts with one; 7.2's osu_latency does not
    # OSU MPI <Title> Test v<version>
    # Datatype: MPI_CHAR.                 may come before or after the column header
    # Size  <col>  <col> …                columns separated by ≥ 2 spaces; barrier has no Size
    <size> <value> …                      one row per message size, whitespace separated
Columns: "Avg Latency(us)" (7.2 pt2pt: "Latency (us)"), "Min Latency(us)",
"Max Latency(us)", "Iterations" (-f), "Validation" (-c: Pass/Fail), "P<n> Tail Lat(us)" (-z).
Anything else in the text is OSU (or mpirun) reporting a problem: usage errors, wrong
process counts. Those become typed errors carrying OSU's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tailcast.errors import ExternalToolError, InputError


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


class OsuValidationError(OsuError):
    """With -c, OSU reported a failed validation for at least one size."""


class OsuOptionsIgnoredError(OsuError):
    """OSU's output lacks columns we asked for (e.g. a stray positional argument made OSU
    silently ignore later options)."""


@dataclass
class OsuRow:
    size_bytes: int | None  # None for osu_barrier
    avg_latency_us: float
    min_latency_us: float | None = None
    max_latency_us: float | None = None
    iterations: int | None = None
    validation: str | None = None
    percentiles_us: dict[float, float] = field(default_factory=dict)


@dataclass
class OsuOutput:
    title: str  # e.g. "OSU MPI Broadcast Latency Test"
    version: str  # e.g. "7.4"
    datatype: str | None
    columns: list[str]
    rows: list[OsuRow]
    path: str | None = None

    def failed_validation(self) -> list[OsuRow]:
        return [r for r in self.rows if r.validation is not None and r.validation != "Pass"]

    def raise_for_validation(self) -> None:
        failed = self.failed_validation()
        if failed:
            sizes = ", ".join(str(r.size_bytes) for r in failed)
            raise OsuValidationError(
                "validation failed",
                f"Validation {failed[0].validation} at sizes {sizes}",
                self.path,
            )


_HEADER = re.compile(r"^#\s*(OSU .*?)\s+v(\d+(?:\.\d+)*\S*)\s*$")
_DATATYPE = re.compile(r"^#\s*Datatype:\s*(\S+?)\.?\s*$")
_PCT = re.compile(r"^P(\d+(?:\.\d+)?) Tail Lat\(us\)$")
_AVG = {"Avg Latency(us)", "Latency (us)", "Latency(us)", "Avg Latency (us)"}
# What OSU says when the process count is wrong (osu_util / osu_latency, 5.x-7.x).
_RANK_TEXT = re.compile(r"requires (at least|exactly) (\w+) processes", re.IGNORECASE)
# mpirun's own boilerplate after a failing rank: not OSU's message.
_MPIRUN_NOISE = re.compile(
    r"^(-{10,}|Primary job|a non-zero exit|mpirun detected|the job to be|\s+Process name|"
    r"\s+Exit code|prterun|mpiexec|Usage: |Options:|\s{2,}\S)"
)


def _osu_message(text: str) -> str:
    """The first line OSU itself wrote (not its usage text, not mpirun's banner)."""
    for line in text.splitlines():
        if line.strip() and not _MPIRUN_NOISE.match(line):
            return line.strip()
    return text.strip().splitlines()[0] if text.strip() else ""


def _error_for(text: str, stderr: str, path: str | Path | None, tool: str) -> OsuError:
    both = "\n".join(t for t in (stderr, text) if t.strip())
    message = _osu_message(stderr) or _osu_message(text)
    if _RANK_TEXT.search(both):
        found = _RANK_TEXT.search(both)
        assert found is not None
        line = next(ln for ln in both.splitlines() if found.group(0) in ln).strip()
        return OsuRankCountError("wrong number of processes", line, path, tool=tool)
    if re.search(r"^(Usage: |Invalid )", both, re.MULTILINE):
        return OsuUsageError(
            "OSU rejected its arguments", message or "usage printed", path, tool=tool
        )
    if not both.strip():
        return OsuError("no output (OSU printed nothing)", "", path, tool=tool)
    return OsuError("OSU reported an error", message, path, tool=tool)


def parse_osu_output(
    text: str,
    path: str | Path | None = None,
    stderr: str = "",
    tool: str = "osu",
) -> OsuOutput:
    """Parses OSU stdout. OSU-reported problems raise OsuError subclasses carrying OSU's
    text; output that looks like OSU but is garbled raises InputError naming file + line."""
    where = path if path is not None else "<osu output>"
    lines = text.splitlines()
    title = version = datatype = None
    columns: list[str] | None = None
    rows: list[OsuRow] = []
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if (m := _HEADER.match(line)) is not None:
                title, version = m.group(1), m.group(2)
            elif (m := _DATATYPE.match(line)) is not None:
                datatype = m.group(1)
            elif title is not None and ("Latency" in line or "Lat(us)" in line):
                columns = re.split(r"\s{2,}", line.lstrip("#").strip())
                _check_columns(columns, where, lineno)
            continue  # other comments (warnings, notes) carry no data
        if columns is None:
            if title is None:
                raise _error_for(text, stderr, path, tool)
            raise InputError(where, f"data before the column header: {line!r}", lineno)
        rows.append(_row(line, columns, where, lineno))
    if title is None or version is None:
        raise _error_for(text, stderr, path, tool)
    if columns is None:
        raise InputError(where, "no column header line", len(lines) or None)
    if not rows:
        raise (
            _error_for(text, stderr, path, tool)
            if stderr.strip()
            else InputError(where, "header but no result rows (OSU stopped early?)", len(lines))
        )
    return OsuOutput(title, version, datatype, columns, rows, str(path) if path else None)


def _check_columns(columns: list[str], where: str | Path, lineno: int) -> None:
    if not any(c in _AVG for c in columns):
        raise InputError(where, f"no average latency column in header {columns}", lineno)
    if len(set(columns)) != len(columns):
        raise InputError(where, f"repeated column in header {columns}", lineno)


def _row(line: str, columns: list[str], where: str | Path, lineno: int) -> OsuRow:
    values = line.split()
    if len(values) != len(columns):
        raise InputError(
            where, f"{len(values)} values for {len(columns)} columns {columns}", lineno
        )
    row = OsuRow(size_bytes=None, avg_latency_us=float("nan"))
    for name, value in zip(columns, values, strict=True):
        try:
            if name == "Size":
                row.size_bytes = int(value)
            elif name in _AVG:
                row.avg_latency_us = float(value)
            elif name == "Min Latency(us)":
                row.min_latency_us = float(value)
            elif name == "Max Latency(us)":
                row.max_latency_us = float(value)
            elif name == "Iterations":
                row.iterations = int(value)
            elif name == "Validation":
                row.validation = value
            elif (m := _PCT.match(name)) is not None:
                row.percentiles_us[float(m.group(1))] = float(value)
            # unknown columns of later OSU versions are skipped, not guessed at
        except ValueError:
            raise InputError(where, f"column {name!r}: {value!r} is not a number", lineno) from None
    return row


def load_osu_file(path: Path, stderr_path: Path | None = None) -> OsuOutput:
    """Parses a saved OSU stdout file (and optionally the stderr saved beside it)."""
    try:
        text = path.read_text()
        stderr = stderr_path.read_text() if stderr_path is not None else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read ({exc})") from exc
    return parse_osu_output(text, path, stderr)
