"""Reading and writing tailcast Parquet traces (one file per trace, one row per MPI call).

File metadata: `traces.meta`. Rows are sorted by (rank, seq) and laid out for streaming
readers (`traces.layout`): an absent column is null, integer columns may be narrower than
TRACE declares; `read_trace` and `iter_batches` give every TRACE column in its declared
type.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError
from tailcast.store.parquet_io import atomic_path, conform, file_metadata
from tailcast.store.schemas import TRACE
from tailcast.traces.layout import ROW_GROUP_ROWS, TraceWriter, narrowed
from tailcast.traces.meta import TABLE, TraceMeta, read_meta
from tailcast.traces.schema import sorted_trace

__all__ = ["TABLE", "TraceMeta", "iter_batches", "read_meta", "read_trace", "write_trace"]


def write_trace(table: pa.Table, path: Path, meta: TraceMeta) -> Path:
    """Writes `table` (TRACE columns; missing nullable ones are null) atomically."""
    data = narrowed(sorted_trace(conform(TABLE, table)))
    path = Path(path)
    kv = file_metadata(TABLE, meta.to_kv())
    with atomic_path(path) as tmp, TraceWriter(tmp, data.schema, kv) as writer:
        writer.write(data)
    return path


def read_trace(path: Path) -> tuple[pa.Table, TraceMeta]:
    """The whole trace and its metadata."""
    path = Path(path)
    meta = read_meta(path)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data ({exc})") from exc
    return conform(TABLE, table.replace_schema_metadata(None)), meta


def iter_batches(
    path: Path, columns: list[str] | None = None, batch_rows: int = ROW_GROUP_ROWS
) -> Iterator[pa.RecordBatch]:
    """Streams the trace in (rank, seq) order, one bounded batch at a time, `columns` (all
    by default) in their TRACE types: absent ones null, narrow ones widened."""
    path = Path(path)
    read_meta(path)
    wanted = pa.schema([TRACE.field(c) for c in (columns or TRACE.names)])
    try:
        with pq.ParquetFile(path) as pf:
            present = set(pf.schema_arrow.names)
            read = [c for c in wanted.names if c in present]
            for batch in pf.iter_batches(batch_size=batch_rows, columns=read):
                arrays = [
                    batch.column(f.name).cast(f.type)
                    if f.name in present
                    else pa.nulls(batch.num_rows, f.type)
                    for f in wanted
                ]
                yield pa.RecordBatch.from_arrays(arrays, schema=wanted)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data ({exc})") from exc
