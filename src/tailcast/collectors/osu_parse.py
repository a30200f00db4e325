"""Parser for what OSU Micro-Benchmarks 5.x-7.x print (rank 0's stdout), the whole suite:
latency, bandwidth, message-rate, non-blocking (overall/compute/pure communication/overlap),
one-sided, start-up and OMB-Py outputs, with -f, -c, -z, -T, -D and osu_mbw_mr's -V matrices.

Grammar (checked against every output the OMB 7.4 suite prints here, and 7.2's):
    [informational lines]                 neighbourhood tests: "Dimensions size = 4", ...
    [blank line]                          7.4 starts with one; 7.2's osu_latency does not
    # OSU MPI <Title> Test v<version>     OMB-Py: "# OMB Python MPI …" / "# OMB-Py MPI …",
                                          no version
    [# comments]                          "# Window creation: ...", "# [ pairs: 1 ] ..."
    # Datatype: MPI_CHAR.                 one section per datatype with -T all
    # Size  <col>  <col> …                column header (columns in osu_columns.COLUMNS)
    <size> <value> …                      one row per message size
    [gnuplot text plots]                  -G tty: "Size: 1, Avg:0.39", then the drawing
    [DATA VALIDATION ERROR: …]            -c found wrong data: typed error, rows kept
osu_mbw_mr -V prints matrices instead: "# Uni-directional Bandwidth (MB/sec)" or
"# Message Rate Profile", a header of window sizes, then one value per (size, window).
A launcher's report after the rows (mpirun's dashed frame in a combined file, or in the
stderr given) means the run ended early: the rows are kept and the output marked partial.
A title and header with no row after them is an error (OsuNoRowsError), never an output.
"""

from __future__ import annotations

import re
from pathlib import Path

from tailcast.collectors.osu_errors import (
    KILLED_TEXT,
    LAUNCHER_START,
    VALIDATION_LINE,
    OsuNoRowsError,
    OsuValidationError,
    error_for,
    osu_message,
)
from tailcast.collectors.osu_output import MEASURES, OsuOutput, OsuRow, known, set_value
from tailcast.errors import InputError

_TITLE = re.compile(r"^#\s*(OSU .*?)\s+v(\d+(?:\.\d+)*\S*)\s*$")
_PY_TITLE = re.compile(r"^#\s*(OMB(?: Python|-Py) MPI .*? Test)\s*$")  # both spellings in 7.4
_DATATYPE = re.compile(r"^#\s*Datatype:\s*(\S+?)\.?\s*$")
_MATRIX = {
    "Uni-directional Bandwidth (MB/sec)": "bandwidth_mb_s",
    "Message Rate Profile": "messages_per_s",
}
_WINDOWS = re.compile(r"^#\s+\d+(\s+\d+)*\s*$")
# -G tty: gnuplot's text plot of each size's per-iteration values, after the rows
# (c/util/osu_util_graph.c sets the title "Size: %zu, Avg:%.2f").
# OSU's remarks between rows: separators, and the atomic one-sided tests' -c summary, a
# block per rank (osu_acc/cas/fop_latency.c): "Atomic Data Validation results for Rank=1:",
# "PASSED: …" / "SKIPPED: …" / "FAILED: MPI_SUM on MPI_INT had 1 of 1 tests fail …" lines,
# each failure followed by an indented "First failure at trial …" line.
_REMARK = re.compile(r"^(-{10,}$|Atomic Data Validation results for Rank=\d+:$|"
                     r"(PASSED|FAILED|SKIPPED): |First failure at trial )")  # fmt: skip
