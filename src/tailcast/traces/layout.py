"""How a trace is laid out in Parquet, for readers that stream it (DESIGN.md "Data": trace
layout).

- Columns that are null in every row are absent (readers treat an absent column as null).
- Integer columns take the smallest type that holds their values in this file (the TRACE
  schema's types are what readers widen to).
- Counters (`seq`, times, request ids, the `requests` lists) are DELTA_BINARY_PACKED; the
  others dictionary-encoded (a few distinct peers, tags, sizes, op names per trace).
- Row groups hold whole ranks where they can (a rank's rows start a row group, so a reader
  of one rank decodes no other rank's rows) and at most `ROW_GROUP_ROWS` rows; pages hold at
  most `PAGE_ROWS` rows, so a reader holds one small page per column and rank.
Files written before this layout (every column, wide types) read the same.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

TYPE_CHECKING = False  # (typing.TYPE_CHECKING, which type checkers read as True)
if TYPE_CHECKING:  # the constants serve writers without pyarrow (tit_convert) too
    from typing import Any

    import numpy as np
    import pyarrow as pa

ROW_GROUP_ROWS = 64 * 1024
PAGE_ROWS = 8 * 1024
DELTA_COLUMNS = frozenset({"seq", "t_start_ns", "t_end_ns", "request", "iteration", "requests"})
REQUIRED = frozenset({"rank", "seq", "op"})  # TRACE's non-nullable columns (a test checks)


def fitting_int(lo: int, hi: int) -> pa.DataType:
    """The smallest signed integer type holding lo..hi."""
    import pyarrow as pa

    for bits, t in ((8, pa.int8()), (16, pa.int16()), (32, pa.int32())):
        if -(1 << (bits - 1)) <= lo and hi < 1 << (bits - 1):
            return t
    return pa.int64()


def _narrow_type(column: pa.ChunkedArray, declared: pa.DataType) -> pa.DataType:
    import pyarrow as pa
    import pyarrow.compute as pc

    values = column
    if pa.types.is_list(declared):
        values = pc.list_flatten(column)
    item = declared.value_type if pa.types.is_list(declared) else declared
    if not pa.types.is_integer(item) or values.null_count == len(values):
        return declared
    bounds = pc.min_max(values).as_py()
    narrow = fitting_int(int(bounds["min"]), int(bounds["max"]))
    if narrow.bit_width > item.bit_width:
        narrow = item
    return pa.list_(narrow) if pa.types.is_list(declared) else narrow


def narrowed(table: pa.Table) -> pa.Table:
    """`table` (TRACE columns) without its all-null optional columns, each integer column
    in the smallest type its values fit."""
    import pyarrow as pa

    from tailcast.store.schemas import TRACE

    fields, columns = [], []
    for field in TRACE:
        if field.name not in table.column_names:
            continue
        column = table.column(field.name)
        if field.name not in REQUIRED and column.null_count == len(column):
            continue
        target = _narrow_type(column, field.type)
        fields.append(pa.field(field.name, target, nullable=field.nullable))
        columns.append(column.cast(target))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def writer_options(schema: pa.Schema) -> dict[str, Any]:
    """pyarrow ParquetWriter options of the layout for these columns."""
    import pyarrow as pa

    names = schema.names
    encoding = {}
    for name in names:
        if name in DELTA_COLUMNS:
            key = f"{name}.list.element" if pa.types.is_list(schema.field(name).type) else name
            encoding[key] = "DELTA_BINARY_PACKED"
    options: dict[str, Any] = {
        "compression": "zstd",
        "use_dictionary": [n for n in names if n not in DELTA_COLUMNS],
        "column_encoding": encoding,
        "write_statistics": True,
    }
    if _writer_takes_page_rows():
        options["max_rows_per_page"] = PAGE_ROWS
    return options


@functools.cache
def _writer_takes_page_rows() -> bool:
    """Whether this pyarrow's Parquet writer bounds pages by rows: pyarrow 20, the last with
    manylinux2014 wheels (old-glibc clusters), does not; its pages are then bounded by bytes
    only (1 MiB), which readers handle the same, holding larger pages."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.ParquetWriter(io.BytesIO(), pa.schema([("x", pa.int8())]), max_rows_per_page=1).close()
    except TypeError:
        return False
    return True


def group_cuts(ranks: Iterable[int] | np.ndarray, target: int = ROW_GROUP_ROWS) -> list[int]:
    """Where row groups end in rows of (sorted) `ranks`: at the last rank boundary within
    `target` rows of the group's start, or after `target` rows inside a longer rank."""
    import numpy as np

    r = np.asarray(ranks)
    n = len(r)
    starts = np.flatnonzero(np.diff(r)) + 1  # first row of every rank but the first
    cuts, at = [], 0
    while n - at > target:
        i = int(np.searchsorted(starts, at + target, side="right")) - 1
        cut = int(starts[i]) if i >= 0 and starts[i] > at else at + target
        cuts.append(cut)
        at = cut
    cuts.append(n)
    return cuts


class TraceWriter:
    """Writes rows in (rank, seq) order to one Parquet file in the trace layout, a row
    group at a time (memory: one row group). `schema`: the file's columns and types."""

    def __init__(self, path: Path, schema: pa.Schema, metadata: dict[bytes, bytes]) -> None:
        import pyarrow.parquet as pq

        self.schema = schema.with_metadata(metadata)
        self.writer = pq.ParquetWriter(path, self.schema, **writer_options(schema))
        self.pending: list[pa.Table] = []
        self.rows = 0

    def write(self, rows: pa.RecordBatch | pa.Table) -> None:
        """Appends rows (the file's columns, in any integer widths that fit)."""
        import pyarrow as pa

        table = pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows
        if table.num_rows:
            self.pending.append(table.select(self.schema.names).cast(self.schema))
            self.rows += table.num_rows
        if self.rows > ROW_GROUP_ROWS:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        import pyarrow as pa

        table = pa.concat_tables(self.pending)
        cuts = group_cuts(table.column("rank").to_numpy(), ROW_GROUP_ROWS)
        keep = cuts if final else cuts[:-1]  # the last group may still grow
        start = 0
        for cut in keep:
            self.writer.write_table(table.slice(start, cut - start), row_group_size=cut - start)
            start = cut
        rest = table.slice(start)
        self.pending = [rest] if rest.num_rows else []
        self.rows = rest.num_rows

    def close(self) -> None:
        if self.rows:
            self._flush(final=True)
        self.writer.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.writer.close()
