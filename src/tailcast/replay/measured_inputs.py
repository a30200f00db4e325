"""What a replay can take from measurements in the store: the job sizes of a recorded queue
snapshot (`--background-snapshot ID`), a measured run's b, nodes, locality and eager
threshold (`--from-run RUN_ID`), and the eager threshold the cluster's MPI applied in its
newest recorded run (`predict tail --simulate`), so a simulation can be set up as the
measurement was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tailcast.errors import UsageError
from tailcast.replay.eager_limit import run_eager_threshold
from tailcast.replay.fabric import Fabric
from tailcast.replay.placement import LOCALITY_CLASSES

if TYPE_CHECKING:
    from tailcast.store import Catalog, ResultsDir


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def snapshot_job_sizes(snapshot_id: str, results: ResultsDir | None = None) -> tuple[int, ...]:
    """Node counts of the running jobs with ≥ 2 nodes in a recorded snapshot (the jobs b
    counts, seed 001 §5.1)."""
    query = (
        "SELECT node_count FROM snapshots WHERE snapshot_id = "
        f"{_quote(snapshot_id)} AND upper(state) = 'RUNNING' AND node_count >= 2"
    )
    from tailcast.store import Catalog  # DuckDB and pyarrow: only when a store is asked

    with Catalog(results) as cat:
        known = cat.rows(
            f"SELECT count(*) AS n FROM snapshots WHERE snapshot_id = {_quote(snapshot_id)}"
        )
        if not known[0]["n"]:
            raise UsageError(f"--background-snapshot {snapshot_id}: no such snapshot in the store")
        sizes = tuple(int(r["node_count"]) for r in cat.rows(query))
    if not sizes:
        raise UsageError(
            f"--background-snapshot {snapshot_id}: the snapshot has no running job with >= 2 nodes"
        )
    return sizes


@dataclass(frozen=True)
class MeasuredRun:
    """The parts of a measured run a replay reproduces."""

    run_id: str
    b: float
    nodes: tuple[str, ...]
    locality: str | None
    benchmark: str | None
    msg_size_bytes: int | None
    eager_threshold_bytes: int | None = None  # the run's library's (None: not recorded)


def measured_run(run_id: str, results: ResultsDir | None = None) -> MeasuredRun:
    """A run of the store: b before it (seed 001 takes b from squeue before the run), its
    node list and placement locality, and its library's eager threshold."""
    query = (
        "SELECT run_id, b_before, b_after, nodes, locality, benchmark, msg_size_bytes, "
        "protocol_json "
        f"FROM runs WHERE run_id = {_quote(run_id)}"
    )
    from tailcast.store import Catalog  # DuckDB and pyarrow: only when a store is asked

    with Catalog(results) as cat:
        rows = cat.rows(query)
    if not rows:
        raise UsageError(f"--from-run {run_id}: no such run in the store")
    row = rows[0]
    b = row["b_before"] if row["b_before"] is not None else row["b_after"]
    if b is None:
        raise UsageError(f"--from-run {run_id}: the run recorded no b (before or after)")
    return MeasuredRun(
        run_id=str(row["run_id"]),
        b=float(b),
        nodes=tuple(row["nodes"] or ()),
        locality=row["locality"],
        benchmark=row["benchmark"],
        msg_size_bytes=row["msg_size_bytes"],
        eager_threshold_bytes=run_eager_threshold(row["protocol_json"]),
    )


def run_placement(run: MeasuredRun, fabric: Fabric) -> tuple[str, int | None]:
    """Where a measured run's ranks go on `fabric` (a `--placement` text and its node
    count): on the very nodes when the fabric names them all (its `nodes` key), else on
    nodes of the run's locality class."""
    names = set(fabric.node_names or ())
    if run.nodes and names.issuperset(run.nodes):
        import hostlist

        return "nodes:" + hostlist.collect_hostlist(list(run.nodes)), None
    if run.locality in LOCALITY_CLASSES and fabric.layout["group"] is not None:
        return str(run.locality), len(run.nodes) or None
    raise UsageError(
        f"--from-run {run.run_id}: fabric {fabric.name} names none of the run's nodes and the "
        f"run's locality ({run.locality}) is not one of {', '.join(LOCALITY_CLASSES)} "
        "on a fabric with groups and islands"
    )


def recorded_eager_threshold(cat: Catalog, benchmark: str) -> int | None:
    """The eager threshold of the newest run whose protocol was recorded, a run of
    `benchmark` first (None: no run recorded one)."""
    rows = cat.sql(
        "SELECT protocol_json FROM runs WHERE protocol_json IS NOT NULL "
        "ORDER BY benchmark = ? DESC, started_at DESC NULLS LAST LIMIT 1",
        [benchmark],
    ).to_pylist()
    return run_eager_threshold(rows[0]["protocol_json"]) if rows else None
