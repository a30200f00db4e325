"""The footer of a stored Parquet file, read without pyarrow (`_core.parquet_footer`): its
table, schema version, rows and columns, checked before anything reads the data.

Listing the store (`db tables`) and opening a trace for replay need only this, so they
do not pay pyarrow's start-up (~0.2 CPU-s, ~50 MB).
"""

from __future__ import annotations

from pathlib import Path

from tailcast import _core
from tailcast.errors import InputError

SCHEMA_VERSION = 2  # see store.schemas
META_TABLE = b"tailcast.table"
META_SCHEMA_VERSION = b"tailcast.schema_version"
# A part of a result names the record that completes it, "table/stem" (store/results.py).
PART_OF_KEY = "part_of"
META_PART_OF = b"tailcast." + PART_OF_KEY.encode()

# The columns a file of each table must hold: the non-nullable fields of store.schemas
# (a test checks they agree), kept here so a footer check imports no pyarrow.
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "snapshots": ("snapshot_id", "taken_at", "job_id"),
    "utilisation": ("snapshot_id", "taken_at"),
    "runs": ("run_id",),
    "samples": ("run_id", "iteration"),
    "warmup_samples": ("run_id", "iteration"),
    "osu_results": ("run_id",),
    "traces": ("rank", "seq", "op"),
    "replays": ("replay_id",),
    "replay_ops": ("replay_id",),
    "replay_iterations": ("replay_id",),
    "replay_messages": ("replay_id",),
    "fabric_stats": ("replay_id",),
    "lab_runs": ("run_id",),
    "sweep_points": ("sweep_id", "point"),
    "noise_profiles": ("profile_id", "node"),
}


def file_metadata(table_name: str, extra: dict[str, str] | None = None) -> dict[bytes, bytes]:
    """The key-value metadata of a stored file: its table, schema version and `extra`
    (keys prefixed `tailcast.`)."""
    meta = {META_TABLE: table_name.encode(), META_SCHEMA_VERSION: str(SCHEMA_VERSION).encode()}
    for key, value in (extra or {}).items():
        meta[f"tailcast.{key}".encode()] = value.encode()
    return meta


class Footer:
    """A file's rows, key-value metadata and column names. (A plain class: a dataclass or
    NamedTuple would import dataclasses or typing, over 20 M instructions each of the
    start-up of `trace convert`, which reads no footer but imports this module.)"""

    __slots__ = ("metadata", "names", "num_rows")

    def __init__(self, num_rows: int, metadata: dict[bytes, bytes], names: list[str]) -> None:
        self.num_rows = num_rows
        self.metadata = metadata
        self.names = names


def read_footer(path: Path) -> Footer:
    """The footer of any Parquet file (InputError naming the file otherwise)."""
    try:
        rows, kv, names = _core.parquet_footer(Path(path))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a readable Parquet file ({exc})") from exc
    metadata = {k.encode(): v.encode() for k, v in kv.items()}
    return Footer(num_rows=rows, metadata=metadata, names=names)


def check_file(path: Path, expected_table: str | None = None) -> Footer:
    """Reads a Parquet footer and checks it is a tailcast file of the expected table and a
    readable schema version. Raises InputError naming the file otherwise."""
    footer = read_footer(path)
    kv = footer.metadata
    table = kv.get(META_TABLE, b"").decode(errors="replace")
    if not table:
        raise InputError(path, "Parquet file was not written by tailcast (no tailcast.table)")
    if expected_table is not None and table != expected_table:
        raise InputError(path, f"holds table {table!r}, expected {expected_table!r}")
    if table not in REQUIRED_COLUMNS:
        raise InputError(path, f"holds unknown table {table!r}")
    try:
        version = int(kv.get(META_SCHEMA_VERSION, b"0") or 0)
    except ValueError:
        raise InputError(path, "tailcast.schema_version is not a number") from None
    if version > SCHEMA_VERSION:
        raise InputError(path, f"schema version {version} is newer than this tailcast's")
    have = set(footer.names)
    missing = [name for name in REQUIRED_COLUMNS[table] if name not in have]
    if missing:
        raise InputError(path, f"missing required columns {missing}")
    return footer
