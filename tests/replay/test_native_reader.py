"""The native Parquet reader (crates/parquet-lite through `_core.TraceFile`): on any trace
pyarrow can write — codecs, dictionary or plain, delta encodings, page versions, page and
row-group sizes, nulls and lists anywhere — it gives what pyarrow reads, converted by the
TRACE null rules; damaged files are errors naming what is wrong, never a crash."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tailcast import _core
from tailcast.errors import InputError
from tailcast.replay.rank_reader import scan_trace
from tailcast.replay.run import load_columns
from tailcast.store.footer import read_footer
from tests.replay.test_ingest import messy_table, reference

OPS = ["isend", "irecv", "waitall", "allreduce", "MPI_Send", "bogus", "init"]
# Every codec pyarrow writes (lz4: LZ4_RAW).
CODECS = ["zstd", "snappy", "gzip", "lz4", "brotli", "none"]
INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint16(), pa.uint32()]


@st.composite
def traces(draw: st.DrawFn) -> pa.Table:
    """A (rank, seq)-sorted trace with random values, nulls, types and lists."""
    n = draw(st.integers(0, 300))
    ranks = sorted(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))
    small = st.integers(0, 100)

    def ints(nullable: bool, lo: int = -(2**31), hi: int = 2**31 - 1) -> list[int | None]:
        value = st.one_of(small, st.integers(lo, hi))
        item = st.one_of(st.none(), value) if nullable else value
        return draw(st.lists(item, min_size=n, max_size=n))

    def typed(values: list[int | None]) -> pa.Array:
        t = draw(st.sampled_from(INT_TYPES))
        ok = all(v is None or (_lo(t) <= v <= _hi(t)) for v in values)
        return pa.array(values, t if ok else pa.int64())

    lists = st.one_of(st.none(), st.lists(st.one_of(st.none(), small), max_size=5))
    columns: dict[str, Any] = {
        "rank": pa.array(ranks, pa.int32()),
        "seq": typed(list(range(n))),
        "op": pa.array(draw(st.lists(st.sampled_from(OPS), min_size=n, max_size=n))),
        "peer": typed(ints(True, -2, 10_000)),
        "send_bytes": typed(ints(True, 0, 2**40)),
        "tag": typed(ints(True)),
        "request": typed(ints(True, 0, 2**40)),
        "t_start_ns": typed(ints(False, 0, 2**50)),
        "iteration": typed(ints(True)),
        "requests": pa.array(draw(st.lists(lists, min_size=n, max_size=n)), pa.list_(pa.int64())),
    }
    return pa.table(columns)


def _lo(t: pa.DataType) -> int:
    return 0 if pa.types.is_unsigned_integer(t) else -(2 ** (t.bit_width - 1))


def _hi(t: pa.DataType) -> int:
    bits = t.bit_width if pa.types.is_unsigned_integer(t) else t.bit_width - 1
    return int(2**bits - 1)


WRITE_OPTIONS = st.fixed_dictionaries(
    {
        "compression": st.sampled_from(CODECS),
        "use_dictionary": st.booleans(),
        "data_page_version": st.sampled_from(["1.0", "2.0"]),
        "row_group_size": st.sampled_from([1, 7, 64, 100_000]),
        "data_page_size": st.sampled_from([64, 1 << 20]),
        "delta": st.booleans(),
    }
)


def _write(table: pa.Table, path: Path, options: dict[str, Any]) -> Path:
    opts = dict(options)
    if opts.pop("delta"):
        ints = [f.name for f in table.schema if pa.types.is_integer(f.type)]
        delta = [c for c in ("seq", "t_start_ns", "request") if c in ints]
        opts["use_dictionary"] = [c for c in table.column_names if c not in delta]
        opts["column_encoding"] = {c: "DELTA_BINARY_PACKED" for c in delta}
    metadata = {b"tailcast.table": b"traces", b"tailcast.ranks": b"6"}
    pq.write_table(table.replace_schema_metadata(metadata), path, **opts)
    return path


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    for name, values in want.items():
        assert got[name].dtype == values.dtype, name
        assert np.array_equal(got[name], values), name


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=traces(), options=WRITE_OPTIONS)
def test_native_columns_equal_pyarrow_reading(
    tmp_path_factory: pytest.TempPathFactory, table: pa.Table, options: dict[str, Any]
) -> None:
    path = _write(table, tmp_path_factory.mktemp("t") / "t.parquet", options)
    want = reference(pq.read_table(path))
    builder = _core.TraceFile(path).load()
    _same(builder.finish(), want)
    scan = _core.TraceFile(path).scan()
    counts = np.bincount(table.column("rank").to_numpy(), minlength=0)
    assert scan.counts() == counts.tolist()
    assert scan.rows == table.num_rows


@pytest.mark.parametrize("delta", [True, False])
def test_uint32_values_above_2_to_the_31_stay_unsigned(tmp_path: Path, delta: bool) -> None:
    """A UINT_32 column is stored as INT32: the delta decoder works in 32-bit two's
    complement, so 2^31 came back as -2^31 before the reader re-read it unsigned (found by
    the property test above)."""
    n = 70  # more than one 32-value miniblock
    request = [2**31, 1, 2**32 - 1, 5, 2**31 + 7] * (n // 5)
    table = pa.table(
        {
            "rank": pa.array([0] * n, pa.int32()),
            "seq": pa.array(range(n), pa.int64()),
            "op": pa.array(["isend"] * n),
            "request": pa.array(request, pa.uint32()),
            "t_start_ns": pa.array(range(n), pa.int64()),
        }
    )
    path = _write(table, tmp_path / "u32.parquet", {"delta": delta})
    got = _core.TraceFile(path).load().finish()
    assert got["request"].tolist() == request
    _same(got, reference(pq.read_table(path)))


def test_messy_table_through_every_codec(tmp_path: Path) -> None:
    table = messy_table()
    want = reference(table)
    for compression in CODECS:
        for version in ("1.0", "2.0"):
            path = tmp_path / f"{compression}-{version}.parquet"
            pq.write_table(table, path, compression=compression, data_page_version=version)
            _same(_core.TraceFile(path).load().finish(), want)


def test_footer_matches_pyarrow(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    table = messy_table().replace_schema_metadata({"tailcast.x": "1", "k": "v"})
    pq.write_table(table, path, row_group_size=5)
    footer = read_footer(path)
    meta = pq.read_metadata(path)
    assert footer.num_rows == meta.num_rows == 12
    assert footer.names == meta.schema.to_arrow_schema().names
    assert footer.metadata[b"tailcast.x"] == b"1" and footer.metadata[b"k"] == b"v"


def test_damaged_files_are_errors_naming_the_file(tmp_path: Path) -> None:
    good = tmp_path / "good.parquet"
    pq.write_table(messy_table(), good, compression="zstd")
    data = good.read_bytes()
    not_parquet = tmp_path / "text.parquet"
    not_parquet.write_text("hello, not parquet at all\n")
    with pytest.raises(InputError, match=r"text\.parquet.*not a readable Parquet file.*PAR1"):
        read_footer(not_parquet)
    # Every truncation and a flipped byte in every region: an error, never a crash.
    rng = np.random.default_rng(7)
    for cut in sorted(set(rng.integers(0, len(data), 40).tolist()) | {len(data) - 9}):
        bad = tmp_path / "cut.parquet"
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError):
            _core.TraceFile(bad).load()
    for at in rng.integers(4, len(data) - 8, 200).tolist():
        bad = tmp_path / "flip.parquet"
        bad.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
        with contextlib.suppress(ValueError):  # a flip in a value may just change the value
            _core.TraceFile(bad).load().finish()


def test_old_and_new_layouts_read_the_same(tmp_path: Path) -> None:
    """A trace as tailcast wrote it before the narrow layout (every column, wide types,
    256 K-row groups) gives the same engine columns and layout as the new file."""
    from tailcast.store.parquet_io import write_parquet_atomic
    from tailcast.traces.io import TraceMeta, write_trace
    from tailcast.traces.schema import sorted_trace

    table = sorted_trace(messy_table().set_column(0, "rank", pa.array([0] * 6 + [1] * 6)))
    meta = TraceMeta(ranks=2)
    old = write_parquet_atomic("traces", table, tmp_path / "old.parquet", meta.to_kv(), 262144)
    new = write_trace(table, tmp_path / "new.parquet", meta)
    assert len(pq.read_schema(old).names) > len(pq.read_schema(new).names)
    _same(load_columns(new).arrays(), load_columns(old).arrays())
    assert scan_trace(new).starts == scan_trace(old).starts == [0, 6, 12]
