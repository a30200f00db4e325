"""A sweep's specification (TOML) and its points.

```toml
[sweep]
name = "b-study"                 # a label (the sweep id adds a unique suffix)
traces = ["osu_alltoall.parquet"]  # relative to the spec file
seeds = 1                        # replays per combination, each with its own seed
seed = 1                         # the sweep seed: point seeds derive from it and the index
store_ops = false                # also store replay_ops of every point

[axes]                           # every combination of these values is a point
fabric = ["crossbar", "tree-2x2x4"]          # bundled names or TOML files
placement = ["linear", "random"]  # + same_group etc. on fabrics with groups, nodes:HOSTLIST
coll = ["", "alltoall=pairwise"]
background = ["", "uniform:nodes=4:load=0.5"]   # ';' joins several jobs
background_b = [0.25]            # jobs sized from b (seed 001), beside the other jobs
compute_scale = [0.0]
eager_threshold = [65536]        # default: each fabric's [host] eager_threshold_bytes
nodes = [8]
"fabric.host.overhead_ns" = [100.0, 300.0]   # a fabric key, dotted: every fabric here has it
```
Every value is checked when the sweep is planned (fabrics and their overrides against the
models' declared parameters, traces exist, background specs parse), so a bad spec fails
before anything runs or is submitted. Each axis is a column of the rows read by sweep id
(`tailcast analyze tails SWEEP_ID --by placement,background_b`); slurm_jobs/ has examples.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast import _core
from tailcast.errors import EXIT_USAGE, InputError, UsageError
from tailcast.replay import toml_text
from tailcast.replay.fabric import Fabric, FabricConfigError, load_fabric, parse_fabric
from tailcast.replay.scenario import SWEEP_AXES, ReplayOptions, options_of_axes

AXES = ("fabric", *SWEEP_AXES)  # and fabric.KEY
SWEEP_KEYS = {"name", "traces", "trace", "seeds", "seed", "store_ops"}


class SpecError(InputError):
    """A sweep spec that cannot run: names the file and the key (exit 2)."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Point:
    """One replay of a sweep."""

    index: int
    trace: str
    seed: int
    params: dict[str, Any]


@dataclass(frozen=True)
class SweepSpec:
    name: str
    source: str
    text: str
    traces: tuple[Path, ...]
    seeds: int
    seed: int
    store_ops: bool
    axes: dict[str, list[Any]]

    def points(self) -> list[Point]:
        """Every point, in a fixed order: traces × axes (in spec order) × seeds."""
        names = list(self.axes)
        out: list[Point] = []
        combos = itertools.product(*(self.axes[n] for n in names))
        for trace, combo in itertools.product(self.traces, list(combos)):
            for _ in range(self.seeds):
                index = len(out)
                params = dict(zip(names, combo, strict=True))
                out.append(Point(index, str(trace), point_seed(self.seed, index), params))
        return out


