"""The results directory: one sub-directory per table, one Parquet file per job/run/flush.

Each writer owns its files (named by a fresh id), so concurrent Slurm jobs never write the
same file and no database file is ever shared between writers.

One result often spans several tables (a run's `samples` and its `runs` row; a replay's
`replay_ops` … and its `replays` row). Its parts are written first, each naming in its
metadata the record that completes it (`tailcast.part_of = "runs/<id>"`: table and file
stem), and that record last: the catalog shows a part only once its record exists, so a
writer killed between the two (kill -9, a node lost) leaves nothing visible.
`all_or_nothing` also removes the parts again when the writer fails or is interrupted
before the record is written.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tailcast import interrupts
from tailcast.paths import results_home
from tailcast.store.footer import PART_OF_KEY, REQUIRED_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa


class ResultsDir:
    """A results directory (default: `paths.results_home()`)."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else results_home()
        self._groups: list[list[Path]] = []

    def table_dir(self, table: str) -> Path:
        if table not in REQUIRED_COLUMNS:  # every table (store.schemas.TABLES)
            raise KeyError(f"unknown table {table!r}; tables: {', '.join(REQUIRED_COLUMNS)}")
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
        part_of: str | None = None,
    ) -> Path:
        """Writes `data` as a new file of `table`; returns its path. `part_of`
        ("table/stem") names the record written after it that completes it."""
        from tailcast.store.parquet_io import write_parquet_atomic  # pyarrow: only to write

        stem = name or uuid.uuid4().hex
        meta = dict(metadata or {})
        if part_of is not None:
            self.table_dir(part_of.partition("/")[0])  # validates the record's table name
            meta[PART_OF_KEY] = part_of
        path = self.table_dir(table) / f"{stem}.parquet"
        # Counted before it exists: a signal between the rename and the end of the write
        # would otherwise leave the file in place, unknown to `all_or_nothing` (CI: a `runs`
        # record outlived the `samples` its group removed).
        self.adopt(path)
        return write_parquet_atomic(table, data, path, metadata=meta)

    def adopt(self, path: Path) -> None:
        """Counts a file written by other means as part of the open `all_or_nothing`: before
        it is renamed into place, so that no interruption falls between the two."""
        if self._groups:
            self._groups[-1].append(path)

    @contextlib.contextmanager
    def all_or_nothing(self) -> Iterator[list[Path]]:
        """Files written inside the block are removed again when it ends with an exception
        or an interruption (KeyboardInterrupt, SIGTERM): a result is stored whole or not
        at all. Yields the list of files written so far."""
        written: list[Path] = []
        self._groups.append(written)
        try:
            yield written
            interrupts.raise_pending()  # a signal whose raise a finaliser swallowed
        except BaseException:
            for path in reversed(written):  # the completing record (written last) first
                with contextlib.suppress(OSError):
                    path.unlink()
            raise
        finally:
            self._groups.pop()
            if self._groups:
                self._groups[-1].extend(written)
