"""The results directory: one sub-directory per table, one Parquet file per job/run/flush.

Each writer owns its files (named by a fresh id), so concurrent Slurm jobs never write the
same file and no database file is ever shared between writers.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

from tailcast.paths import results_home
from tailcast.store.parquet_io import write_parquet_atomic
from tailcast.store.schemas import schema_of


class ResultsDir:
    """A results directory (default: `paths.results_home()`)."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else results_home()

    def table_dir(self, table: str) -> Path:
        schema_of(table)  # validates the name
        return self.root / table

    def files(self, table: str) -> list[Path]:
        """Visible (complete) files of a table, sorted by name: in its directory and one
        level below (a sweep keeps its points in `sweep_points/SWEEP_ID/`)."""
        directory = self.table_dir(table)
        if not directory.is_dir():
            return []
        found = [*directory.glob("*.parquet"), *directory.glob("*/*.parquet")]
        return sorted(p for p in found if not p.name.startswith("."))

    def write(
        self,
        table: str,
        data: pa.Table | dict[str, Any] | list[dict[str, Any]],
        name: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> Path:
        """Writes `data` as a new file of `table`; returns its path."""
        stem = name or uuid.uuid4().hex
        return write_parquet_atomic(
            table, data, self.table_dir(table) / f"{stem}.parquet", metadata=metadata
        )
