"""A streamed replay's per-operation times (`replay_ops` rows) written to one Parquet file a
row group at a time, atomically: the file appears complete or not at all."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import NDArray

from tailcast.replay.columns import op_code_table
from tailcast.store.parquet_io import atomic_path, file_metadata, write_error
from tailcast.store.schemas import PART_OF_KEY, REPLAY_OPS

OPS_ROW_GROUP = 1 << 18


class OpsWriter:
    """replay_ops rows to one Parquet file, a row group at a time."""

    def __init__(self, writer: pq.ParquetWriter, replay_id: str, path: Path) -> None:
        self.writer, self.replay_id, self.path = writer, replay_id, path
        names = {code: name for name, code in op_code_table().items()}
        self.names = pa.array([names.get(c, "other") for c in range(256)], pa.string())
        self.parts: list[dict[str, NDArray[Any]]] = []
        self.pending = 0

    def add(self, ops: dict[str, NDArray[Any]], flush: bool = False) -> None:
        if len(ops["seq"]):
            self.parts.append(ops)
            self.pending += len(ops["seq"])
        if self.pending >= OPS_ROW_GROUP or (flush and self.pending):
            self._write()

    def _write(self) -> None:
        cat = {k: np.concatenate([p[k] for p in self.parts]) for k in self.parts[0]}
        n = len(cat["seq"])
        op = pc.take(self.names, pa.array(cat["op"].astype(np.int32)))
        columns = {
            "replay_id": pa.array(np.full(n, self.replay_id, dtype=object), pa.string()),
            "rank": pa.array(cat["rank"].astype(np.int32)),
            "seq": pa.array(cat["seq"]),
            "op": op,
            "sim_start_ns": pa.array(cat["sim_start_ns"]),
            "sim_end_ns": pa.array(cat["sim_end_ns"]),
        }
        # Streamed replays record no per-message fabric details: those columns are null.
        schema = self.writer.schema
        table = pa.table([columns.get(f.name, pa.nulls(n, f.type)) for f in schema], schema=schema)
        try:
            self.writer.write_table(table, row_group_size=OPS_ROW_GROUP)
        except (OSError, pa.ArrowException) as exc:
            raise write_error(self.path, exc) from exc
        self.parts, self.pending = [], 0


@contextlib.contextmanager
def ops_file(path: Path, replay_id: str, part_of: str | None = None) -> Iterator[OpsWriter]:
    """An OpsWriter whose file appears at `path` when the block ends without an error.
    `part_of` ("table/stem"): the record that completes it (store/results.py)."""
    extra = {PART_OF_KEY: part_of} if part_of is not None else None
    schema = REPLAY_OPS.with_metadata(file_metadata("replay_ops", extra))
    in_block = False
    try:
        with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as w:
            in_block = True
            yield OpsWriter(w, replay_id, path)
            in_block = False
    except (OSError, pa.ArrowException) as exc:  # a full disk, a read-only directory, …
        if in_block:  # the caller's own error, not this file's
            raise
        raise write_error(path, exc) from exc
