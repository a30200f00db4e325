"""Reading and writing tailcast Parquet traces (one file per trace, one row per MPI call).

File metadata (Parquet key-value, prefixed `tailcast.`): ranks, application, source_format,
clock, and `unsupported` (JSON {call name: count} of calls an importer could not map).
Rows are sorted by (rank, seq) and written in bounded row groups so the replay engine can
stream a trace far larger than memory (`iter_batches`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError
from tailcast.store.parquet_io import check_file, conform, write_parquet_atomic
from tailcast.traces.schema import sorted_trace

TABLE = "traces"
ROW_GROUP_ROWS = 256 * 1024
_PREFIX = "tailcast."


@dataclass
class TraceMeta:
    """What a trace file says about itself."""

    ranks: int
    application: str = ""
    source_format: str = "tailcast"
    clock: str = "unknown"  # e.g. CLOCK_MONOTONIC ns, synthetic, otf2 ticks→ns
    unsupported: dict[str, int] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)

    def to_kv(self) -> dict[str, str]:
        kv = dict(self.extra)
        kv.update(
            ranks=str(self.ranks),
            application=self.application,
            source_format=self.source_format,
            clock=self.clock,
            unsupported=json.dumps(self.unsupported, sort_keys=True),
        )
        return kv

    @classmethod
    def from_kv(cls, path: Path, kv: dict[bytes, bytes]) -> TraceMeta:
        # Foreign or damaged bytes decode with U+FFFD: the checks below then name the key.
        text = {
            k.decode(errors="replace")[len(_PREFIX) :]: v.decode(errors="replace")
            for k, v in kv.items()
            if k.startswith(_PREFIX.encode())
        }
        try:
            ranks = int(text.pop("ranks"))
            unsupported = {
                str(k): int(v) for k, v in json.loads(text.pop("unsupported", "{}")).items()
            }
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise InputError(
                path, f"trace metadata lacks valid ranks/unsupported ({exc})"
            ) from None
        meta = cls(
            ranks=ranks,
            application=text.pop("application", ""),
            source_format=text.pop("source_format", ""),
            clock=text.pop("clock", "unknown"),
            unsupported=unsupported,
        )
        for internal in ("table", "schema_version"):
            text.pop(internal, None)
        meta.extra = text
        return meta


def write_trace(table: pa.Table, path: Path, meta: TraceMeta) -> Path:
    """Writes `table` (TRACE columns; missing nullable ones become null) atomically."""
    data = sorted_trace(conform(TABLE, table))
    return write_parquet_atomic(
        TABLE, data, Path(path), metadata=meta.to_kv(), row_group_size=ROW_GROUP_ROWS
    )


def read_meta(path: Path) -> TraceMeta:
    """The metadata of a trace file, after checking it is a tailcast trace."""
    fmeta = check_file(Path(path), TABLE)
    return TraceMeta.from_kv(Path(path), fmeta.metadata or {})


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
    """Streams the trace in (rank, seq) order, one bounded batch at a time."""
    path = Path(path)
    read_meta(path)
    try:
        with pq.ParquetFile(path) as pf:
            yield from pf.iter_batches(batch_size=batch_rows, columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data ({exc})") from exc
