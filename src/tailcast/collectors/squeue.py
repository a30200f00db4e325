"""Queue snapshots from Slurm: `squeue --json` (22.05 and newer shapes), `squeue --noheader
-o` with an explicit field list and separator (all versions), and pyslurm when it imports
(collectors.pyslurm_queue).

Shapes accepted from `squeue --json`:
- 22.05 (openapi v0.0.38): `job_state` is a string, `node_count` an int, `array_job_id` 0
  for plain jobs.
- 23.02 and newer: `job_state` is a list of states/flags, numbers are objects
  `{"set": bool, "infinite": bool, "number": int}`.
22.05 ignores squeue's filters and lists recently completed jobs, so states are filtered
here, never by squeue options.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tailcast._core import squeue_columns
from tailcast.collectors.jobs import TERMINAL_STATES, QueueJob, QueueSnapshot, expand_nodes
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.collectors.pyslurm_queue import pyslurm_problem, read_pyslurm
from tailcast.errors import ExternalToolError, InputError, UsageError

BACKENDS = ("auto", "squeue-json", "squeue-format", "pyslurm")

# Field list for the -o fallback: raw job id, display id, state, node count, nodes, user.
# `%N` of a pending job is empty; widths are unset so nothing is truncated.
FORMAT_FIELDS = ("%A", "%i", "%T", "%D", "%N", "%u")
FORMAT_SEP = "|"
FORMAT_SPEC = FORMAT_SEP.join(FORMAT_FIELDS)


# "line N, column C (byte B): reason" from tailcast._core.squeue_columns.
_LOCATED = re.compile(r"line (\d+), column (\d+) \(byte \d+\): (.*)", re.DOTALL)


def _scan_json(text: str | bytes, path: str | Path) -> dict[str, list[Any]]:
    """The queue fields of `squeue --json` output as columns, from the native scanner
    (crates/queue-scan): a 100,000-job 22.05 queue is ~300 MB of JSON with ~110 members
    per job, of which 8 are read, so nothing else is built. Syntax and shape errors become
    InputError naming the line."""
    data = text.encode() if isinstance(text, str) else text
    try:
        return squeue_columns(data)
    except ValueError as exc:
        located = _LOCATED.match(str(exc))
        if located is None:
            raise InputError(path, str(exc)) from exc
        reason = f"{located[3]} (column {located[2]})"
        raise InputError(path, reason, line=int(located[1])) from exc


def parse_squeue_json(
    text: str | bytes, path: str | Path = "<squeue --json>", source: str = "squeue-json"
) -> QueueSnapshot:
    """Parses `squeue --json` output. Raises InputError naming `path` and the line (JSON
    syntax, or a job entry of the wrong shape, with the job's index and id) or the job's
    index and id (bad hostlist)."""
    cols = _scan_json(text, path)
    if cols["errors"]:
        raise InputError(path, f"squeue reported errors: [{', '.join(cols['errors'])}]")
    problems: list[tuple[int, int, str]] = cols["problems"]
    ids = cols["job_id"]
    # Entries before the first bad one are still built: a bad hostlist among them is
    # reported first, as a reader going through the jobs in order would.
    count = problems[0][0] if problems else len(ids)
    rows = zip(
        ids,
        cols["array_job_id"],
        cols["array_task_id"],
        cols["job_state"],
        cols["nodes"],
        cols["node_count"],
        cols["user_name"],
        cols["user_id"],
        strict=True,
    )
    jobs: list[QueueJob] = []
    for index, (job_id, array_id, task_id, states, expr, nodes_n, user, uid) in enumerate(rows):
        if index == count:
            break
        # Finished jobs hold no nodes any more and are dropped by `active()`: expanding
        # their (stale) node lists is the largest cost on a big queue, so it is skipped.
        finished = bool(states) and states[0] in TERMINAL_STATES
        try:
            nodes = () if finished or expr is None else expand_nodes(expr)
        except ValueError as exc:
            raise InputError(path, f"jobs[{index}] (job_id={job_id}): {exc}") from exc
        raw_id = str(job_id)
        jobs.append(  # positional: ~30% cheaper than keywords, 100,000 times
            QueueJob(
                f"{array_id}_{task_id}" if array_id and task_id is not None else raw_id,
                raw_id,
                user if user is not None else ("" if uid is None else str(uid)),
                states,
                nodes_n if nodes_n is not None else len(nodes),
                nodes,
            )
        )
    if problems:
        index, line, message = problems[0]
        raise InputError(path, f"jobs[{index}] (job_id={ids[index]}): {message}", line=line)
    cluster, version = cols["cluster"], cols["release"]
    return QueueSnapshot(
        tuple(jobs),
        source,
        cluster=cluster[0] if cluster else None,
        slurm_version=version[0] if version else None,
    )


def parse_squeue_format(
    text: str, path: str | Path = "<squeue -o>", source: str = "squeue-format"
) -> QueueSnapshot:
    """Parses `squeue --noheader -o FORMAT_SPEC` output, one job per line."""
    jobs: list[QueueJob] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(FORMAT_SEP)
        if len(parts) != len(FORMAT_FIELDS):
            raise InputError(
                path, f"expected {len(FORMAT_FIELDS)} '{FORMAT_SEP}'-separated fields", lineno
            )
        raw_id, shown, state, count, nodes_expr, user = (p.strip() for p in parts)
        # ASCII digits only: str.isdigit() also accepts '¹', which int() refuses.
        if not (raw_id.isascii() and raw_id.isdigit()):
            raise InputError(path, f"job id {raw_id!r} is not a number", lineno)
        if not (count.isascii() and count.isdigit()):
            raise InputError(path, f"node count {count!r} is not a number", lineno)
        try:
            nodes = expand_nodes(nodes_expr)
        except ValueError as exc:
            raise InputError(path, str(exc), lineno) from exc
        states = tuple(s for s in state.upper().split(",") if s)
        jobs.append(QueueJob(shown or raw_id, raw_id, user, states, int(count), nodes))
    return QueueSnapshot(tuple(jobs), source)


def _squeue_json(policy: RetryPolicy) -> QueueSnapshot:
    taken = datetime.now(UTC)
    proc = run_tool(["squeue", "--all", "--json"], policy)
    snap = parse_squeue_json(proc.stdout)
    return QueueSnapshot(snap.jobs, snap.source, taken, snap.cluster, snap.slurm_version)


def _squeue_format(policy: RetryPolicy) -> QueueSnapshot:
    taken = datetime.now(UTC)
    proc = run_tool(["squeue", "--all", "--noheader", "-o", FORMAT_SPEC], policy)
    snap = parse_squeue_format(proc.stdout)
    return QueueSnapshot(snap.jobs, snap.source, taken)


def _pyslurm(policy: RetryPolicy) -> QueueSnapshot:
    del policy  # in-process library call: no subprocess to time out or retry
    return read_pyslurm()


_READERS: dict[str, Callable[[RetryPolicy], QueueSnapshot]] = {
    "pyslurm": _pyslurm,
    "squeue-json": _squeue_json,
    "squeue-format": _squeue_format,
}


def _auto_order() -> Sequence[str]:
    if pyslurm_problem() is None:
        return ("pyslurm", "squeue-json", "squeue-format")
    return ("squeue-json", "squeue-format")


def read_order(backend: str) -> Sequence[str]:
    """The backends `backend` stands for, in the order they are tried."""
    if backend not in BACKENDS:
        raise UsageError(f"unknown queue backend {backend!r}; choose from {', '.join(BACKENDS)}")
    return _auto_order() if backend == "auto" else (backend,)


def read_queue(backend: str = "auto", policy: RetryPolicy = RetryPolicy()) -> QueueSnapshot:
    """One snapshot of the live queue, finished jobs dropped. `auto` tries pyslurm (when
    importable), then `squeue --json`, then `squeue -o`; the first that works wins."""
    order = read_order(backend)
    failures: list[ExternalToolError | InputError] = []
    for name in order:
        try:
            return _READERS[name](policy).active()
        except (ExternalToolError, InputError) as exc:
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    raise ExternalToolError("squeue", "no queue backend worked: " + "; ".join(map(str, failures)))


def load_queue_file(path: Path) -> QueueSnapshot:
    """A saved `squeue --json` or `squeue -o FORMAT_SPEC` file (source recorded as 'file')."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read ({exc})") from exc
    if text.lstrip().startswith("{"):
        return parse_squeue_json(text, path, source="file").active()
    return parse_squeue_format(text, path, source="file").active()
