"""DuckDB catalog: every stored table is a view over its Parquet files.

Files are checked one by one before the views are made, so a corrupt or foreign file is
reported (naming it) and left out, and every other file stays queryable. A part of a
result whose completing record is not there (results.py: still being written, or its
writer was killed) is left out too and listed as pending. The DuckDB database is in
memory: nothing here ever writes a shared database file.

Queries only read. The views live in this process's memory, so a statement changing them
(DROP VIEW runs) would change nothing stored yet report success, and COPY, EXPORT or ATTACH
would write files, COPY … TO even over a file of the store. So `sql` runs one query
(SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, or EXPLAIN of one) and refuses every
other statement as a usage error (a query writes no file). The connection itself opens no
file outside the store's directory (DuckDB's enable_external_access off, allowed_directories
the store: DuckDB 1.2, duckdb/duckdb#14568; its spill directory stays usable), installs no
extension, and its settings are locked, so no statement undoes that. This keeps a user's
own queries from changing the store by mistake; it is no sandbox for untrusted SQL (DuckDB's
"Securing DuckDB" page asks for operating-system isolation for that).
"""

from __future__ import annotations

import re
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


# EXPLAIN's prefix (with options and ANALYZE), before the statement it explains.
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:\([^)]*\)\s*)?(?:ANALY[SZ]E\s+)?", re.IGNORECASE)
QUERIES = "SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, or EXPLAIN of one"


def _check_query(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """UsageError unless `text` is one query (module doc: queries only read)."""
    statements = con.extract_statements(text)
    if len(statements) != 1:
        raise UsageError(f"one SQL statement at a time; the text holds {len(statements)}")
    kind = statements[0].type
    if kind == duckdb.StatementType.EXPLAIN:  # EXPLAIN ANALYZE runs what it explains
        explained = _EXPLAIN.sub("", text, count=1)
        inner = con.extract_statements(explained) if explained != text else []
        if len(inner) == 1 and inner[0].type == duckdb.StatementType.SELECT:
            return
        kind = inner[0].type if len(inner) == 1 else kind
    elif kind == duckdb.StatementType.SELECT:
        return
    first = " ".join(text.split())[:40]
    raise UsageError(
        f"{first!r} is a statement of kind {kind.name}, not a query: the store is only read "
        f"(its views, files and settings stay as they are); give one query ({QUERIES})"
    )


class Catalog:
    """Query layer over a results directory."""

    def __init__(self, results: ResultsDir | None = None) -> None:
        self.results = results or ResultsDir()
        self.con = duckdb.connect(":memory:")
        self.tables: dict[str, TableInfo] = {}
        # One listing of every table, so a part is shown only with its record (inventory).
        for name, info in inventory(self.results).items():
            self.tables[name] = self._attach(name, info)
        self._lock()

    def _lock(self) -> None:
        """From here on the connection reads files of the store's directory and nothing
        else, installs no extension, and takes no SET (module doc). The directory, not the
        list of its files: DuckDB parses a SET of 20,000 paths in 1.9 s, of one in 3 ms."""
        root = self.results.root
        # as the views name the files, and where they are (a link or a relative home)
        named = {str(root) + "/", str(root.absolute()) + "/", str(root.resolve()) + "/"}
        self.con.execute(f"SET allowed_directories = [{', '.join(map(_sql_str, named))}]")
        self.con.execute("SET autoinstall_known_extensions = false")
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET lock_configuration = true")

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
            _check_query(self.con, query)
            relation = self.con.sql(query, params=params)
            if relation is None:  # a statement without a result set
                return pa.table({})
            return relation.to_arrow_table()
        except duckdb.ParserException as exc:
            raise UsageError("SQL syntax: " + " ".join(str(exc).split())) from exc
        except duckdb.PermissionException as exc:
            raise UsageError(
                "SQL reads the store's tables only, no other file: " + " ".join(str(exc).split())
            ) from exc
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
