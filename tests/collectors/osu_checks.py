"""Checks shared by the OSU tests: that a parsed output holds exactly the values OSU printed,
and that an error carries OSU's own text. Written independently of the parser's column
table: every number on every printed data line must come back, and nothing else."""

from __future__ import annotations

import re
from collections import defaultdict
from decimal import Decimal
from typing import Any

from tailcast.collectors.osu_errors import OsuError
from tailcast.collectors.osu_output import OsuOutput, OsuRow

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_SKIP = {"line", "datatype", "window_size", "validation", "tail_latency_us", "tail_bandwidth_mb_s"}


def _numbers(row: OsuRow, with_size: bool) -> list[Decimal]:
    values: list[Decimal] = []
    for name, value in vars(row).items():
        if name in _SKIP or value is None or (name == "size_bytes" and not with_size):
            continue
        if row.ranks is not None and name.endswith("latency_us"):
            value = value / 1000  # osu_init prints whole milliseconds
        values.append(Decimal(repr(value)))
    values += [Decimal(repr(v)) for v in row.tail_latency_us.values()]
    values += [Decimal(repr(v)) for v in row.tail_bandwidth_mb_s.values()]
    return values


def assert_exact(out: OsuOutput, stdout: str) -> None:
    """Every data line after OSU's title is a row (or, for osu_mbw_mr -V, a row per window
    size) whose numbers are exactly the line's numbers; no line is left out."""
    lines = stdout.splitlines()
    title = next(i for i, ln in enumerate(lines, 1) if out.title in ln)
    data, plot = {}, False
    for i, ln in enumerate(lines, 1):
        if ln.lstrip().startswith("#"):
            plot = False  # a comment ends gnuplot's drawing (-G tty)
        elif re.match(r"^\s*Size: \d+, Avg:", ln):
            plot = True
        elif i > title and re.match(r"^\s*\d|nprocs: |This is a test with ", ln) and not plot:
            data[i] = ln  # OSU's rows start with a number; its remarks never do
    rows: dict[int, list[OsuRow]] = defaultdict(list)
    for row in out.rows:
        rows[row.line].append(row)
    if out.partial and out.partial_reason.startswith("last line cut off"):
        data.pop(max(data))
    assert sorted(rows) == sorted(data), f"rows at lines {sorted(rows)}, data at {sorted(data)}"
    for lineno, text in data.items():
        tokens = text.replace(",", " ").split()
        printed = sorted(Decimal(t) for t in tokens if _NUMBER.match(t))
        parsed = sorted(
            v for k, row in enumerate(rows[lineno]) for v in _numbers(row, with_size=k == 0)
        )
        assert parsed == printed, f"line {lineno} {text!r}: parsed {parsed}"
        words = [t for t in tokens if t in ("Pass", "Fail", "passed", "failed", "skipped")]
        assert words == [r.validation for r in rows[lineno] if r.validation is not None]


def assert_osu_words(err: OsuError, stdout: str, stderr: str) -> None:
    """The error carries text OSU (or its launcher) printed, not words of our own."""
    if err.osu_text:
        assert err.osu_text.strip() in stdout + stderr, (err.osu_text, stdout, stderr)
    else:
        assert not (stdout + stderr).strip()


def summary(out: OsuOutput) -> dict[str, Any]:
    return {"title": out.title, "rows": len(out.rows), "partial": out.partial}
