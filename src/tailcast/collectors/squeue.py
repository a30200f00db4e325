"""Queue snapshots from Slurm: `squeue --json` (22.05 and newer shapes), `squeue --noheader
-o` with an explicit field list and separator (all versions), and pyslurm when importable.

Shapes accepted from `squeue --json`:
- 22.05 (openapi v0.0.38): `job_state` is a string, `node_count` an int, `array_job_id` 0
  for plain jobs.
- 23.02 and newer: `job_state` is a list of states/flags, numbers are objects
  `{"set": bool, "infinite": bool, "number": int}`.
22.05 ignores squeue's filters and lists recently completed jobs, so states are filtered
here, never by squeue options.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import simdjson

from tailcast.collectors.jobs import TERMINAL_STATES, QueueJob, QueueSnapshot, expand_nodes
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import ExternalToolError, InputError, UsageError

BACKENDS = ("auto", "squeue-json", "squeue-format", "pyslurm")

# Field list for the -o fallback: raw job id, display id, state, node count, nodes, user.
# `%N` of a pending job is empty; widths are unset so nothing is truncated.
FORMAT_FIELDS = ("%A", "%i", "%T", "%D", "%N", "%u")
FORMAT_SEP = "|"
FORMAT_SPEC = FORMAT_SEP.join(FORMAT_FIELDS)


def _number(value: Any) -> int | None:
    """An int from 22.05's plain numbers or newer `{"set", "infinite", "number"}` objects."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, simdjson.Object):
        value = value.as_dict()
    if isinstance(value, dict):
        if value.get("set") is False or value.get("infinite"):
            return None
        number = value.get("number")
        return number if isinstance(number, int) and not isinstance(number, bool) else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise ValueError(f"expected a number, got {value!r}")


def _states(value: Any) -> tuple[str, ...]:
    if isinstance(value, simdjson.Array):
        value = value.as_list()
    if isinstance(value, str):
        return (value.upper(),) if value else ()
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return tuple(s.upper() for s in value)
    raise ValueError(f"job_state must be a string or a list of strings, got {value!r}")


def _json_job(raw: Any) -> QueueJob:
    """One job from a dict or a lazy simdjson object (only the fields used are read)."""
    if not isinstance(raw, dict | simdjson.Object):
        raise ValueError("job entry is not an object")
    if "job_id" not in raw:
        raise ValueError("job entry has no job_id")
    job_id = _number(raw["job_id"])
    if job_id is None:
        raise ValueError(f"job_id {raw['job_id']!r} is not set")
    array_id = _number(raw.get("array_job_id"))
    task_id = _number(raw.get("array_task_id"))
    shown = f"{array_id}_{task_id}" if array_id and task_id is not None else str(job_id)
    states = _states(raw.get("job_state", ""))
    nodes_expr = raw.get("nodes") or ""
    if not isinstance(nodes_expr, str):
        raise ValueError(f"nodes must be a hostlist string, got {nodes_expr!r}")
    # Finished jobs hold no nodes any more and are dropped by `active()`: expanding their
    # (stale) node lists is the largest cost on a big queue, so it is skipped.
    finished = bool(states) and states[0] in TERMINAL_STATES
    nodes = () if finished else expand_nodes(nodes_expr)
    count = _number(raw.get("node_count"))
    user = raw.get("user_name")
    return QueueJob(
        job_id=shown,
        raw_id=str(job_id),
        user=str(user) if user is not None else str(raw.get("user_id", "")),
        states=states,
        node_count=count if count is not None else len(nodes),
        nodes=nodes,
    )


def _plain(value: Any) -> Any:
    if isinstance(value, simdjson.Object):
        return value.as_dict()
    if isinstance(value, simdjson.Array):
        return value.as_list()
    return value


