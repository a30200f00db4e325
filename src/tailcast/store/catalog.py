"""DuckDB catalog: every stored table is a view over its Parquet files.

Files are checked one by one before the views are made, so a corrupt or foreign file is
reported (naming it) and left out, and every other file stays queryable. A part of a
result whose completing record is not there (results.py: still being written, or its
writer was killed) is left out too and listed as pending. The DuckDB database is in
memory: nothing here ever writes a shared database file.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from tailcast.errors import InputError, StoreError, UsageError
from tailcast.store.inventory import TableInfo, inventory
from tailcast.store.results import ResultsDir
from tailcast.store.schemas import TABLES


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_type(t: pa.DataType) -> str:
    """The DuckDB type of an Arrow type of the store's schemas."""
    if pa.types.is_list(t):
        return _sql_type(t.value_type) + "[]"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    names = {
        pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER",
        pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN",
        pa.string(): "VARCHAR",
    }  # fmt: skip
    return names[t]


def _columns(name: str, present: set[str]) -> str:
    """Every column of the table's schema in its declared type: files may hold narrower
    integers or leave out columns that are all null (traces.layout)."""
    out = []
    for f in TABLES[name]:
        value = f'"{f.name}"' if f.name in present else "NULL"
        out.append(f'CAST({value} AS {_sql_type(f.type)}) AS "{f.name}"')
    return ", ".join(out)


class Catalog:
    """Query layer over a results directory."""

    def __init__(self, results: ResultsDir | None = None) -> None:
        self.results = results or ResultsDir()
        self.con = duckdb.connect(":memory:")
        self.tables: dict[str, TableInfo] = {}
        # One listing of every table, so a part is shown only with its record (inventory).
        for name, info in inventory(self.results).items():
            self.tables[name] = self._attach(name, info)

    @property
    def problems(self) -> list[InputError]:
        return [p for info in self.tables.values() for p in info.problems]

    def _attach(self, name: str, info: TableInfo) -> TableInfo:
        if info.files:
            paths = ", ".join(_sql_str(str(p)) for p in info.files)
            extra = ""
            if name == "traces":  # one file per trace: its stem is the trace id
                extra = ", filename = true"
            source = f"read_parquet([{paths}], union_by_name = true{extra})"
            select = _columns(name, info.columns)
            if name == "traces":
                select += ", regexp_extract(filename, '([^/]+)\\.parquet$', 1) AS trace_id"
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
