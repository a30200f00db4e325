"""How the report names what it shows: a replay by its trace, its fabric and the parameters
it ran with (placement, seed, background, collective overrides, its sweep point's axes), a
measured run by benchmark, size, placement and background phase — never by the random ids
the store files them under, which say nothing to a reader."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from tailcast.store import Catalog

REPLAYS_QUERY = (
    "SELECT r.replay_id, r.application, r.trace_id, r.trace_meta, r.fabric, r.seed, "
    "r.background_b, r.background, r.placement, r.coll_overrides, r.total_time_ns, "
    "r.created_at, p.params AS sweep_params "
    "FROM replays r LEFT JOIN sweep_points p USING (replay_id) "
    "ORDER BY r.created_at, r.replay_id"
)
RUN_LABEL_QUERY = (
    "SELECT r.run_id, r.benchmark, r.msg_size_bytes, r.locality, "
    "(coalesce(r.b_before, r.b_after) + coalesce(r.b_after, r.b_before)) / 2 AS b, "
    "l.phase FROM runs r LEFT JOIN lab_runs l USING (run_id)"
)
_QUOTED_ID = re.compile(r"'([0-9A-Za-z_.:-]{8,})'")


def size_label(size: int | None) -> str:
    if size is None:
        return "size ?"
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def trace_name(row: Mapping[str, Any]) -> str:
    """The trace's application (an OSU trace with its one message size), else its id."""
    name = str(row.get("application") or f"trace {row.get('trace_id') or '?'}")
    try:
        meta = json.loads(row.get("trace_meta") or "{}")
        sizes = json.loads(meta.get("osu_sizes", "[]")) if isinstance(meta, dict) else []
    except (TypeError, ValueError):
        sizes = []
    if isinstance(sizes, list) and len(sizes) == 1 and isinstance(sizes[0], int):
        name += f" {size_label(sizes[0])}"
    return name


def _background(text: str | None) -> list[str]:
    try:
        record = json.loads(text or "null")
    except ValueError:
        return ["background ?"]
    if not isinstance(record, dict):
        return []
    parts = []
    jobs = record.get("jobs") or []
    if jobs:
        patterns = sorted({str(j.get("pattern", "?")) for j in jobs})
        parts.append(f"{len(jobs)} bg job{'s' * (len(jobs) > 1)} ({', '.join(patterns)})")
    traces = record.get("traces") or []
    if traces:
        where = " + ".join(str(t.get("placement", "?")) for t in traces)
        parts.append(f"bg trace{'s' * (len(traces) > 1)} on endpoints {where}")
    return parts


def replay_parameters(row: Mapping[str, Any]) -> list[str]:
    """What the replay ran with beyond its trace and fabric, defaults left out."""
    parts = []
    sweep: dict[str, Any] = {}
    with contextlib.suppress(ValueError):
        sweep = json.loads(row.get("sweep_params") or "{}")
    placement = str(row.get("placement") or "linear")
    if placement != "linear" and "placement" not in sweep:
        parts.append(placement.replace("nodes:", "nodes ", 1))
    if row.get("background_b") is not None and "background_b" not in sweep:
        parts.append(f"b = {float(row['background_b']):.2f}")
    parts += _background(row.get("background"))
    if row.get("coll_overrides"):
        parts.append(f"coll {row['coll_overrides']}")
    parts += [f"{k} = {v}" for k, v in sweep.items()]
    if row.get("seed"):
        parts.append(f"seed {row['seed']}")
    return parts


def replay_label(row: Mapping[str, Any]) -> str:
    return " · ".join([trace_name(row), str(row.get("fabric") or "?"), *replay_parameters(row)])


def unique(labels: Iterable[tuple[str, str]]) -> dict[str, str]:
    """(key, label) pairs → label per key; labels several keys share get "#1", "#2", … in
    the order given (replays of the same trace on the same fabric with the same
    parameters: the quickstart run twice)."""
    pairs = list(labels)
    count: dict[str, int] = {}
    for _, label in pairs:
        count[label] = count.get(label, 0) + 1
    seen: dict[str, int] = {}
    out = {}
    for key, label in pairs:
        if count[label] > 1:
            seen[label] = seen.get(label, 0) + 1
            label = f"{label} #{seen[label]}"
        out[key] = label
    return out


def labelled_replays(cat: Catalog) -> list[tuple[dict[str, Any], str]]:
    """Every stored replay (REPLAYS_QUERY's row) with its label, oldest first."""
    rows = cat.rows(REPLAYS_QUERY)
    labels = unique((r["replay_id"], replay_label(r)) for r in rows)
    return [(r, labels[r["replay_id"]]) for r in rows]


def run_label(row: Mapping[str, Any]) -> str:
    parts = [f"{row.get('benchmark') or '?'} {size_label(row.get('msg_size_bytes'))}"]
    if row.get("locality"):
        parts.append(str(row["locality"]))
    if row.get("phase"):
        parts.append(f"background {row['phase']}")
    if row.get("b") is not None:
        parts.append(f"b = {float(row['b']):.2f}")
    return " · ".join(parts)


class SourceLabels:
    """Labels for the SOURCE arguments of `report --compare`: a replay id by its replay's
    label, a query naming one measured run by that run's label, anything else as given."""

    def __init__(self, cat: Catalog) -> None:
        self.replays = {r["replay_id"]: label for r, label in labelled_replays(cat)}
        self.runs = {r["run_id"]: run_label(r) for r in cat.rows(RUN_LABEL_QUERY)}

    def __call__(self, spec: str) -> str:
        if spec in self.replays:
            return self.replays[spec]
        named = [m for m in _QUOTED_ID.findall(spec) if m in self.runs or m in self.replays]
        if len(named) == 1:
            return self.runs.get(named[0]) or self.replays[named[0]]
        return spec
