"""Trace ingestion in the binding (`_core.TraceFile`: its load, its layout scan and the rank
feeder of a streamed replay): the converted columns equal a row-by-row reading of the TRACE
null rules, whatever the row groups, encodings, decoding passes or absent columns of the
file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tailcast import _core
from tailcast.errors import InputError
from tailcast.replay.columns import SAME, EngineColumns, normalise_op, op_code_table
from tailcast.replay.fabric import load_fabric
from tailcast.replay.rank_reader import scan_trace
from tailcast.replay.run import load_columns, replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.replay.stream import stream_replay
from tailcast.store.schemas import TRACE
from tailcast.traces.io import TraceMeta, write_trace

# (column, dtype, null value) as the engine reads them (tailcast.replay.columns docstring).
SCALARS = [
    ("rank", np.uint32, 0), ("seq", np.int64, 0), ("peer", np.int32, -2),
    ("root", np.int32, -1), ("send_bytes", np.int64, 0), ("recv_bytes", np.int64, 0),
    ("tag", np.int32, 0), ("comm", np.int32, 0), ("request", np.int64, -1),
    ("t_start_ns", np.int64, 0), ("t_end_ns", np.int64, 0), ("iteration", np.int32, -1),
    ("recv_peer", np.int32, SAME), ("recv_tag", np.int32, SAME),
]  # fmt: skip
LISTS = ["requests", "send_counts", "recv_counts"]


def reference(table: pa.Table) -> dict[str, np.ndarray[Any, Any]]:
    """Row by row, from Python values: what the conversion must give."""
    rows = table.to_pylist()
    codes = op_code_table()
    out: dict[str, np.ndarray[Any, Any]] = {}
    for name, dtype, fill in SCALARS:
        values = [fill if r.get(name) is None else r[name] for r in rows]
        out[name] = np.array(values, dtype=np.int64).astype(dtype)
    out["op"] = np.array([codes.get(normalise_op(r["op"]), 0) for r in rows], dtype=np.uint8)
    for name in LISTS:
        lists = [[0 if v is None else v for v in (r.get(name) or [])] for r in rows]
        values = [v for items in lists for v in items]
        offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
        out[f"{name}_offsets"] = offsets if values else np.zeros(0, np.int64)
        out[f"{name}_values"] = np.array(values, dtype=np.int64)
    return out


def messy_table() -> pa.Table:
    """Nulls everywhere, int64 where TRACE has int32, mixed op spellings, odd lists."""
    n = 12
    ops = ["MPI_Isend", " Irecv ", "waitall", "bogus", "allreduce", "comm_split"] * 2
    return pa.table(
        {
            "rank": pa.array([0] * 6 + [1] * 6, pa.int64()),
            "seq": pa.array(range(n), pa.int64()),
            "op": pa.array(ops, pa.string()),
            "peer": pa.array([1, -1, None, None, None, None] * 2, pa.int64()),
            "root": pa.array([None] * n, pa.int32()),
            "send_bytes": pa.array([8, None, 0, 0, 4, 0] * 2, pa.int32()),
            "tag": pa.array([3, None] * 6, pa.int16()),
            "request": pa.array([5, 6, None, None, None, None] * 2, pa.int64()),
            "t_start_ns": pa.array(range(0, 10 * n, 10), pa.int64()),
            "t_end_ns": pa.array(range(5, 10 * n, 10), pa.uint32()),
            "iteration": pa.array([None, 0] * 6, pa.int32()),
            "recv_peer": pa.array([None] * 5 + [1] + [None] * 6, pa.int32()),
            "requests": pa.array([None, [], [5, None], None, [7], None] * 2, pa.list_(pa.int64())),
            "send_counts": pa.array([None] * n, pa.list_(pa.int64())),
            "recv_counts": pa.array([[1, 2], None] * 6, pa.large_list(pa.int32())),
            "new_comm": pa.array([None] * 5 + [4] + [None] * 5 + [4], pa.int32()),
            "comm_members": pa.array([None] * 5 + [[1, 0]] + [None] * 5 + [[0, 1]]),
        }
    )


def _written(table: pa.Table, path: Path, **options: Any) -> Path:
    pq.write_table(table, path, **options)
    return path


def _assert_same(got: dict[str, np.ndarray[Any, Any]], want: dict[str, np.ndarray[Any, Any]]):
    for name, values in want.items():
        assert got[name].dtype == values.dtype, name
        assert np.array_equal(got[name], values), name


@pytest.mark.parametrize("group_rows", [1, 5, 7, 100])
@pytest.mark.parametrize("dictionary", [True, False])
def test_conversion_follows_the_null_rules_for_any_row_groups_and_encodings(
    tmp_path: Path, group_rows: int, dictionary: bool
) -> None:
    table = messy_table()
    path = _written(table, tmp_path / "messy.parquet", row_group_size=group_rows,
                    use_dictionary=dictionary)  # fmt: skip
    _assert_same(EngineColumns.of_file(path).arrays(), reference(table))


def test_columns_set_only_after_the_first_pass_keep_their_rows(tmp_path: Path) -> None:
    """The loader decodes 65,536 rows at a time: an optional column (dtype_bytes) and a list
    column (requests) null or empty in every row of the first pass and set in the second
    give the same columns as a row-by-row reading."""
    n = 70_000
    late = n - 3
    table = pa.table(
        {
            "rank": pa.array([0] * n, pa.int32()),
            "seq": pa.array(range(n), pa.int64()),
            "op": pa.array(["isend"] * late + ["allreduce", "waitall", "waitall"]),
            "dtype_bytes": pa.array([None] * late + [8, None, None], pa.int32()),
            "requests": pa.array([[]] * (late + 1) + [[3, 4], None], pa.list_(pa.int64())),
        }
    )
    path = _written(table, tmp_path / "late.parquet", row_group_size=20_000)
    got = EngineColumns.of_file(path).arrays()
    _assert_same(got, reference(table))
    want_dtype = np.full(n, SAME, dtype=np.int32)
    want_dtype[late] = 8
    _assert_same(got, {"dtype_bytes": want_dtype})
    assert got["commutative"].size == 0  # absent: empty, read as SAME throughout


def test_unknown_ops_and_declared_communicators(tmp_path: Path) -> None:
    # The allreduce rows (4 and 10) on communicator 4, the others on 0 or null.
    comm = pa.array([0, None, 0, 0, 4, 0] * 2, pa.int32())
    path = _written(messy_table().append_column("comm", comm), tmp_path / "messy.parquet",
                    row_group_size=5)  # fmt: skip
    columns = EngineColumns.of_file(path)
    assert columns.unknown_ops == {"bogus": 2}
    assert columns.comms == {4: [1, 0]}  # the first declaration wins
    scan = _core.TraceFile(path).scan()
    assert scan.unknown_ops() == {"bogus": 2}
    assert scan.declared_comms() == [(4, [1, 0])]
    assert scan.counts() == [6, 6]
    assert scan.used_comms() == {4: [0, 1]}  # collectives only


def test_absent_columns_read_as_all_null(tmp_path: Path) -> None:
    table = messy_table().drop_columns(["tag", "peer", "iteration", "requests", "recv_counts"])
    path = _written(table, tmp_path / "narrow.parquet")
    got = EngineColumns.of_file(path).arrays()
    _assert_same(got, reference(table))
    assert got["peer"].tolist() == [-2] * 12 and got["requests_offsets"].size == 0


def test_unusable_column_types_and_negative_ranks_are_input_errors(tmp_path: Path) -> None:
    bad = messy_table().set_column(0, "rank", pa.array([0] * 11 + [-1], pa.int32()))
    path = write_trace(bad, tmp_path / "negative.parquet", TraceMeta(ranks=2))
    with pytest.raises(InputError, match=r"negative\.parquet.*negative rank at row 0"):
        load_columns(path)
    # Columns of the wrong kind, in a file with a trace's metadata (write_trace would cast).
    table = pq.read_table(write_trace(messy_table(), tmp_path / "good.parquet", TraceMeta(ranks=2)))
    kinds = {
        "seq": (pa.array(["1"] * 12), "column seq holds strings or lists, expected integers"),
        "op": (pa.array(range(12)), "column op: expected strings, got a number"),
        "requests": (pa.array(range(12)), "column requests is not a list of integers"),
    }
    for name, (values, message) in kinds.items():
        odd = table.set_column(table.column_names.index(name), name, values)
        path = _written(odd, tmp_path / f"{name}.parquet")
        with pytest.raises(InputError, match=rf"{name}\.parquet: {message}"):
            load_columns(path)


def _tiny_groups_trace(tmp: Path, group_rows: int) -> Path:
    """A halo exchange (isend/irecv/waitall, 4 ranks) + allreduce on comm 0 and a
    sub-communicator, written with small row groups so statistics cover many cases:
    constant rank/op/tag columns, all-null columns, one-row groups."""
    rows: list[dict[str, Any]] = []
    ranks = 4
    for rank in range(ranks):
        seq = 0
        rows.append({"rank": rank, "seq": seq, "op": "init"})
        seq += 1
        members = [r for r in range(ranks) if r % 2 == rank % 2]
        rows.append({"rank": rank, "seq": seq, "op": "comm_split", "new_comm": 7 + rank % 2,
                     "comm_members": members})  # fmt: skip
        for it in range(6):
            left, right = (rank - 1) % ranks, (rank + 1) % ranks
            for k, (op, peer) in enumerate(
                [("irecv", left), ("irecv", right), ("isend", left), ("isend", right)]
            ):
                seq += 1
                rows.append({"rank": rank, "seq": seq, "op": op, "peer": peer, "tag": 1,
                             "send_bytes": 64, "recv_bytes": 64, "request": 4 * it + k,
                             "iteration": it})  # fmt: skip
            seq += 1
            rows.append({"rank": rank, "seq": seq, "op": "waitall", "iteration": it,
                         "requests": [4 * it + k for k in range(4)]})  # fmt: skip
            seq += 1
            comm = 0 if it % 2 else 7 + rank % 2
            rows.append({"rank": rank, "seq": seq, "op": "allreduce", "comm": comm,
                         "send_bytes": 8, "recv_bytes": 8, "iteration": it})  # fmt: skip
        rows.append({"rank": rank, "seq": seq + 1, "op": "finalize"})
    table = pa.Table.from_pylist(rows, schema=TRACE)
    path = write_trace(table, tmp / "tiny.parquet", TraceMeta(ranks=ranks))
    table = pq.read_table(path)
    pq.write_table(table, path, row_group_size=group_rows)
    return path


@pytest.mark.parametrize("group_rows", [1, 7, 1000])
def test_row_group_statistics_change_nothing(tmp_path: Path, group_rows: int) -> None:
    path = _tiny_groups_trace(tmp_path, group_rows)
    want = reference(pq.read_table(path))
    columns = load_columns(path)
    _assert_same(columns.arrays(), want)
    assert columns.comms == {7: [0, 2], 8: [1, 3]}
    layout = scan_trace(path)
    assert layout.starts == [0, 39, 78, 117, 156]
    assert layout.comms == {7: [0, 2], 8: [1, 3], 0: [0, 1, 2, 3]}
    fabric, options = load_fabric("crossbar"), ReplayOptions()
    whole = replay_trace(path, fabric, options)
    for chunk_rows in (2, 3, 64):
        streamed = stream_replay(path, fabric, options, keep_ops=False, chunk_rows=chunk_rows)
        assert streamed.total_time_ns == whole.total_time_ns
        assert np.array_equal(streamed.iteration_latency_us, whole.iteration_latency_us)


def test_scan_names_the_first_unsorted_row(tmp_path: Path) -> None:
    table = messy_table().set_column(0, "rank", pa.array([0] * 6 + [1] * 3 + [0] * 3))
    path = tmp_path / "unsorted.parquet"
    pq.write_table(table, path, row_group_size=4)
    with pytest.raises(InputError, match=r"not sorted by rank \(row 9\)"):
        scan_trace(path)


def test_stream_names_the_file_and_rows_of_an_unusable_column(tmp_path: Path) -> None:
    path = _tiny_groups_trace(tmp_path, 1000)
    table = pq.read_table(path)
    seq = table.column("seq").cast(pa.float64()).to_pylist()
    odd = table.set_column(1, "seq", pa.array([str(v) for v in seq]))
    bad = tmp_path / "string_seq.parquet"
    pq.write_table(odd, bad)
    with pytest.raises(InputError, match=r"string_seq\.parquet: rows 0\.\.38: column seq"):
        stream_replay(bad, load_fabric("ideal"), ReplayOptions(), keep_ops=False)
