"""What a results directory holds: per table, its readable files and their row counts
(from the Parquet footers), the files that cannot be used, each with its reason, and the
parts of results whose completing record is not stored (store/results.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tailcast.errors import InputError
from tailcast.store.footer import META_PART_OF, REQUIRED_COLUMNS, Footer, check_file
from tailcast.store.results import ResultsDir


@dataclass
class TableInfo:
    name: str
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    problems: list[InputError] = field(default_factory=list)
    columns: set[str] = field(default_factory=set)  # present in at least one file
    # Parts whose completing record does not exist (yet): not in any view.
    pending: list[Path] = field(default_factory=list)


def _checked(results: ResultsDir, name: str) -> tuple[list[tuple[Path, Footer]], list[InputError]]:
    """The table's files with their checked footers; a corrupt, foreign or misplaced file is
    a problem naming it, never an exception."""
    readable, problems = [], []
    for path in results.files(name):
        try:
            readable.append((path, check_file(path, expected_table=name)))
        except InputError as err:
            problems.append(err)
    return readable, problems


def inventory(results: ResultsDir) -> dict[str, TableInfo]:
    """Every table of the store, in schema order.

    Every table is listed and checked first; a part is shown only when its record is in
    this same listing. A record written after its table was listed (a writer finishing
    meanwhile) then hides its parts too, so a query never sees parts without a record."""
    checked = {name: _checked(results, name) for name in REQUIRED_COLUMNS}
    listed = {(name, path.stem) for name, (readable, _) in checked.items() for path, _ in readable}
    infos = {}
    for name, (readable, problems) in checked.items():
        info = TableInfo(name, problems=problems)
        for path, footer in readable:
            part_of = footer.metadata.get(META_PART_OF)
            if part_of is not None:
                table, _, stem = part_of.decode(errors="replace").partition("/")
                if (table, stem) not in listed:
                    info.pending.append(path)
                    continue
            info.files.append(path)
            info.rows += footer.num_rows
            info.columns.update(footer.names)
        infos[name] = info
    return infos
