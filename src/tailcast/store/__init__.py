"""Results store: Arrow schemas, atomic Parquet files, a DuckDB catalog over them.

The names below load their module when first used (PEP 562): writing a result must not
pay for DuckDB, nor listing the store for the SQL engine."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # (typing.TYPE_CHECKING, which type checkers read as True)
if TYPE_CHECKING:
    from typing import Any

    from tailcast.store.catalog import Catalog
    from tailcast.store.footer import check_file
    from tailcast.store.inventory import TableInfo
    from tailcast.store.parquet_io import conform, read_table, write_parquet_atomic
    from tailcast.store.results import ResultsDir
    from tailcast.store.schemas import SCHEMA_VERSION, TABLES, schema_of

_HOME = {
    "Catalog": "catalog",
    "TableInfo": "inventory",
    "check_file": "footer",
    "conform": "parquet_io",
    "read_table": "parquet_io",
    "write_parquet_atomic": "parquet_io",
    "ResultsDir": "results",
    "SCHEMA_VERSION": "schemas",
    "TABLES": "schemas",
    "schema_of": "schemas",
}

__all__ = [
    "SCHEMA_VERSION",
    "TABLES",
    "Catalog",
    "ResultsDir",
    "TableInfo",
    "check_file",
    "conform",
    "read_table",
    "schema_of",
    "write_parquet_atomic",
]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'tailcast.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tailcast.store.{module}"), name)
    globals()[name] = value
    return value