def _json_meta(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    meta = doc.get("meta") or {}
    slurm = meta.get("Slurm") or meta.get("slurm") or {}
    version = slurm.get("release") if isinstance(slurm, dict) else None
    cluster = slurm.get("cluster") if isinstance(slurm, dict) else None
    return (str(cluster) if cluster else None), (str(version) if version else None)


def _load_json(text: str | bytes, path: str | Path) -> Any:
    """Parses with simdjson into a lazy document: a 100,000-job 22.05 queue is ~280 MB of
    JSON, and building ~100 Python objects per job (json.loads) takes seconds, while the
    heuristic reads 8 fields. On a syntax error, the stdlib parser is rerun only to name the
    line."""
    data = text.encode() if isinstance(text, str) else text
    try:
        return simdjson.Parser().parse(data)
    except ValueError as exc:
        try:
            json.loads(data)
        except json.JSONDecodeError as err:
            raise InputError(path, f"not valid JSON: {err.msg}", line=err.lineno) from err
        raise InputError(path, f"not valid JSON: {exc}") from exc


def parse_squeue_json(
    text: str | bytes, path: str | Path = "<squeue --json>", source: str = "squeue-json"
) -> QueueSnapshot:
    """Parses `squeue --json` output. Raises InputError naming `path` and the line (JSON
    syntax) or the job's index and id (bad job entry)."""
    lazy = _load_json(text, path)
    if not isinstance(lazy, simdjson.Object) or not isinstance(
        lazy.get("jobs"), simdjson.Array
    ):
        raise InputError(path, "not squeue --json output (no top-level 'jobs' list)")
    # Not `.items()`/`.as_dict()` on the top level: they would materialise every job.
    doc = {key: _plain(lazy[key]) for key in lazy.keys() if key != "jobs"}  # noqa: SIM118
    errors = doc.get("errors") or []
    if errors:
        raise InputError(path, f"squeue reported errors: {errors}")
    raw_jobs = lazy["jobs"]
    jobs: list[QueueJob] = []
    for index, raw in enumerate(raw_jobs):
        try:
            jobs.append(_json_job(raw))
        except ValueError as exc:
            ident = raw.get("job_id") if isinstance(raw, simdjson.Object) else None
            raise InputError(path, f"jobs[{index}] (job_id={ident}): {exc}") from exc
    cluster, version = _json_meta(doc)
    if cluster is None and jobs and isinstance(raw_jobs[0], simdjson.Object):
        cluster = raw_jobs[0].get("cluster") or None
    return QueueSnapshot(tuple(jobs), source, cluster=cluster, slurm_version=version)


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
        if not raw_id.isdigit():
            raise InputError(path, f"job id {raw_id!r} is not a number", lineno)
        if not count.isdigit():
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
    """pyslurm ≥ 23 (`pyslurm.Jobs.load()`) or the older dict API (`pyslurm.job().get()`)."""
    del policy  # in-process library call: no subprocess to time out or retry
    try:
        import pyslurm  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ExternalToolError("pyslurm", "not importable") from exc
    taken = datetime.now(UTC)
    jobs: list[QueueJob] = []
    try:
        if hasattr(pyslurm, "Jobs"):
            for job in pyslurm.Jobs.load().values():
                nodes = expand_nodes(str(getattr(job, "allocated_nodes", None) or ""))
                jobs.append(
                    QueueJob(
                        str(job.id),
                        str(job.id),
                        str(getattr(job, "user_name", "") or ""),
                        _states(str(job.state)),
                        int(getattr(job, "num_nodes", 0) or len(nodes)),
                        nodes,
                    )
                )
        else:
            for job_id, info in pyslurm.job().get().items():
                nodes = expand_nodes(str(info.get("nodes") or ""))
                count = int(info.get("num_nodes") or len(nodes))
                states = _states(str(info.get("job_state", "")))
                jobs.append(
                    QueueJob(
                        str(job_id), str(job_id), str(info.get("user_id", "")), states, count, nodes
                    )
                )
    except (ValueError, RuntimeError, AttributeError) as exc:
        raise ExternalToolError("pyslurm", f"could not read the queue ({exc})") from exc
    return QueueSnapshot(tuple(jobs), "pyslurm", taken)


_READERS: dict[str, Callable[[RetryPolicy], QueueSnapshot]] = {
    "pyslurm": _pyslurm,
    "squeue-json": _squeue_json,
    "squeue-format": _squeue_format,
}


def _auto_order() -> Sequence[str]:
    try:
        import pyslurm  # noqa: F401

        return ("pyslurm", "squeue-json", "squeue-format")
    except ImportError:
        return ("squeue-json", "squeue-format")


def read_queue(backend: str = "auto", policy: RetryPolicy = RetryPolicy()) -> QueueSnapshot:
    """One snapshot of the live queue, finished jobs dropped. `auto` tries pyslurm (when
    importable), then `squeue --json`, then `squeue -o`; the first that works wins."""
    if backend not in BACKENDS:
        raise UsageError(f"unknown queue backend {backend!r}; choose from {', '.join(BACKENDS)}")
    order = _auto_order() if backend == "auto" else (backend,)
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
