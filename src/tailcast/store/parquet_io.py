"""Atomic Parquet writes and checked reads.

A file becomes visible under its final name only when complete (`store.atomic`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError, StoreError
from tailcast.store.atomic import TMP_PREFIX as TMP_PREFIX
from tailcast.store.atomic import atomic_path as atomic_path
from tailcast.store.footer import check_file
from tailcast.store.footer import file_metadata as file_metadata
from tailcast.store.schemas import schema_of

# Rows handed to the Parquet writer per call: pyarrow writes without the GIL, so a signal
# handler (Ctrl-C, SIGTERM) runs only between calls; 256 K rows take ~0.1 s.
WRITE_SLICE_ROWS = 1 << 18


def conform(table_name: str, data: pa.Table | dict[str, Any] | list[dict[str, Any]]) -> pa.Table:
    """Cast `data` to the table's schema: missing nullable columns become nulls, extra
    columns are an error (they would be silently lost otherwise)."""
    schema = schema_of(table_name)
    if isinstance(data, list):
        data = pa.Table.from_pylist(data, schema=schema)
    elif isinstance(data, dict):
        data = pa.table(data)
    extra = [c for c in data.column_names if c not in schema.names]
    if extra:
        raise StoreError(f"table {table_name}: unknown columns {extra}")
    columns = []
    for field in schema:
        if field.name in data.column_names:
            col = data.column(field.name)
            try:
                col = col.cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise StoreError(f"table {table_name}: column {field.name}: {exc}") from exc
            if not field.nullable and col.null_count:
                raise StoreError(f"table {table_name}: column {field.name} has nulls")
            columns.append(col)
        elif field.nullable:
            columns.append(pa.nulls(data.num_rows, field.type))
        else:
            raise StoreError(f"table {table_name}: required column {field.name} missing")
    return pa.Table.from_arrays(columns, schema=schema)


def _with_metadata(table_name: str, table: pa.Table, extra: dict[str, str] | None) -> pa.Table:
    meta = dict(table.schema.metadata or {})
    meta.update(file_metadata(table_name, extra))
    return table.replace_schema_metadata(meta)


def write_parquet_atomic(
    table_name: str,
    data: pa.Table | dict[str, Any] | list[dict[str, Any]],
    path: Path,
    metadata: dict[str, str] | None = None,
    row_group_size: int | None = None,
) -> Path:
    """Conforms `data` to `table_name`'s schema and writes it atomically to `path`."""
    table = _with_metadata(table_name, conform(table_name, data), metadata)
    step = min(row_group_size or WRITE_SLICE_ROWS, WRITE_SLICE_ROWS)
    try:
        with (
            atomic_path(path) as tmp,
            pq.ParquetWriter(tmp, table.schema, compression="zstd") as w,
        ):
            for start in range(0, max(table.num_rows, 1), step):
                w.write_table(table.slice(start, step), row_group_size=step)
    except (OSError, pa.ArrowException) as exc:  # a full disk, a read-only directory, …
        raise write_error(path, exc) from exc
    return path


def write_error(path: Path, exc: BaseException) -> StoreError:
    """A failed write of `path` in the operating system's words (pyarrow wraps them in its
    own)."""
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror
    else:
        text = str(exc)
        reason = text.rsplit("Detail: ", 1)[-1] if "Detail: " in text else text
    return StoreError(f"{path}: cannot write ({reason})")


def read_table(path: Path, expected_table: str | None = None) -> pa.Table:
    """Reads a whole tailcast Parquet file after checking it; errors name the file."""
    check_file(path, expected_table)
    try:
        return pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data ({exc})") from exc
