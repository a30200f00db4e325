"""What an OSU output holds: its rows, and OSU's column headers → tailcast's fields with
units (one table for the whole suite).

Headers as OMB 5.x-7.4 print them (c/util/osu_util_mpi.c print_only_header,
print_only_header_nbc, osu_mbw_mr.c, one-sided print_header_one_sided, OMB-Py
python/util/osu_util_mpi.py). Latencies stay in µs and bandwidths in MB/s (10^6 bytes/s) as
OSU prints them; a bandwidth never lands in a latency field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

INT_FIELDS = frozenset({"size_bytes", "iterations", "transmit_size_bytes", "ranks"})
TEXT_FIELDS = frozenset({"validation"})
# -c results: "Pass"/"Fail" (osu_util_mpi.h VALIDATION_STATUS); the atomic one-sided tests
# (osu_acc/cas/fop_latency.c) print "passed", "failed" or "skipped".
VALIDATION_WORDS = frozenset({"Pass", "Fail", "passed", "failed", "skipped"})
FAILED = frozenset({"Fail", "failed"})

# Header text → OsuRow attribute.
COLUMNS: dict[str, str] = {
    "Size": "size_bytes",
    "Size (B)": "size_bytes",  # OMB-Py
    "Avg Latency(us)": "avg_latency_us",
    "Latency (us)": "avg_latency_us",  # 5.x-7.2 pt2pt, one-sided, OMB-Py
    "Latency(us)": "avg_latency_us",
    "Avg Latency (us)": "avg_latency_us",
    "Min Latency(us)": "min_latency_us",
    "Max Latency(us)": "max_latency_us",
    "Iterations": "iterations",
    "Validation": "validation",
    "Bandwidth (MB/s)": "bandwidth_mb_s",
    "Bandwidth(MB/s)": "bandwidth_mb_s",
    "MB/s": "bandwidth_mb_s",  # osu_mbw_mr
    "Messages/s": "messages_per_s",  # osu_mbw_mr
    "Overall(us)": "overall_us",  # non-blocking collectives
    "Compute(us)": "compute_us",
    "Coll. Init(us)": "init_us",
    "Init avg(us)": "init_us",  # OMB-Py
    "MPI_Test(us)": "test_us",
    "MPI_Wait(us)": "wait_us",
    "Wait avg(us)": "wait_us",  # OMB-Py
    "Pure Comm.(us)": "pure_comm_us",
    "Min Comm.(us)": "min_comm_us",
    "Max Comm.(us)": "max_comm_us",
    "Overlap(%)": "overlap_pct",
    "Transmit Size": "transmit_size_bytes",  # -D (derived datatypes)
}
# -z: "P99 Tail Lat(us)" (latency benchmarks), "P99 Tail BW(MB/s)" (bandwidth benchmarks).
TAIL_LATENCY = re.compile(r"^P(\d+(?:\.\d+)?) Tail Lat\(us\)$")
TAIL_BANDWIDTH = re.compile(r"^P(\d+(?:\.\d+)?) Tail BW\(MB/s\)$")

# What makes a comment line a column header: it names one of these measurements.
MEASURES = frozenset(COLUMNS) - {"Size", "Size (B)", "Iterations", "Validation", "Transmit Size"}


@dataclass
class OsuRow:
    """One printed row. `line` is its 1-based line in the output."""

    line: int
    size_bytes: int | None = None  # None: barriers, start-up tests
    datatype: str | None = None  # "# Datatype: MPI_INT." section it belongs to (-T)
    window_size: int | None = None  # osu_mbw_mr -V matrices: one row per (size, window)
    ranks: int | None = None  # start-up tests print the process count
    avg_latency_us: float | None = None
    min_latency_us: float | None = None
    max_latency_us: float | None = None
    bandwidth_mb_s: float | None = None
    messages_per_s: float | None = None
    overall_us: float | None = None
    compute_us: float | None = None
    init_us: float | None = None
    test_us: float | None = None
    wait_us: float | None = None
    pure_comm_us: float | None = None
    min_comm_us: float | None = None
    max_comm_us: float | None = None
    overlap_pct: float | None = None
    iterations: int | None = None
    validation: str | None = None  # -c, as printed: Pass | Fail | passed | failed | skipped
    transmit_size_bytes: int | None = None
    tail_latency_us: dict[float, float] = field(default_factory=dict)
    tail_bandwidth_mb_s: dict[float, float] = field(default_factory=dict)

    @property
    def percentiles_us(self) -> dict[float, float]:
        """-z latency percentiles (kept under the name earlier tailcast releases used)."""
        return self.tail_latency_us


@dataclass
class OsuOutput:
    title: str  # e.g. "OSU MPI Broadcast Latency Test"
    version: str | None  # e.g. "7.4"; None for OMB-Py, which prints none
    datatype: str | None  # the first (often only) datatype section
    columns: list[str]
    rows: list[OsuRow]
    path: str | None = None
    notes: list[str] = field(default_factory=list)  # OSU's other remarks, in order
    partial: bool = False  # the run ended before OSU finished (killed, timed out, crashed)
    partial_reason: str = ""

    @property
    def omb_py(self) -> bool:
        return self.title.startswith(("OMB Python", "OMB-Py"))

    def failed_validation(self) -> list[OsuRow]:
        return [r for r in self.rows if r.validation in FAILED]


def known(column: str) -> bool:
    return column in COLUMNS or bool(TAIL_LATENCY.match(column) or TAIL_BANDWIDTH.match(column))


def set_value(row: OsuRow, column: str, token: str) -> None:
    """Stores `token` under `column`'s field. ValueError when it is not a number (or, in the
    Validation column, not Pass/Fail); KeyError for a column this table does not know."""
    if (m := TAIL_LATENCY.match(column)) is not None:
        row.tail_latency_us[float(m.group(1))] = float(token)
        return
    if (m := TAIL_BANDWIDTH.match(column)) is not None:
        row.tail_bandwidth_mb_s[float(m.group(1))] = float(token)
        return
    name = COLUMNS[column]
    if name in TEXT_FIELDS:
        if token not in VALIDATION_WORDS:
            raise ValueError(f"expected one of {sorted(VALIDATION_WORDS)}, got {token!r}")
        setattr(row, name, token)
    elif name in INT_FIELDS:
        setattr(row, name, int(token))
    else:
        setattr(row, name, float(token))


_MEASURED = (
    "avg_latency_us", "min_latency_us", "max_latency_us", "bandwidth_mb_s", "messages_per_s",
    "overall_us", "compute_us", "init_us", "test_us", "wait_us", "pure_comm_us",
    "min_comm_us", "max_comm_us", "overlap_pct",
)  # fmt: skip


def result_rows(out: OsuOutput, benchmark: str | None = None) -> list[dict[str, Any]]:
    """The `osu_results` rows of one output (without run_id): OSU's printed values, fields
    named with their units; -z percentiles 50/90/99 in columns, every one in tail_json."""
    rows = []
    for r in out.rows:
        row: dict[str, Any] = {
            "benchmark": benchmark,
            "datatype": r.datatype,
            "size_bytes": r.size_bytes,
            "window_size": r.window_size,
            "iterations": r.iterations,
            "validation": r.validation,
            "transmit_size_bytes": r.transmit_size_bytes,
            "partial": out.partial,
        }
        row.update({name: getattr(r, name) for name in _MEASURED})
        tails = {"latency_us": r.tail_latency_us, "bandwidth_mb_s": r.tail_bandwidth_mb_s}
        for what, tail in tails.items():
            for p in (50, 90, 99):
                row[f"p{p}_{what}"] = tail.get(float(p))
        kept = {w: {f"{p:g}": v for p, v in t.items()} for w, t in tails.items() if t}
        row["tail_json"] = json.dumps(kept, sort_keys=True) if kept else None
        rows.append(row)
    return rows
