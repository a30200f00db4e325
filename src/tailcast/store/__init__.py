"""Results store: Arrow schemas, atomic Parquet files, a DuckDB catalog over them."""

from tailcast.store.catalog import Catalog, TableInfo
from tailcast.store.parquet_io import check_file, conform, read_table, write_parquet_atomic
from tailcast.store.results import ResultsDir
from tailcast.store.schemas import SCHEMA_VERSION, TABLES, schema_of

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
