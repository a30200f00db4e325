"""What one replay is: the options a user gives (`ReplayOptions`) and the engine's
`_core.Scenario` built from them and a loaded fabric by `scenario_of` — the one constructor
every way tailcast replays goes through (the CLI, sweeps, `predict tail --simulate`,
`lab compare`, the quickstart all hand `ReplayOptions` to `replay_trace` or
`stream_replay`). The engine places the traces and the background on the fabric it builds
once (`crates/replay-engine/src/scenario/`); this module only translates what the user said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast import _core
from tailcast.replay.background import BackgroundJob, BackgroundTrace, parse_job
from tailcast.replay.background_b import DEFAULT_JOB_SIZES, BackgroundB
from tailcast.replay.fabric import Fabric
from tailcast.replay.placement import LOCALITY_CLASSES, placement_spec


@dataclass(frozen=True)
class ReplayOptions:
    seed: int = 0
    coll: str = ""
    placement: str = "linear"  # see placement.py
    compute_scale: float = 1.0
    # None: the fabric's host model ([host] eager_threshold_bytes).
    eager_threshold_bytes: int | None = None
    # Nodes of a locality-class placement (default: one per rank).
    nodes: int | None = None
    background: tuple[BackgroundJob, ...] = ()
    background_traces: tuple[BackgroundTrace, ...] = ()
    # Background jobs sized from a utilisation b (seed 001), around the foreground.
    background_b: BackgroundB | None = None
    # The measured run this replay reproduces (--from-run), for the record.
    from_run: str | None = None
    # One row per delivered message (None: when the fabric reports per-message details).
    record_messages: bool | None = None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def _number(value: Any, integer: bool = False, most: float = float("inf")) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    if integer and not isinstance(value, int):
        raise ValueError(f"{value!r} is not an integer")
    if not 0 <= value <= most:
        raise ValueError(f"{value!r} is not in [0, {most:g}]")
    return value


def _placement(value: Any) -> str:
    text = _text(value)
    if text in ("linear", "random", *LOCALITY_CLASSES) or text.startswith("nodes:"):
        return text
    if Path(text).is_file():
        return text
    raise ValueError(f"{value!r} is not a placement")


# The options a replay sweep may vary, declared once: axis name -> (ReplayOptions field, the
# option from one axis value; ValueError or UsageError names what was expected). The fabric
# and its keys (`fabric`, `fabric.KEY`) are axes of their own (sweeps/spec.py).
SWEEP_AXES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "placement": ("placement", _placement),
    "coll": ("coll", _text),
    "background": (
        "background",
        lambda v: tuple(parse_job(job) for job in _text(v).split(";") if job),
    ),
    "background_b": ("background_b", lambda v: BackgroundB(b=float(_number(v, most=1.0)))),
    "compute_scale": ("compute_scale", lambda v: float(_number(v))),
    "eager_threshold": ("eager_threshold_bytes", lambda v: _number(v, integer=True)),
    "nodes": ("nodes", lambda v: _number(v, integer=True)),
}


def options_of_axes(values: dict[str, Any], seed: int) -> ReplayOptions:
    """The options of one sweep point: `values` by axis name (SWEEP_AXES)."""
    fields = {}
    for axis, value in values.items():
        if axis in SWEEP_AXES:
            field_name, convert = SWEEP_AXES[axis]
            fields[field_name] = convert(value)
    return ReplayOptions(seed=seed, **fields)


def scenario_of(fabric: Fabric, options: ReplayOptions, ranks: int) -> _core.Scenario:
    """The engine's scenario of a replay of a `ranks`-rank trace with `options` on `fabric`
    (UsageError for a placement the user wrote wrong)."""
    return _core.Scenario(
        fabric.spec,
        placement_spec(options.placement, ranks, options.seed, fabric, options.nodes),
        seed=options.seed,
        eager_threshold_bytes=options.eager_threshold_bytes,
        compute_scale=options.compute_scale,
        coll=options.coll,
        record_messages=options.record_messages,
        background_traces=[t.placement for t in options.background_traces],
        generators=[
            {"nodes": job.nodes, "placement": job.placement, "traffic": _traffic(job)}
            for job in options.background
        ],
        sized_from_b=_sized(options.background_b),
    )


def _traffic(job: BackgroundJob) -> dict[str, Any]:
    return {
        "pattern": job.pattern,
        "bytes": job.bytes,
        "load": job.load,
        "arrivals": job.arrivals,
        "hot_fraction": job.hot_fraction,
    }


def _sized(spec: BackgroundB | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    # A job of that traffic: BackgroundJob declares the generators' other defaults
    # (Poisson arrivals, the hot-spot fraction) once.
    traffic = BackgroundJob(pattern=spec.pattern, nodes=2, load=spec.load, bytes=spec.bytes)
    return {
        "b": spec.b,
        "job_sizes": list(spec.job_sizes or DEFAULT_JOB_SIZES),
        "placement": spec.placement,
        "traffic": _traffic(traffic),
    }
