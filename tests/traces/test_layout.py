"""The trace layout (`tailcast.traces.layout`): all-null columns absent, integers narrowed
to what their values need, counters delta-encoded, row groups cut at rank boundaries, and
every reader (pyarrow, DuckDB, the native reader) sees every TRACE column in its type."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tailcast.store import Catalog, ResultsDir
from tailcast.store.schemas import TRACE
from tailcast.traces import layout
from tailcast.traces.io import TraceMeta, iter_batches, read_trace, write_trace
from tailcast.traces.synth.osu import osu_trace


def test_layout_of_a_written_trace(tmp_path: Path) -> None:
    table, meta = osu_trace("allreduce", 8, [8, 1 << 20], 20)
    path = write_trace(table, tmp_path / "t.parquet", meta)
    schema = pq.read_schema(path)
    absent = {f.name for f in TRACE} - set(schema.names)
    assert {"root", "recv_peer", "comm_members"} <= absent  # null in every row
    for name in absent:
        assert table.column(name).null_count == table.num_rows, name
    assert schema.field("rank").type == pa.int8()  # 8 ranks
    assert schema.field("send_bytes").type == pa.int32()  # up to 1 MiB
    md = pq.read_metadata(path)
    encodings = {
        md.row_group(0).column(i).path_in_schema: md.row_group(0).column(i).encodings
        for i in range(md.num_columns)
    }
    assert "DELTA_BINARY_PACKED" in encodings["seq"]
    assert "RLE_DICTIONARY" in encodings["send_bytes"]
    back, meta2 = read_trace(path)
    assert back.schema == TRACE and meta2 == meta
    assert back.equals(table.sort_by([("rank", "ascending"), ("seq", "ascending")]))
    batch = next(iter_batches(path, ["rank", "root", "iteration"]))
    assert batch.schema == pa.schema([TRACE.field(n) for n in ("rank", "root", "iteration")])


@pytest.mark.parametrize(
    ("ranks", "target", "cuts"),
    [
        ([0, 0, 0, 1, 1, 2], 4, [3, 6]),  # cut at the last rank start within 4 rows
        ([0] * 10, 4, [4, 8, 10]),  # one long rank: cut inside it
        ([0, 1, 2, 3, 4, 5, 6], 3, [3, 6, 7]),  # small ranks packed together
        ([0, 0, 1, 1], 10, [4]),
        ([], 4, [0]),
    ],
)
def test_row_groups_end_at_rank_boundaries(ranks: list[int], target: int, cuts: list[int]):
    assert layout.group_cuts(np.array(ranks), target) == cuts


def test_writer_row_groups_start_at_ranks(tmp_path: Path) -> None:
    rows = 3 * layout.ROW_GROUP_ROWS // 2  # per rank: one and a half row groups
    table = pa.table(
        {
            "rank": np.repeat(np.arange(3, dtype=np.int32), rows),
            "seq": np.tile(np.arange(rows, dtype=np.int64), 3),
            "op": pa.array(["init"] * 3 * rows),
        }
    )
    path = write_trace(table, tmp_path / "t.parquet", TraceMeta(ranks=3))
    md = pq.read_metadata(path)
    starts = np.cumsum([0] + [md.row_group(g).num_rows for g in range(md.num_row_groups)])
    for rank in range(3):
        assert rank * rows in starts  # every rank starts a row group
    assert max(md.row_group(g).num_rows for g in range(md.num_row_groups)) <= (
        layout.ROW_GROUP_ROWS
    )


def test_duckdb_views_show_absent_columns_as_typed_nulls(results_home: Path) -> None:
    table, meta = osu_trace("bcast", 4, [64], 2)
    write_trace(table, ResultsDir().table_dir("traces") / "abc.parquet", meta)
    with Catalog() as cat:
        row = cat.rows(
            "SELECT count(*) AS n, count(recv_peer) AS roots, any_value(typeof(rank)) AS t, "
            "any_value(typeof(comm_members)) AS m, any_value(trace_id) AS id FROM traces"
        )[0]
    assert row == {"n": table.num_rows, "roots": 0, "t": "INTEGER", "m": "INTEGER[]", "id": "abc"}


def test_footer_constants_agree_with_the_schemas() -> None:
    from tailcast.store import footer, schemas

    required = {
        name: tuple(f.name for f in schema if not f.nullable)
        for name, schema in schemas.TABLES.items()
    }
    assert required == footer.REQUIRED_COLUMNS
    assert list(footer.REQUIRED_COLUMNS) == list(schemas.TABLES)
