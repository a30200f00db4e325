"""A sweep's plan, written once before anything runs: the sweep id, the spec text, every
point with its seed, the fabrics' TOML texts and the traces' content hashes as they were,
the tailcast version, and which points each array task runs. Every task and every later
resume reads the same plan, so results never depend on when or where a point ran.

Layout: `$TAILCAST_HOME/sweeps/ID/plan.json` (+ `assign-N.json` for resubmissions, the
sbatch scripts, `submissions.json` and task logs); finished points are files of the
`sweep_points` table, `sweep_points/ID/pNNNNNN.parquet`, written last for each point.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tailcast import __version__
from tailcast.errors import EXIT_USAGE, InputError, UsageError
from tailcast.store import ResultsDir
from tailcast.store.atomic import atomic_path
from tailcast.sweeps.spec import Point, SweepSpec, fabric_texts

_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


class UnknownSweep(UsageError):
    """A sweep id with no plan in the store."""


@dataclass
class Plan:
    sweep_id: str
    spec: SweepSpec
    points: list[Point]
    fabrics: dict[str, str]
    traces: dict[str, str]  # path → sha256
    tasks: int
    version: str
    created_at: str

    def shard(self, task: int) -> list[int]:
        """Point indices of array task `task` of the first submission (round robin)."""
        return [p.index for p in self.points if p.index % self.tasks == task]


def sweeps_dir(results: ResultsDir) -> Path:
    return results.root / "sweeps"


def sweep_dir(results: ResultsDir, sweep_id: str) -> Path:
    return sweeps_dir(results) / sweep_id


def points_dir(results: ResultsDir, sweep_id: str) -> Path:
    return results.table_dir("sweep_points") / sweep_id


def point_path(results: ResultsDir, sweep_id: str, index: int) -> Path:
    return points_dir(results, sweep_id) / f"p{index:06d}.parquet"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, data: Any) -> None:
    """Atomically: a reader sees the old file or the whole new one."""
    with atomic_path(path) as tmp, tmp.open("w") as handle:
        json.dump(data, handle, indent=1)


def create_plan(spec: SweepSpec, tasks: int, results: ResultsDir) -> Plan:
    """Plans `spec` as `tasks` array tasks and writes the plan."""
    if tasks < 1:
        raise UsageError("--array-size must be >= 1")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec.name)[:40] or "sweep"
    points = spec.points()
    plan = Plan(
        sweep_id=f"{safe}-{stamp}-{secrets.token_hex(3)}",
        spec=spec,
        points=points,
        fabrics=fabric_texts(spec),
        traces={str(t): file_sha256(t) for t in spec.traces},
        tasks=min(tasks, len(points)),
        version=__version__,
        created_at=datetime.now(UTC).isoformat(),
    )
    write_json(sweep_dir(results, plan.sweep_id) / "plan.json", _to_json(plan))
    return plan


def _to_json(plan: Plan) -> dict[str, Any]:
    return {
        "sweep_id": plan.sweep_id,
        "spec_source": plan.spec.source,
        "spec_text": plan.spec.text,
        "points": [[p.index, p.trace, p.seed, p.params] for p in plan.points],
        "fabrics": plan.fabrics,
        "traces": plan.traces,
        "tasks": plan.tasks,
        "tailcast_version": plan.version,
        "created_at": plan.created_at,
    }


def load_plan(sweep_id: str, results: ResultsDir) -> Plan:
    """The plan of a sweep (UnknownSweep if there is none)."""
    if not _ID.match(sweep_id):
        raise UnknownSweep(f"sweep {sweep_id!r} does not exist (ids are letters, digits, -_.)")
    path = sweep_dir(results, sweep_id) / "plan.json"
    if not path.is_file():
        raise UnknownSweep(f"sweep {sweep_id} does not exist in {sweeps_dir(results)}")
    try:
        raw = json.loads(path.read_text())
        spec = _spec_from(raw)
        points = [Point(int(i), str(t), int(s), dict(p)) for i, t, s, p in raw["points"]]
        return Plan(
            sweep_id=raw["sweep_id"],
            spec=spec,
            points=points,
            fabrics=dict(raw["fabrics"]),
            traces=dict(raw["traces"]),
            tasks=int(raw["tasks"]),
            version=str(raw["tailcast_version"]),
            created_at=str(raw["created_at"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        err = InputError(path, f"not a readable sweep plan ({exc})")
        err.exit_code = EXIT_USAGE
        raise err from exc


def _spec_from(raw: dict[str, Any]) -> SweepSpec:
    """The spec as planned (from its text, not the file, which may have changed since)."""
    import tomllib

    data = tomllib.loads(raw["spec_text"])
    sweep = data.get("sweep", {})
    return SweepSpec(
        name=str(sweep.get("name") or Path(raw["spec_source"]).stem),
        source=str(raw["spec_source"]),
        text=str(raw["spec_text"]),
        traces=tuple(Path(t) for t in raw["traces"]),
        seeds=int(sweep.get("seeds", 1)),
        seed=int(sweep.get("seed", 0)),
        store_ops=bool(sweep.get("store_ops", False)),
        axes={k: list(v) for k, v in data.get("axes", {}).items()} or {"fabric": ["ideal"]},
    )


def done_points(plan: Plan, results: ResultsDir) -> set[int]:
    """Indices of the points whose file exists (written last, atomically)."""
    folder = points_dir(results, plan.sweep_id)
    if not folder.is_dir():
        return set()
    done = set()
    for p in folder.glob("p*.parquet"):
        try:
            done.add(int(p.stem[1:]))
        except ValueError:
            continue
    return done


def write_assignment(plan: Plan, tasks: list[list[int]], results: ResultsDir) -> str:
    """A resubmission's task → points map; returns its name (`assign-N`)."""
    folder = sweep_dir(results, plan.sweep_id)
    n = len(list(folder.glob("assign-*.json"))) + 1
    name = f"assign-{n}"
    write_json(folder / f"{name}.json", tasks)
    return name


def assignment(plan: Plan, name: str | None, task: int, results: ResultsDir) -> list[int]:
    """The points array task `task` runs: of the plan's shards, or of a resubmission."""
    if name is None:
        if not 0 <= task < plan.tasks:
            raise UsageError(f"task {task} is not in 0..{plan.tasks - 1}")
        return plan.shard(task)
    path = sweep_dir(results, plan.sweep_id) / f"{name}.json"
    if not _ID.match(name) or not path.is_file():
        raise UsageError(f"sweep {plan.sweep_id} has no assignment {name}")
    tasks = json.loads(path.read_text())
    if not 0 <= task < len(tasks):
        raise UsageError(f"task {task} is not in 0..{len(tasks) - 1} of {name}")
    return [int(i) for i in tasks[task]]
