"""Which columns of a Parquet row group must be decoded, from the row group's statistics.

Decoding a column chunk costs pyarrow tens of microseconds even when it holds one row,
and traces carry many columns that are null in most calls (root, recv_peer, new_comm, …)
or one value for long stretches (rank, comm, tag). A column whose statistics say every
value is null is left out (the binding fills its null value); one with no nulls and
min == max is passed as a constant (`_core` `constants=`). List columns are always
decoded: their statistics cannot tell a null list from a list of nulls.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tailcast.errors import InputError

LIST_COLUMNS = frozenset({"requests", "send_counts", "recv_counts", "comm_members"})
Constant = int | str


@dataclass(frozen=True)
class GroupPlan:
    rows: int
    read: list[str]
    constants: dict[str, Constant] = field(default_factory=dict)


def _constant(stats: pq.Statistics | None, rows: int) -> tuple[bool, Constant | None]:
    """(every value null, the one value when there are no nulls and min == max)."""
    if stats is None or not stats.has_null_count:
        return False, None
    if stats.null_count == rows:
        return True, None
    if stats.null_count or not stats.has_min_max:
        return False, None
    lo, hi = stats.min, stats.max
    if type(lo) in (int, str) and lo == hi:
        return False, lo
    return False, None


class RowGroupStats:
    """What the statistics of each row group say about its flat columns (computed once
    per row group: the scan and the reader of a streaming replay share it)."""

    def __init__(self, metadata: pq.FileMetaData) -> None:
        self.metadata = metadata
        self.leaf: dict[str, int] = {}
        if metadata.num_row_groups:
            first = metadata.row_group(0)
            paths = (first.column(i).path_in_schema for i in range(first.num_columns))
            self.leaf = {p: i for i, p in enumerate(paths) if "." not in p}
        self.names = set(metadata.schema.to_arrow_schema().names)
        self.group_rows = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
        self._known: dict[int, dict[str, tuple[bool, Constant | None]]] = {}

    def rows(self, g: int) -> int:
        return int(self.group_rows[g])

    def column(self, g: int, name: str) -> tuple[bool, Constant | None]:
        """(every value null, the one value) of a flat column in row group `g`."""
        known = self._known.get(g)
        if known is None:
            group, rows = self.metadata.row_group(g), self.rows(g)
            known = self._known[g] = {}
            for flat, i in self.leaf.items():
                column = group.column(i)
                known[flat] = _constant(column.statistics if column.is_stats_set else None, rows)
        return known[name]


class RowGroupPlans:
    """Per row group: the `wanted` columns to decode and the constant ones."""

    def __init__(self, stats: RowGroupStats, wanted: Sequence[str]) -> None:
        self.stats = stats
        self.wanted = [name for name in wanted if name in stats.names]

    def plan(self, g: int) -> GroupPlan:
        rows = self.stats.rows(g)
        read: list[str] = []
        constants: dict[str, Constant] = {}
        skip_members = False
        for name in self.wanted:
            if name in LIST_COLUMNS or name not in self.stats.leaf or not rows:
                if not (name == "comm_members" and skip_members) and rows:
                    read.append(name)
                continue
            null, value = self.stats.column(g, name)
            if null:
                skip_members |= name == "new_comm"  # no declaration, members unused
            elif value is not None and name != "new_comm":
                constants[name] = value
            else:
                read.append(name)
        return GroupPlan(rows, read, constants)


def row_count_batch(rows: int) -> pa.RecordBatch:
    """A batch of `rows` rows without data (for a row group with nothing to decode)."""
    return pa.record_batch([pa.nulls(rows)], names=["_rows"])


def planned_batches(
    path: Path, pf: pq.ParquetFile, plans: RowGroupPlans, g: int, batch_rows: int
) -> Iterator[tuple[pa.RecordBatch, dict[str, Constant]]]:
    """Row group `g` in batches of at most `batch_rows` rows, only its planned columns."""
    plan = plans.plan(g)
    if not plan.read:
        for start in range(0, plan.rows, batch_rows):
            yield row_count_batch(min(batch_rows, plan.rows - start)), plan.constants
        return
    try:
        for batch in pf.iter_batches(
            batch_rows, row_groups=[g], columns=plan.read, use_threads=False
        ):
            yield batch, plan.constants
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Parquet data in row group {g} ({exc})") from exc