def point_seed(sweep_seed: int, index: int) -> int:
    """A point's seed from the sweep seed and its index alone (never task or time)."""
    digest = hashlib.sha256(f"{sweep_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:7], "little")


def load_spec(path: Path) -> SweepSpec:
    """Reads and checks a spec file (SpecError naming the key otherwise)."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(path, "the sweep spec does not exist")
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SpecError(path, f"invalid TOML: {err}") from err
    for key in set(data) - {"sweep", "axes"}:
        raise SpecError(path, f"key {key}: unknown table (allowed: sweep, axes)")
    sweep = data.get("sweep", {})
    axes_in = data.get("axes", {})
    if not isinstance(sweep, dict) or not isinstance(axes_in, dict):
        raise SpecError(path, "[sweep] and [axes] must be tables")
    for key in set(sweep) - SWEEP_KEYS:
        raise SpecError(
            path, f"key sweep.{key}: unknown (allowed: {', '.join(sorted(SWEEP_KEYS))})"
        )
    traces_raw = sweep.get("traces", [sweep["trace"]] if "trace" in sweep else [])
    if not isinstance(traces_raw, list) or not traces_raw:
        raise SpecError(path, "key sweep.traces: a non-empty list of trace files is required")
    traces = []
    for t in traces_raw:
        p = Path(t) if Path(t).is_absolute() else path.parent / str(t)
        if not p.is_file():
            raise SpecError(path, f"key sweep.traces: trace {t} does not exist")
        traces.append(p.resolve())
    seeds, seed = sweep.get("seeds", 1), sweep.get("seed", 0)
    for key, value in (("seeds", seeds), ("seed", seed)):
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < (1 if key == "seeds" else 0)
        ):
            raise SpecError(
                path, f"key sweep.{key}: expected an integer >= {1 if key == 'seeds' else 0}"
            )
    axes: dict[str, list[Any]] = {}
    for key, values in axes_in.items():
        if key not in AXES and not key.startswith("fabric."):
            allowed = ", ".join(AXES) + ", fabric.KEY"
            raise SpecError(path, f"key axes.{key}: unknown axis (allowed: {allowed})")
        if not isinstance(values, list) or not values:
            raise SpecError(path, f"key axes.{key}: expected a non-empty list of values")
        axes[key] = values
    axes.setdefault("fabric", ["ideal"])
    spec = SweepSpec(
        name=str(sweep.get("name") or path.stem),
        source=str(path),
        text=text,
        traces=tuple(traces),
        seeds=seeds,
        seed=seed,
        store_ops=bool(sweep.get("store_ops", False)),
        axes=axes,
    )
    _check_values(spec, path)
    return spec


def _check_values(spec: SweepSpec, path: Path) -> None:
    base = {name: _fabric(name, spec, path) for name in spec.axes["fabric"]}
    overrides = [k for k in spec.axes if k.startswith("fabric.")]
    for combo in itertools.product(*(spec.axes[k] for k in overrides)):
        for name, fabric in base.items():
            fabric_with(fabric, dict(zip(overrides, combo, strict=True)), path, name)
    for key, (_, convert) in SWEEP_AXES.items():
        for value in spec.axes.get(key, []):
            try:
                convert(value)
            except (ValueError, UsageError) as exc:
                raise SpecError(path, f"key axes.{key}: {exc}") from exc


def _fabric(name: Any, spec: SweepSpec, path: Path) -> Fabric:
    if not isinstance(name, str):
        raise SpecError(path, f"key axes.fabric: {name!r} is not a fabric name or file")
    where = Path(name) if Path(name).is_absolute() else path.parent / name
    try:
        return load_fabric(where if where.suffix == ".toml" else name)
    except FabricConfigError as err:
        raise SpecError(path, f"key axes.fabric: {err}") from err
    except Exception as err:
        raise SpecError(path, f"key axes.fabric: {err}") from err


def fabric_with(fabric: Fabric, overrides: dict[str, Any], path: Path, label: str) -> Fabric:
    """`fabric` with dotted keys set (`fabric.topology.k`); checked against its model."""
    if not overrides:
        return fabric
    table = copy.deepcopy(fabric.table)
    for dotted, value in overrides.items():
        keys = dotted.split(".")[1:]
        host = table.get("host")
        if len(keys) == 1 and isinstance(host, dict) and keys[0] in host:
            # A host key named as files before the [host] table did (`fabric.overhead_ns`):
            # the fabric gives it in its table, so that is the value to replace.
            keys = ["host", *keys]
        node = table
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise SpecError(path, f"key axes.{dotted}: {k} is not a table in fabric {label}")
        node[keys[-1]] = value
    try:
        checked = _core.FabricSpec(table)
    except (_core.FabricConfigError, ValueError) as err:
        raise SpecError(path, f"key axes.{'fabric'} = {label} with overrides: {err}") from err
    suffix = ",".join(f"{k[7:]}={v}" for k, v in overrides.items())
    # The stored text is the table the point ran with, so every reader sees the overrides.
    text = f"# {label} with sweep overrides {suffix}\n" + toml_text.dumps(table)
    return Fabric(
        name=f"{fabric.name}[{suffix}]",
        source=fabric.source,
        toml_text=text,
        table=table,
        spec=checked,
    )


def point_inputs(
    spec: SweepSpec, point: Point, fabrics: dict[str, str]
) -> tuple[Fabric, ReplayOptions]:
    """The fabric and replay options of a point; `fabrics` holds the TOML text of every
    fabric as it was when the sweep was planned."""
    p = point.params
    name = str(p["fabric"])
    fabric = parse_fabric(fabrics[name], name, name=Path(name).stem)
    overrides = {k: v for k, v in p.items() if k.startswith("fabric.")}
    fabric = fabric_with(fabric, overrides, Path(spec.source), name)
    options = options_of_axes(p, point.seed)
    return fabric, options


def fabric_texts(spec: SweepSpec) -> dict[str, str]:
    """Name → TOML text of every fabric of the sweep (what the plan keeps)."""
    return {str(n): _fabric(n, spec, Path(spec.source)).toml_text for n in spec.axes["fabric"]}
