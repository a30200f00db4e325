"""DuckDB catalog: every stored table is a view over its Parquet files.

Files are checked one by one before the views are made, so a corrupt or foreign file is
reported (naming it) and left out, and every other file stays queryable. A part of a
result whose completing record is not there (results.py: still being written, or its
writer was killed) is left out too and listed as pending. The DuckDB database is in
memory: nothing here ever writes a shared database file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError, StoreError, UsageError
from tailcast.store.parquet_io import check_file
from tailcast.store.results import ResultsDir
from tailcast.store.schemas import META_PART_OF, TABLES


@dataclass
class TableInfo:
    name: str
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    problems: list[InputError] = field(default_factory=list)
    # Parts whose completing record does not exist (yet): not in the view.
    pending: list[Path] = field(default_factory=list)


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Catalog:
    """Query layer over a results directory."""

    def __init__(self, results: ResultsDir | None = None) -> None:
        self.results = results or ResultsDir()
        self.con = duckdb.connect(":memory:")
        self.tables: dict[str, TableInfo] = {}
        # Every table is listed and checked first; a part is shown only when its record is in
        # this same listing. A record written after its table was listed (a writer finishing
        # meanwhile) then hides its parts too, so a query never sees parts without a record.
        checked = {name: self._check(name) for name in TABLES}
        listed = {(name, path.stem) for name, info in checked.items() for path, _ in info[0]}
        for name in TABLES:
            self.tables[name] = self._attach(name, *checked[name], listed)

    @property
    def problems(self) -> list[InputError]:
        return [p for info in self.tables.values() for p in info.problems]

    def _check(self, name: str) -> tuple[list[tuple[Path, pq.FileMetaData]], list[InputError]]:
        readable, problems = [], []
        for path in self.results.files(name):
            try:
                readable.append((path, check_file(path, expected_table=name)))
            except InputError as err:
                problems.append(err)
        return readable, problems

    def _attach(
        self,
        name: str,
        readable: list[tuple[Path, pq.FileMetaData]],
        problems: list[InputError],
        listed: set[tuple[str, str]],
    ) -> TableInfo:
        info = TableInfo(name, problems=problems)
        for path, meta in readable:
            part_of = (meta.metadata or {}).get(META_PART_OF)
            if part_of is not None:
                table, _, stem = part_of.decode(errors="replace").partition("/")
                if (table, stem) not in listed:
                    info.pending.append(path)
                    continue
            info.files.append(path)
            info.rows += meta.num_rows
        if info.files:
            paths = ", ".join(_sql_str(str(p)) for p in info.files)
            extra = ""
            if name == "traces":  # one file per trace: its stem is the trace id
                extra = ", filename = true"
            source = f"read_parquet([{paths}], union_by_name = true{extra})"
            select = "*"
            if name == "traces":
                select = (
                    "* EXCLUDE (filename), "
                    "regexp_extract(filename, '([^/]+)\\.parquet$', 1) AS trace_id"
                )
            self.con.execute(f'CREATE VIEW "{name}" AS SELECT {select} FROM {source}')
        else:
            empty = TABLES[name].empty_table()
            if name == "traces":
                empty = empty.append_column("trace_id", pa.array([], pa.string()))
            self.con.register(name, empty)
        return info

    def sql(self, query: str, params: list[Any] | None = None) -> pa.Table:
        """Runs one SQL statement over the views; returns its result as Arrow. Values from
        outside (ids, names) go in `params` (`?` in the query), never into its text."""
        if not query.strip():
            raise UsageError("empty SQL query")
        try:
            relation = self.con.sql(query, params=params)
            if relation is None:  # a statement without a result set
                return pa.table({})
            return relation.to_arrow_table()
        except duckdb.ParserException as exc:
            raise UsageError("SQL syntax: " + " ".join(str(exc).split())) from exc
        except duckdb.Error as exc:
            raise StoreError("query failed: " + " ".join(str(exc).split())) from exc

    def rows(self, query: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.sql(query).to_pylist()
        return rows

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