_ATOMIC_FAILED = re.compile(r"^FAILED: (.* fail data validation\.?)$")
_TAIL = re.compile(r"^P\d+(?:\.\d+)? Tail ")
_PLOT = re.compile(r"^\s*Size: \d+, Avg:\s*-?[\d.]+\s*$")
# Start-up tests (c/mpi/startup): osu_init and osu_hello.
_INIT = re.compile(r"^nprocs: (\d+), min: (\d+) ms, max: (\d+) ms, avg: (\d+) ms$")
_HELLO = re.compile(r"^This is a test with (\d+) processes$")
# A header cell: a known column name (longest first) or a run of single-spaced words.
_CELL = re.compile(
    "|".join(
        [r"P\d+(?:\.\d+)? Tail (?:Lat\(us\)|BW\(MB/s\))"]
        + [re.escape(c) for c in sorted(MEASURES | {"Size (B)", "Size", "Iterations",
                                                     "Validation", "Transmit Size"},
                                        key=len, reverse=True)]
    )
    + r"(?=\s|$)|\S+(?: \S+)*"
)  # fmt: skip


def split_header(text: str) -> list[str]:
    """Header cells; OSU separates most by ≥ 2 spaces but -z's "P50 Tail BW(MB/s)" follows
    "Bandwidth (MB/s)" after a single one, so known names are matched first."""
    return [m.group(0) for m in _CELL.finditer(text)]


