"""Resolves the SOURCE argument of `tailcast analyze …` to an Arrow table and records where
its rows came from (provenance for every number the analysis prints).

A SOURCE is, tried in this order:
1. a path to a Parquet file (any Parquet file, tailcast's or not);
2. the name of a store table (runs, samples, replay_iterations, …);
3. a replay id: its replay_iterations rows (per-iteration latency_us), or, when the replay
   has none, its replay_ops rows with latency_us = (sim_end_ns − sim_start_ns) / 1000;
   a sweep id: the replay_iterations rows of all its points, with each point's index,
   fabric, params (JSON), seed and one column per axis (or, without iterations, one row
   per point with latency_us = total time);
4. otherwise a SQL query over the store (DuckDB views, see `tailcast db`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError, UsageError
from tailcast.store.schemas import TABLES

if TYPE_CHECKING:  # DuckDB loads only for a SOURCE that is not a Parquet file
    from tailcast.store.catalog import Catalog

_SQL_START = re.compile(r"^\s*(?:(?:select|with|from|values|table)\s|\()", re.IGNORECASE)
_ID_LIKE = re.compile(r"^[A-Za-z0-9_.:-]+$")


@dataclass
class Source:
    """A resolved SOURCE: its rows, and how they were obtained."""

    spec: str
    kind: str  # parquet | table | replay | sweep | query
    table: pa.Table
    query: str | None = None
    files: list[Path] = field(default_factory=list)

    def provenance(self) -> dict[str, object]:
        return {
            "source": self.spec,
            "kind": self.kind,
            "query": self.query,
            "files": [str(p) for p in self.files],
            "rows": self.table.num_rows,
        }


def _files_of(catalog: Catalog, tables: list[str]) -> list[Path]:
    return [p for name in tables for p in catalog.tables[name].files]


def tables_in(query: str) -> list[str]:
    """Store tables a query mentions (word match) — used to list the files behind it."""
    words = set(re.findall(r"[A-Za-z_]+", query.lower()))
    return [name for name in TABLES if name in words]


def _sweep_source(catalog: Catalog, spec: str) -> Source | None:
    ident = spec.replace("'", "''")
    n = catalog.sql(f"SELECT count(*) AS n FROM sweep_points WHERE sweep_id = '{ident}'")
    if not int(n.column("n")[0].as_py()):
        return None
    query = (
        "SELECT s.sweep_id, s.point, s.fabric, s.params, s.seed, i.iteration, i.latency_us "
        "FROM sweep_points s JOIN replay_iterations i USING (replay_id) "
        f"WHERE s.sweep_id = '{ident}' ORDER BY s.point, i.iteration"
    )
    tables = ["sweep_points", "replay_iterations"]
    table = catalog.sql(query)
    if table.num_rows == 0:
        query = (
            "SELECT sweep_id, point, fabric, params, seed, total_time_ns / 1000.0 AS latency_us "
            f"FROM sweep_points WHERE sweep_id = '{ident}' ORDER BY point"
        )
        tables, table = ["sweep_points"], catalog.sql(query)
    from tailcast.sweeps.columns import with_axis_columns

    return Source(spec, "sweep", with_axis_columns(table), query, _files_of(catalog, tables))


def _replay_source(catalog: Catalog, spec: str) -> Source | None:
    def count(table: str) -> int:
        found = catalog.sql(f"SELECT count(*) AS n FROM {table} WHERE replay_id = ?", [spec])
        return int(found.column("n")[0].as_py())

    if count("replay_iterations"):
        query = (
            "SELECT replay_id, iteration, latency_us FROM replay_iterations "
            "WHERE replay_id = ? ORDER BY iteration"
        )
        tables = ["replay_iterations"]
    elif count("replay_ops"):
        query = (
            "SELECT replay_id, rank, seq, op, "
            "(sim_end_ns - sim_start_ns) / 1000.0 AS latency_us FROM replay_ops "
            "WHERE replay_id = ? ORDER BY rank, seq"
        )
        tables = ["replay_ops"]
    elif count("replays"):
        raise UsageError(f"replay {spec} has no replay_iterations or replay_ops rows")
    else:
        return None
    # The provenance shows the id in place of `?` (an id matches _ID_LIKE: no quotes).
    shown = query.replace("?", f"'{spec}'")
    return Source(spec, "replay", catalog.sql(query, [spec]), shown, _files_of(catalog, tables))


def resolve(spec: str, catalog: Catalog | None = None) -> Source:
    """Turns SOURCE into rows; a `catalog` may be passed to reuse one store connection."""
    if not spec.strip():
        raise UsageError("empty SOURCE")
    path = Path(spec).expanduser()
    if spec.endswith(".parquet") or (path.is_file() and not _SQL_START.match(spec)):
        if not path.is_file():
            raise UsageError(f"no such Parquet file: {spec}")
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(path, f"not a readable Parquet file ({exc})") from exc
        return Source(spec, "parquet", table, None, [path])
    from tailcast.store.catalog import Catalog

    own = catalog is None
    cat = catalog or Catalog()
    try:
        if spec in TABLES:
            query = f'SELECT * FROM "{spec}"'
            return Source(spec, "table", cat.sql(query), query, _files_of(cat, [spec]))
        if _ID_LIKE.match(spec) and not _SQL_START.match(spec):
            found = _replay_source(cat, spec) or _sweep_source(cat, spec)
            if found is not None:
                return found
            raise UsageError(
                f"SOURCE {spec!r} is not a Parquet file, a store table ({', '.join(TABLES)}), "
                "a stored replay id, or a SQL query"
            )
        return Source(spec, "query", cat.sql(spec), spec, _files_of(cat, tables_in(spec)))
    finally:
        if own:
            cat.close()
