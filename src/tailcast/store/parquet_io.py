"""Atomic Parquet writes and checked reads.

A file becomes visible under its final name only when complete: it is written to a hidden
temporary file in the same directory, fsynced, then renamed (rename is atomic within one
file system), and the directory is fsynced so the rename survives a crash.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError, StoreError
from tailcast.store.schemas import META_SCHEMA_VERSION, META_TABLE, SCHEMA_VERSION, schema_of

TMP_PREFIX = ".tmp-"
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
    meta[META_TABLE] = table_name.encode()
    meta[META_SCHEMA_VERSION] = str(SCHEMA_VERSION).encode()
    for key, value in (extra or {}).items():
        meta[f"tailcast.{key}".encode()] = value.encode()
    return table.replace_schema_metadata(meta)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(final: Path) -> Iterator[Path]:
    """Yields a hidden temporary path next to `final`; on success fsyncs and renames it to
    `final`, on any error removes it. Readers never see a partial file."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f"{TMP_PREFIX}{final.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        _fsync_dir(final.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


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
        raise StoreError(f"{path}: cannot write ({_os_reason(exc)})") from exc
    return path


def _os_reason(exc: BaseException) -> str:
    """The operating system's words for a failed write (pyarrow wraps them in its own)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc)
    return text.rsplit("Detail: ", 1)[-1] if "Detail: " in text else text


def check_file(path: Path, expected_table: str | None = None) -> pq.FileMetaData:
    """Reads a Parquet footer and checks it is a tailcast file of the expected table and a
    readable schema version. Raises InputError naming the file otherwise."""
    try:
        meta = pq.read_metadata(path)
    # ValueError: a footer whose column names are not UTF-8 (pyarrow decodes them).
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Parquet file ({exc})") from exc
    kv = meta.metadata or {}
    table = kv.get(META_TABLE, b"").decode(errors="replace")
    if not table:
        raise InputError(path, "Parquet file was not written by tailcast (no tailcast.table)")
    if expected_table is not None and table != expected_table:
        raise InputError(path, f"holds table {table!r}, expected {expected_table!r}")
    raw_version = kv.get(META_SCHEMA_VERSION, b"0") or b"0"
    try:
        version = int(raw_version)
    except ValueError as exc:
        raise InputError(path, f"schema version {raw_version!r} is not a number") from exc
    if version > SCHEMA_VERSION:
        raise InputError(path, f"schema version {version} is newer than this tailcast's")
    want = schema_of(table)
    have = set(meta.schema.to_arrow_schema().names)
    missing = [f.name for f in want if not f.nullable and f.name not in have]
    if missing:
        raise InputError(path, f"missing required columns {missing}")
    return meta


def read_table(path: Path, expected_table: str | None = None) -> pa.Table:
    """Reads a whole tailcast Parquet file after checking it; errors name the file."""
    check_file(path, expected_table)
    try:
        return pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data ({exc})") from exc
