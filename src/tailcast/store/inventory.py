"""What a results directory holds: per table, its readable files and their row counts
(from the Parquet footers), and the files that cannot be used, each with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tailcast.errors import InputError
from tailcast.store.footer import REQUIRED_COLUMNS, check_file
from tailcast.store.results import ResultsDir


@dataclass
class TableInfo:
    name: str
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    problems: list[InputError] = field(default_factory=list)
    columns: set[str] = field(default_factory=set)  # present in at least one file


def table_info(results: ResultsDir, name: str) -> TableInfo:
    """The checked files of one table: a corrupt, foreign or misplaced file is a problem
    naming it, never an exception."""
    info = TableInfo(name)
    for path in results.files(name):
        try:
            meta = check_file(path, expected_table=name)
        except InputError as err:
            info.problems.append(err)
            continue
        info.files.append(path)
        info.rows += meta.num_rows
        info.columns.update(meta.names)
    return info


def inventory(results: ResultsDir) -> dict[str, TableInfo]:
    """Every table of the store, in schema order."""
    return {name: table_info(results, name) for name in REQUIRED_COLUMNS}