class _Parser:
    def __init__(
        self, text: str, path: str | Path | None, stderr: str, tool: str, returncode: int | None
    ) -> None:
        self.text, self.stderr, self.tool, self.returncode = text, stderr, tool, returncode
        self.path = path
        self.where = path if path is not None else "<osu output>"
        self.title: str | None = None
        self.version: str | None = None
        self.datatypes: list[str] = []
        self.columns: list[str] | None = None
        self.first_columns: list[str] | None = None
        self.matrix: str | None = None  # field of the -V matrix being read
        self.windows: list[int] = []
        self.rows: list[OsuRow] = []
        self.notes: list[str] = []
        self.trailer: list[str] = []  # the launcher's report after OSU's lines
        self.validation: tuple[str, int, str] | None = None  # (argv0, size, line)
        self.plotting = False  # inside -G tty plots: lines are gnuplot's drawing
        self.atomic_failures: list[str] = []  # -c of the atomic one-sided tests

    def run(self) -> OsuOutput:
        lines = self.text.splitlines()
        cut = not self.text.endswith("\n") and bool(self.text.strip())
        for lineno, raw in enumerate(lines, start=1):
            line = raw.strip()
            if not line:
                continue
            if self.trailer or (self.title is not None and LAUNCHER_START.match(raw)):
                self.trailer.append(raw)
            elif line.startswith("#"):
                self.plotting = False
                self._comment(line, lineno)
            elif self.title is not None and (self.plotting or _PLOT.match(line)):
                self._plot(line, lineno)
            elif self.title is None or _REMARK.match(line):
                self.notes.append(line)  # before OSU's title: its own remarks, or an error
                if self.title is not None and (m := _ATOMIC_FAILED.match(line)) is not None:
                    self.atomic_failures.append(m.group(0))
            elif lineno == len(lines) and cut and self._short(line):
                self.notes.append(line)
                return self._finish(partial_reason=f"last line cut off: {line!r}")
            else:
                self._data(line, lineno)
        return self._finish()

    def _short(self, line: str) -> bool:
        width = len(self.windows) + 1 if self.matrix else len(self.columns or ())
        return len(line.split()) < width

    def _comment(self, line: str, lineno: int) -> None:
        if (m := _TITLE.match(line)) is not None:
            self.title, self.version = m.group(1), m.group(2)
        elif (m := _PY_TITLE.match(line)) is not None:
            self.title = m.group(1)
        elif self.title is None:
            self.notes.append(line)
        elif (m := _DATATYPE.match(line)) is not None:
            self.datatypes.append(m.group(1))
        elif line.lstrip("# ").strip() in _MATRIX:
            self.matrix = _MATRIX[line.lstrip("# ").strip()]
            self.columns = None
        elif self.matrix is not None and _WINDOWS.match(line):
            self.windows = [int(w) for w in line.lstrip("#").split()]
        elif any(c in MEASURES or known(c) for c in split_header(line.lstrip("#").strip())):
            cells = split_header(line.lstrip("#").strip())
            if len(set(cells)) != len(cells):
                raise InputError(self.where, f"repeated column in header {cells}", lineno)
            self.columns, self.matrix = cells, None
            self.first_columns = self.first_columns or cells
        else:
            self.notes.append(line)

    def _plot(self, line: str, lineno: int) -> None:
        if VALIDATION_LINE.match(line):
            self._data(line, lineno)
        elif _PLOT.match(line):
            self.plotting = True
            self.notes.append(f"-G tty plot: {line}")

    def _data(self, line: str, lineno: int) -> None:
        if (m := VALIDATION_LINE.match(line)) is not None:
            self.validation = (m.group(1), int(m.group(3)), line)
            return
        if (m := _INIT.match(line)) is not None:
            ranks, low, high, avg = (int(g) for g in m.groups())
            # printed in whole ms; kept in µs like every other latency
            self.rows.append(
                OsuRow(lineno, ranks=ranks, min_latency_us=low * 1e3, max_latency_us=high * 1e3,
                       avg_latency_us=avg * 1e3)
            )  # fmt: skip
            return
        if (m := _HELLO.match(line)) is not None:
            self.rows.append(OsuRow(lineno, ranks=int(m.group(1))))
            return
        if self.matrix is not None and self.windows:
            self._matrix_row(line, lineno)
            return
        if self.columns is None:
            raise InputError(self.where, f"data before the column header: {line!r}", lineno)
        values = line.split()
        columns = self.columns
        if len(values) < len(columns) and all(_TAIL.match(c) for c in columns[len(values) :]):
            # osu_multi_lat 7.4 prints -z's headers but never their values
            columns = columns[: len(values)]
            note = f"no values under {self.columns[len(values) :]} (OSU printed none)"
            if note not in self.notes:
                self.notes.append(note)
        if len(values) != len(columns):
            raise InputError(
                self.where,
                f"{len(values)} values for {len(self.columns)} columns {self.columns}",
                lineno,
            )
        row = OsuRow(lineno, datatype=self.datatypes[-1] if self.datatypes else None)
        for column, token in zip(columns, values, strict=True):
            if not known(column):
                continue  # a later OSU's column: skipped, never guessed at
            try:
                set_value(row, column, token)
            except ValueError:
                what = "a validation result" if column == "Validation" else "a number"
                raise InputError(
                    self.where, f"column {column!r}: {token!r} is not {what}", lineno
                ) from None
        self.rows.append(row)

    def _matrix_row(self, line: str, lineno: int) -> None:
        assert self.matrix is not None
        values = line.split()
        if len(values) != len(self.windows) + 1:
            raise InputError(
                self.where, f"{len(values)} values for {len(self.windows)} window sizes + size",
                lineno,
            )  # fmt: skip
        try:
            size = int(values[0])
            numbers = [float(v) for v in values[1:]]
        except ValueError:
            raise InputError(self.where, f"not a number in {line!r}", lineno) from None
        datatype = self.datatypes[-1] if self.datatypes else None
        for window, value in zip(self.windows, numbers, strict=True):
            row = OsuRow(lineno, size_bytes=size, datatype=datatype, window_size=window)
            setattr(row, self.matrix, value)
            self.rows.append(row)

    def _no_rows(self) -> OsuNoRowsError:
        """The error of a title (and header) with no row under it: OSU's last own line
        (the column header, if it printed one) as its words."""
        own = [ln.strip() for ln in self.text.splitlines() if ln.strip().startswith("#")]
        why = osu_message(self.stderr) if self.stderr.strip() else ""
        if self.columns or self.matrix:
            cause = (
                "no result row after its column header (no message size in the range asked "
                "for, e.g. -m 64:8, or the run stopped before its first row"
            )
        else:
            cause = (
                "no result row after its title (what -v prints, or a run that stopped "
                "before its column header"
            )
        return OsuNoRowsError(
            f"{self.title}: {cause}"
            + ("" if why else "; its stderr, given with --stderr, may say why")
            + ")",
            why or (own[-1] if own else ""),
            self.path,
            tool=self.tool,
        )

    def _finish(self, partial_reason: str = "") -> OsuOutput:
        if self.title is None:
            raise error_for(self.text, self.stderr, self.path, self.tool)
        trailer = "\n".join(self.trailer)
        partial_reason = partial_reason or _ended_early(trailer) or _ended_early(self.stderr)
        if not partial_reason and self.returncode not in (None, 0):
            partial_reason = _framed(self.stderr) or f"exited with status {self.returncode}"
        if not self.rows and partial_reason and not self.validation:
            raise error_for(trailer or self.text, self.stderr, self.path, self.tool)
        if not self.rows and not self.validation and not self.atomic_failures:
            raise self._no_rows()
        out = OsuOutput(
            self.title,
            self.version,
            self.datatypes[0] if self.datatypes else None,
            self.first_columns or [],
            self.rows,
            str(self.path) if self.path is not None else None,
            self.notes,
            partial=bool(partial_reason),
            partial_reason=partial_reason,
        )
        if self.validation is not None:
            argv0, size, line = self.validation
            raise OsuValidationError(Path(argv0).name, size, line, out, self.path)
        if self.atomic_failures:  # a rank's check failed, whatever rank 0's rows say
            raise OsuValidationError(self.title, None, self.atomic_failures[0], out, self.path)
        return out


