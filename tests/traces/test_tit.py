"""SimGrid TiT import: the public samples, the per-rank list form, malformed input, fuzz."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tailcast.errors import InputError
from tailcast.store.parquet_io import conform
from tailcast.traces.convert import detect_format, load_trace
from tailcast.traces.info import summarize_table
from tailcast.traces.tit_import import import_tit
from tailcast.traces.validate import validate_table


def _calls(path: Path) -> tuple[int, dict[str, int]]:
    table, meta = import_tit(path)
    info = summarize_table(table, meta)
    return meta.ranks, {op: s.calls for op, s in info.ops.items()}


def test_single_file_samples(shared_data: Path) -> None:
    tit = shared_data / "traces" / "simgrid-tit"
    ranks, calls = _calls(tit / "actions_allgatherv.txt")
    assert ranks == 4 and calls == {"allgatherv": 4, "init": 4, "finalize": 4}
    ranks, calls = _calls(tit / "actions_bcast.txt")
    assert ranks == 3 and calls["bcast"] == 6 and calls["reduce"] == 3
    ranks, calls = _calls(tit / "actions_waitall.txt")
    assert ranks == 3 and calls["irecv"] == 3 and calls["isend"] == 3 and calls["waitall"] == 3


def test_sizes_follow_simgrid_datatypes(shared_data: Path) -> None:
    tit = shared_data / "traces" / "simgrid-tit"
    table, _ = import_tit(tit / "actions_bcast_reduce_datatypes.txt")  # init 1 -> double
    rows = [r for r in table.to_pylist() if r["op"] == "bcast"]
    # "bcast 5e4 1 0": root 1, MPI_DOUBLE; "bcast 5e4 0 3": root 0, MPI_SHORT (2 B)
    assert {(r["root"], r["send_bytes"]) for r in rows} == {(1, 400_000), (0, 100_000)}
    table, _ = import_tit(tit / "actions_alltoallv.txt")  # init without arg -> bytes
    row0 = next(r for r in table.to_pylist() if r["op"] == "alltoallv" and r["rank"] == 0)
    assert row0["send_counts"] == [1, 40, 30] and row0["recv_counts"] == [1, 80, 100]
    assert validate_table(*import_tit(tit / "actions_alltoallv.txt")) == []  # counts pair up


def test_per_rank_directory_and_list(shared_data: Path, tmp_path: Path) -> None:
    tit = shared_data / "traces" / "simgrid-tit"
    ranks, calls = _calls(tit / "ti_traces_32_1")
    assert ranks == 32
    assert calls == {"allreduce": 192, "alltoall": 160, "alltoallv": 64, "barrier": 512,
                     "bcast": 288, "finalize": 32, "gather": 32, "init": 32}  # fmt: skip
    table, meta = import_tit(tit / "ti_traces_32_1")
    assert meta.unsupported == {"comm_size": 480}  # SimGrid no-ops are reported, not dropped
    assert validate_table(table, meta) == []
    index = tmp_path / "list.txt"
    index.write_text(f"{tit / 'actions0.txt'}\n{tit / 'actions1.txt'}\n")
    assert detect_format(index) == "tit"
    table, meta = load_trace(index)
    assert meta.ranks == 2 and table.num_rows == 11
    found = validate_table(table, meta)  # messages match; SimGrid's sample never waits
    assert [(v.rank, v.op, v.kind) for v in found] == [(1, "isend", "request error")]


def test_garbage_line_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("0 init\n0 send 1 zero 1e6\n1 init\n")
    with pytest.raises(InputError) as err:
        import_tit(bad)
    assert err.value.line == 2 and "bad.txt" in str(err.value)
    bad.write_text("0 init\nrank0 init\n")
    with pytest.raises(InputError, match=":2:"):
        import_tit(bad)


_ACTIONS = ["init", "finalize", "send", "isend", "recv", "irecv", "wait", "waitall", "bcast",
            "alltoallv", "compute", "gatherv", "bogus", "reduce"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-1, 3),
            st.sampled_from(_ACTIONS),
            st.lists(st.sampled_from(["0", "1", "2", "1e3", "-4", "x", "7.5", "99"]), max_size=8),
        ),
        max_size=20,
    )
)
def test_fuzz_tit_reader(tmp_path_factory: pytest.TempPathFactory, lines: list) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "t.txt"
    path.write_text("\n".join(f"{r} {a} {' '.join(args)}" for r, a, args in lines))
    try:
        table, meta = import_tit(path)
    except InputError as err:
        assert str(path) in str(err)
        return
    validate_table(table, meta)  # must not crash on anything the reader accepted


def _reference(path: Path, ranks: int, per_rank_files: list[Path] | None = None):
    """The rows the Python reference parser (tests/traces/tit_reference.py) gives."""
    from tests.traces.tit_reference import TitParser

    parser = TitParser(ranks)
    files = per_rank_files or [path]
    for index, file in enumerate(files):
        for lineno, raw in enumerate(file.read_text().splitlines(), 1):
            parser.parse_line(raw, file, lineno, index if per_rank_files else None)
    table, unsupported = parser.result()
    return table, dict(unsupported)


def _same_rows(native, reference) -> None:
    key = [("rank", "ascending"), ("seq", "ascending")]
    got = conform("traces", native).sort_by(key)
    want = conform("traces", reference).sort_by(key)
    assert got.to_pylist() == want.to_pylist()


def test_native_parser_equals_the_reference_on_public_traces(shared_data: Path) -> None:
    tit = shared_data / "traces" / "simgrid-tit"
    for path in sorted(tit.glob("*.txt")):
        if path.name.startswith("actions") and path.name[7:8].isdigit():
            continue  # actions0/1.txt are one rank each of a list-form trace
        table, meta = import_tit(path)
        want, unsupported = _reference(path, meta.ranks)
        _same_rows(table, want)
        assert meta.unsupported == unsupported, path.name
    per_rank = tit / "ti_traces_32_1"
    table, meta = import_tit(per_rank)
    from tailcast.traces.tit_import import open_tit

    files = open_tit(per_rank).files
    want, unsupported = _reference(per_rank, 32, files)
    _same_rows(table, want)
    assert meta.unsupported == unsupported


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.sampled_from([*_ACTIONS, "test", "waitall", "allgatherv", "scatterv", "sleep"]),
            st.lists(st.sampled_from(["0", "1", "2", "1e3", "3", "2.5", "8", "1"]), max_size=9),
        ),
        max_size=30,
    )
)
def test_native_parser_equals_the_reference(
    tmp_path_factory: pytest.TempPathFactory, lines: list
) -> None:
    """Every line both parsers accept gives the same row; a line one rejects, both do."""
    path = tmp_path_factory.mktemp("diff") / "t.txt"
    path.write_text("\n".join(f"{r} {a} {' '.join(args)}" for r, a, args in lines))
    try:
        want, unsupported = _reference(path, max(r for r, _, _ in lines) + 1 if lines else 1)
    except InputError as err:
        with pytest.raises(InputError) as native:
            import_tit(path)
        assert native.value.line == err.line
        return
    if not lines:
        return
    table, meta = import_tit(path)
    _same_rows(table, want)
    assert meta.unsupported == unsupported


@pytest.mark.parametrize("source", ["ti_traces_32_1", "actions_alltoallv.txt", "actions_bcast.txt"])
def test_native_conversion_writes_the_same_rows(
    shared_data: Path, tmp_path: Path, source: str
) -> None:
    """The native converter's file, read by pyarrow and by DuckDB, holds the rows the
    table import gives (per-rank files stream; a single file is sorted by rank)."""
    import duckdb
    import pyarrow.parquet as pq

    from tailcast.traces.convert import convert
    from tailcast.traces.io import read_trace

    path = shared_data / "traces" / "simgrid-tit" / source
    out = tmp_path / "t.parquet"
    chunks: list[int] = []
    meta = convert(path, out, progress=chunks.append)
    table, meta2 = read_trace(out)
    want, want_meta = import_tit(path)
    _same_rows(table, want)
    assert meta2 == meta == want_meta
    assert sum(chunks) == table.num_rows
    assert str(pq.read_schema(out).field("rank").type) == "int8"  # 32 ranks or fewer
    rows = duckdb.sql(f"SELECT count(*), sum(send_bytes) FROM '{out}'").fetchall()[0]
    assert rows == (want.num_rows, sum(v or 0 for v in want.column("send_bytes").to_pylist()))


def test_native_conversion_names_file_and_line(tmp_path: Path) -> None:
    from tailcast.traces.convert import convert

    bad = tmp_path / "bad.txt"
    bad.write_text("0 init\n0 send 1 zero 1e6\n1 init\n")
    with pytest.raises(InputError) as err:
        convert(bad, tmp_path / "out.parquet")
    assert err.value.line == 2 and "bad.txt" in str(err.value)
    assert not (tmp_path / "out.parquet").exists()  # no partial file


def test_tit_columns_follow_the_trace_schema() -> None:
    from tailcast.store.schemas import TRACE
    from tailcast.traces.layout import REQUIRED
    from tailcast.traces.tit_source import TIT_COLUMNS

    order = [f.name for f in TRACE]
    assert sorted(TIT_COLUMNS, key=order.index) == list(TIT_COLUMNS)
    assert {f.name for f in TRACE if not f.nullable} == REQUIRED


def test_native_conversion_reads_the_same_natively_with_pyarrow_and_duckdb(
    tmp_path: Path,
) -> None:
    """A halo trace in per-rank files (bench/tit_trace.py's shape): its file mixes zstd
    chunks, chunks too small for zstd stored uncompressed, and t_end_ns pages that reuse
    t_start_ns's compressed bytes. The native reader, pyarrow and DuckDB read the same rows."""
    import duckdb
    import pyarrow.parquet as pq

    from tailcast import _core
    from tailcast.traces.convert import convert
    from tests.replay.test_ingest import reference
    from tests.replay.test_native_reader import _same

    ranks, listed = 4, []
    for rank in range(ranks):
        left, right = (rank - 1) % ranks, (rank + 1) % ranks
        step = [
            "compute 1e6", f"irecv {left} 1 8192", f"irecv {right} 2 8192",
            f"isend {right} 1 8192", f"isend {left} 2 8192", "waitall",
        ]  # fmt: skip
        lines = ["init"] + step * 3000 + ["allreduce 1024 0", "finalize"]
        path = tmp_path / f"rank{rank}.txt"
        path.write_text("".join(f"{rank} {line}\n" for line in lines))
        listed.append(f"{path.name}\n")
    index = tmp_path / "trace.tit"
    index.write_text("".join(listed))
    out = tmp_path / "t.parquet"
    convert(index, out)
    footer = pq.ParquetFile(out).metadata
    codecs = {
        footer.row_group(g).column(c).path_in_schema: footer.row_group(g).column(c).compression
        for g in range(footer.num_row_groups)
        for c in range(footer.num_columns)
    }
    assert codecs["rank"] == "UNCOMPRESSED" and codecs["t_end_ns"] == "ZSTD"
    table = pq.read_table(out)
    assert table.column("t_end_ns").equals(table.column("t_start_ns"))
    _same(_core.TraceFile(out).load().finish(), reference(table))
    got = duckdb.sql(f"SELECT count(*), sum(t_end_ns), sum(request) FROM '{out}'").fetchall()
    want = (table.num_rows, sum(table.column("t_end_ns").to_pylist()),
            sum(v or 0 for v in table.column("request").to_pylist()))  # fmt: skip
    assert got[0] == want
