"""A lab campaign file (LAB.toml): the measured collectives, where the measurement runs, and
phases of placed background jobs.

    [campaign]    name, benchmarks, sizes, iterations, warmup, interval_ms, settle_s
    [foreground]  placement name = hostlist (one agent job per placement and phase)
    [background]  pattern ("alltoall"), size, gap_ms, gaps ("fixed" / "exponential"), poll_ms:
                  what every background job does
    [[phase]]     name, jobs = [hostlist, ...] (one background job per hostlist; [] = none)

A foreground placement that shares a node with a phase's background jobs is skipped in
that phase. Errors name the file and the key.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hostlist

from tailcast.collectors.benchmarks import BENCHMARKS
from tailcast.errors import InputError, UsageError
from tailcast.lab.gaps import GAP_KINDS
from tailcast.units import parse_size

BACKGROUND_PATTERNS = ("alltoall",)


@dataclass(frozen=True)
class Background:
    pattern: str = "alltoall"
    size_bytes: int = 1 << 20
    gap_ms: float = 0.0  # mean pause after each call
    gaps: str = "fixed"  # how pauses are drawn (tailcast.lab.gaps)
    poll_ms: float = 1.0


@dataclass(frozen=True)
class Phase:
    name: str
    jobs: list[list[str]]  # expanded node lists, one per background job

    @property
    def nodes(self) -> set[str]:
        return {n for job in self.jobs for n in job}


@dataclass(frozen=True)
class LabCampaign:
    name: str
    benchmarks: list[str]
    sizes: list[int]
    foreground: dict[str, list[str]]
    background: Background
    phases: list[Phase]
    iterations: int = 1000
    warmup: int = 20
    interval_ms: float = 1.0
    settle_s: float = 5.0
    time_limit: str = "04:00:00"
    path: Path = field(default=Path("LAB.toml"))

    def runs_of(self, phase: Phase) -> list[tuple[str, list[str]]]:
        """The (placement, nodes) measured in a phase: those sharing no node with it."""
        return [(p, n) for p, n in self.foreground.items() if not set(n) & phase.nodes]


def _table(doc: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    table = doc.get(key)
    if not isinstance(table, dict):
        raise InputError(path, f"needs a [{key}] table")
    return table


def _known(table: dict[str, Any], allowed: set[str], where: str, path: Path) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise InputError(path, f"unknown keys in {where}: {unknown}; known: {sorted(allowed)}")


def _nodes(text: object, where: str, path: Path) -> list[str]:
    try:
        nodes = list(hostlist.expand_hostlist(str(text)))
    except hostlist.BadHostlist as exc:
        raise InputError(path, f"{where}: bad hostlist {text!r} ({exc})") from exc
    if len(nodes) < 2 or len(set(nodes)) != len(nodes):
        raise InputError(path, f"{where}: needs ≥ 2 distinct nodes, got {text!r}")
    return nodes


def _number(table: dict[str, Any], key: str, default: float, where: str, path: Path) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InputError(path, f"{where}.{key} must be a number ≥ 0, got {value!r}")
    return float(value)


def load_lab_campaign(path: Path) -> LabCampaign:
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise InputError(
            path, f"invalid TOML: {exc}", int(found.group(1)) if found else None
        ) from exc
    _known(doc, {"campaign", "foreground", "background", "phase"}, "the file", path)
    camp = _table(doc, "campaign", path)
    _known(
        camp,
        {
            "name",
            "benchmarks",
            "sizes",
            "iterations",
            "warmup",
            "interval_ms",
            "settle_s",
            "time_limit",
        },
        "[campaign]",
        path,
    )
    for key in ("name", "benchmarks", "sizes"):
        if key not in camp:
            raise InputError(path, f"[campaign] needs {key!r}")
    bad = [b for b in camp["benchmarks"] if b not in BENCHMARKS]
    if bad or not camp["benchmarks"]:
        raise InputError(path, f"[campaign] benchmarks: unknown {bad}; choose from {BENCHMARKS}")
    try:
        sizes = [parse_size(str(s)) for s in camp["sizes"]]
    except UsageError as exc:
        raise InputError(path, f"[campaign] sizes: {exc}") from exc
    fg = _table(doc, "foreground", path)
    foreground = {name: _nodes(text, f"[foreground] {name}", path) for name, text in fg.items()}
    if not foreground:
        raise InputError(path, "[foreground] needs at least one placement")
    bg = _table(doc, "background", path)
    _known(bg, {"pattern", "size", "gap_ms", "gaps", "poll_ms"}, "[background]", path)
    if bg.get("pattern", "alltoall") not in BACKGROUND_PATTERNS:
        raise InputError(path, f"[background] pattern must be one of {BACKGROUND_PATTERNS}")
    if bg.get("gaps", "fixed") not in GAP_KINDS:
        raise InputError(path, f"[background] gaps must be one of {GAP_KINDS}")
    try:
        bg_size = parse_size(str(bg.get("size", "1M")))
    except UsageError as exc:
        raise InputError(path, f"[background] size: {exc}") from exc
    background = Background(
        pattern=str(bg.get("pattern", "alltoall")),
        size_bytes=bg_size,
        gap_ms=_number(bg, "gap_ms", 0.0, "[background]", path),
        gaps=str(bg.get("gaps", "fixed")),
        poll_ms=_number(bg, "poll_ms", 1.0, "[background]", path),
    )
    phases_doc = doc.get("phase")
    if not isinstance(phases_doc, list) or not phases_doc:
        raise InputError(path, "needs at least one [[phase]]")
    phases = []
    for i, ph in enumerate(phases_doc):
        where = f"[[phase]] #{i + 1}"
        _known(ph, {"name", "jobs"}, where, path)
        if "name" not in ph or not isinstance(ph.get("jobs", []), list):
            raise InputError(path, f"{where} needs a name and a jobs list")
        jobs = [_nodes(j, f"{where} jobs", path) for j in ph.get("jobs", [])]
        flat = [n for job in jobs for n in job]
        if len(flat) != len(set(flat)):
            raise InputError(path, f"{where}: background jobs overlap")
        phases.append(Phase(str(ph["name"]), jobs))
    if len({p.name for p in phases}) != len(phases):
        raise InputError(path, "phase names must be unique")
    iterations = int(_number(camp, "iterations", 1000, "[campaign]", path))
    if iterations < 1:
        raise InputError(path, "[campaign].iterations must be ≥ 1")
    return LabCampaign(
        name=str(camp["name"]),
        benchmarks=list(camp["benchmarks"]),
        sizes=sizes,
        foreground=foreground,
        background=background,
        phases=phases,
        iterations=iterations,
        warmup=int(_number(camp, "warmup", 20, "[campaign]", path)),
        interval_ms=_number(camp, "interval_ms", 1.0, "[campaign]", path),
        settle_s=_number(camp, "settle_s", 5.0, "[campaign]", path),
        time_limit=str(camp.get("time_limit", "04:00:00")),
        path=path,
    )