def check_validation(out: OsuOutput, benchmark: str = "osu") -> None:
    """OsuValidationError when a -c row says Fail (OSU prints its DATA VALIDATION ERROR
    line only at exit; a killed run has the Fail row alone)."""
    failed = out.failed_validation()
    if failed:
        sizes = ", ".join(str(r.size_bytes) for r in failed)
        text = f"Validation {failed[0].validation} at sizes {sizes}"
        raise OsuValidationError(benchmark, failed[0].size_bytes, text, out, out.path)


def _ended_early(text: str) -> str:
    """The launcher's first words about a rank that failed or was killed, if `text` has them."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().strip("-")]
    for i, line in enumerate(lines):
        if LAUNCHER_START.match(line):
            return " ".join(lines[i : i + 2])
    return next((ln for ln in lines if KILLED_TEXT.search(ln)), "")


def _framed(text: str) -> str:
    """The first line of an Open MPI help message (framed in dashed lines) in `text`."""
    lines = [ln.strip() for ln in text.splitlines()]
    for i, line in enumerate(lines[:-1]):
        if line.startswith("-" * 10) and lines[i + 1].strip("-"):
            return lines[i + 1]
    return ""


def parse_osu_output(
    text: str,
    path: str | Path | None = None,
    stderr: str = "",
    tool: str = "osu",
    returncode: int | None = None,
) -> OsuOutput:
    """Parses OSU stdout (optionally with its stderr, and the exit status when known: a
    failed exit after rows marks the output partial). OSU-reported problems raise OsuError
    subclasses carrying OSU's text (a failed -c validation: OsuValidationError with the rows
    kept); output that looks like OSU but is garbled raises InputError naming file + line."""
    return _Parser(text, path, stderr, tool, returncode).run()


# C0 control characters other than tab, line feed, vertical tab, form feed and carriage
# return, and DEL: OSU and its launchers print none of them.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def read_osu_text(path: Path) -> str:
    """A saved OSU output's text. InputError naming the file, never echoing its bytes, when
    it is not text: OSU prints UTF-8 (ASCII) lines without control characters, so a NUL,
    another control character or bytes that are not UTF-8 mean another kind of file (a
    binary, a Parquet trace) or a damaged one."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from exc
    expected = "expected the text OSU Micro-Benchmarks print"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"not an OSU output: byte {exc.start} is not UTF-8 text ({expected})"
        ) from None
    if (bad := _CONTROL.search(text)) is not None:
        line = text.count("\n", 0, bad.start()) + 1
        raise InputError(
            path,
            f"not an OSU output: control character {ord(bad.group()):#04x} ({expected})",
            line,
        )
    return text


def load_osu_file(path: Path, stderr_path: Path | None = None) -> OsuOutput:
    """Parses a saved OSU stdout file (and optionally the stderr saved beside it)."""
    text = read_osu_text(path)
    stderr = read_osu_text(stderr_path) if stderr_path is not None else ""
    return parse_osu_output(text, path, stderr)
