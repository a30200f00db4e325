"""SST DUMPI import: the two public samples, header/footer/profile records, conversion on the
CLI, malformed and truncated files, and a fuzz test of the binary reader."""

from __future__ import annotations

import json
import shutil
import struct
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tailcast.cli.main import app
from tailcast.errors import InputError
from tailcast.traces.convert import detect_format, load_trace
from tailcast.traces.dumpi_format import DumpiFormatError, read_bin
from tailcast.traces.dumpi_import import import_dumpi, read_dumpi_meta
from tailcast.traces.dumpi_layouts import FUNCTION_NAMES
from tailcast.traces.io import read_trace
from tailcast.traces.tit_export import export_tit, replay_in_simgrid
from tailcast.traces.tit_import import import_tit
from tailcast.traces.validate import validate_table

# Per-function call counts summed over ranks, as DUMPI's own footers record them (read with
# plain struct.unpack, independently of tailcast's reader, when these tests were written).
FOOTER_CALLS = {
    "testtrace": {"Init": 4, "Comm_rank": 4, "Comm_size": 4, "Barrier": 4, "Isend": 4,
                  "Recv": 4, "Wait": 4, "Allreduce": 4, "Finalize": 4},
    "testbgp": {"Init": 7, "Comm_size": 7, "Comm_rank": 203, "Comm_group": 7,
                "Group_incl": 7, "Comm_create": 7, "Barrier": 21, "Irecv": 588, "Isend": 588,
                "Waitall": 98, "Alltoall": 49, "Finalize": 7},
}  # fmt: skip
RANKS = {"testtrace": 4, "testbgp": 7}
OPS = {"Init": "init", "Finalize": "finalize", "Barrier": "barrier", "Isend": "isend",
       "Irecv": "irecv", "Recv": "recv", "Wait": "wait", "Waitall": "waitall",
       "Allreduce": "allreduce", "Alltoall": "alltoall", "Comm_create": "comm_create"}  # fmt: skip


def _dumpi(shared_data: Path) -> Path:
    return shared_data / "traces" / "dumpi"


def _copy_sample(shared_data: Path, name: str, dest: Path) -> Path:
    for f in _dumpi(shared_data).glob(f"{name}*"):
        shutil.copy(f, dest / f.name)
        (dest / f.name).chmod(0o644)
    return dest / f"{name}.meta"


def _footer_from_struct(path: Path) -> Counter[str]:
    """Footer counts read with struct only: index at the end → footer offset → counts."""
    data = path.read_bytes()
    footer = struct.unpack(">8Q", data[-64:])[6]
    n = len(FUNCTION_NAMES) + 1
    counts = struct.unpack(f">{n}I", data[footer + 8 : footer + 8 + 4 * n])
    return Counter({FUNCTION_NAMES[i]: c for i, c in enumerate(counts[:-1]) if c})


@pytest.mark.parametrize("name", ["testtrace", "testbgp"])
def test_samples_import_with_the_footer_call_counts(shared_data: Path, name: str) -> None:
    meta_file = _dumpi(shared_data) / f"{name}.meta"
    assert detect_format(meta_file) == "dumpi"
    footer: Counter[str] = Counter()
    for rank in range(RANKS[name]):
        footer += _footer_from_struct(_dumpi(shared_data) / f"{name}-{rank:04d}.bin")
    assert dict(footer) == FOOTER_CALLS[name]
    table, meta = import_dumpi(meta_file)
    assert meta.ranks == RANKS[name] and meta.source_format == "dumpi"
    assert set(table.column("rank").to_pylist()) == set(range(RANKS[name]))
    rows = Counter(table.column("op").to_pylist())
    for func, count in FOOTER_CALLS[name].items():
        if func in OPS:
            assert rows[OPS[func]] == count, func
        else:  # no tailcast operation: counted, not dropped
            assert meta.unsupported[f"MPI_{func}"] == count, func
    assert sum(rows.values()) + sum(meta.unsupported.values()) == sum(footer.values())
    assert json.loads(meta.extra["dumpi_footer_calls"]) == FOOTER_CALLS[name]


@pytest.mark.parametrize("name", ["testtrace", "testbgp"])
def test_p2p_bytes_balance_and_trace_validates(shared_data: Path, name: str) -> None:
    table, meta = import_dumpi(_dumpi(shared_data) / f"{name}.meta")
    rows = table.to_pylist()
    sent: Counter[tuple[int, int]] = Counter()
    got: Counter[tuple[int, int]] = Counter()
    for r in rows:
        if r["op"] in ("send", "isend"):
            sent[(r["rank"], r["peer"])] += r["send_bytes"]
        elif r["op"] in ("recv", "irecv"):
            got[(r["peer"], r["rank"])] += r["recv_bytes"]
    assert sent == got and sum(sent.values()) == {"testtrace": 16, "testbgp": 418_656}[name]
    assert validate_table(table, meta) == []
    for rank in range(meta.ranks):  # DUMPI wall clock: per rank in order, calls take >= 0 ns
        mine = [r for r in rows if r["rank"] == rank]
        assert all(0 <= r["t_start_ns"] <= r["t_end_ns"] for r in mine)
        starts = [r["t_start_ns"] for r in mine]
        assert starts == sorted(starts)


def test_bgp_sample_details(shared_data: Path) -> None:
    """Communicator creation, datatype sizes from the file, header and profile records."""
    table, meta = import_dumpi(_dumpi(shared_data) / "testbgp.meta")
    rows = table.to_pylist()
    created = [r for r in rows if r["op"] == "comm_create"]
    assert len({r["new_comm"] for r in created}) == 1
    new = created[0]["new_comm"]
    assert new not in (0, -1) and all(r["comm_members"] == list(range(7)) for r in created)
    p2p = [r for r in rows if r["op"] in ("isend", "irecv")]
    assert {r["comm"] for r in p2p} == {new}
    assert {r["send_bytes"] or r["recv_bytes"] for r in p2p} == {89 * 8}  # 89 MPI_DOUBLE
    assert {(r["send_bytes"], r["recv_bytes"]) for r in rows if r["op"] == "alltoall"} == {
        (712, 712)
    }
    waits = [r for r in rows if r["op"] == "waitall"]
    assert sum(len(r["requests"]) for r in waits) == 588 * 2
    rank3 = read_bin(_dumpi(shared_data) / "testbgp-0003.bin")
    assert rank3.version == (1, 1, 0) and rank3.hostname == "R00-M1-N01-J01.challenger"
    assert rank3.mesh_sizes == [4, 2, 2] and len(rank3.mesh_coords) == 3
    assert rank3.type_sizes is not None and rank3.type_sizes[11] == 4  # MPI_LONG on BG/P
    assert rank3.records[0].args["argv"][0] == "/home/jjwilke/caps/randombenchmark"
    assert meta.extra["dumpi_version"] == "1.1.0"
    assert json.loads(meta.extra["rank_hostnames"]) == ["R00-M1-N01-J01.challenger"] * 7
    mac = read_bin(_dumpi(shared_data) / "testtrace-0000.bin")
    assert mac.type_sizes is not None and mac.type_sizes[11] == 8  # MPI_LONG, LP64
    assert mac.username == "hadalst" and mac.start_time == 1296777956


def test_cli_info_validate_and_convert_to_parquet_and_tit(
    shared_data: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    for name in ("testtrace", "testbgp"):
        src = str(_dumpi(shared_data) / f"{name}.meta")
        res = runner.invoke(app, ["trace", "info", src, "--json"])
        assert res.exit_code == 0, res.output
        info = json.loads(res.stdout)
        assert info["ranks"] == RANKS[name] and info["source_format"] == "dumpi"
        assert runner.invoke(app, ["trace", "validate", src]).exit_code == 0
        out = tmp_path / f"{name}.parquet"
        assert runner.invoke(app, ["trace", "convert", src, str(out)]).exit_code == 0
        table, meta = read_trace(out)
        assert meta.ranks == RANKS[name] and meta.unsupported["MPI_Comm_rank"] > 0
        tit = tmp_path / f"{name}-tit" / f"{name}.list"
        res = runner.invoke(app, ["trace", "convert", src, str(tit), "--to", "tit"])
        assert res.exit_code == 0, res.output
        back, _ = import_tit(tit)
        ops = Counter(back.column("op").to_pylist())
        assert ops["isend"] == Counter(table.column("op").to_pylist())["isend"]


@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid (libsimgrid-dev) missing")
def test_tit_export_of_dumpi_samples_replays_in_simgrid(shared_data: Path, tmp_path: Path) -> None:
    for name in ("testtrace", "testbgp"):
        table, meta = import_dumpi(_dumpi(shared_data) / f"{name}.meta")
        listing = tmp_path / name / f"{name}.list"
        assert export_tit(table, meta, listing) == {}  # nothing skipped
        log = replay_in_simgrid(listing, meta.ranks, tmp_path / name / "sg")
        assert "Simulation time" in log


def test_truncated_and_garbled_files_raise_input_error(shared_data: Path, tmp_path: Path) -> None:
    meta_file = _copy_sample(shared_data, "testtrace", tmp_path)
    rank1 = tmp_path / "testtrace-0001.bin"
    data = rank1.read_bytes()
    rank1.write_bytes(data[: len(data) // 2])  # index record lost
    with pytest.raises(InputError, match=r"testtrace-0001\.bin.*truncated"):
        import_dumpi(meta_file)
    rank1.write_bytes(b"\0" * 8 + data[8:])
    with pytest.raises(InputError, match=r"testtrace-0001\.bin: byte offset 0: .*bad magic"):
        import_dumpi(meta_file)
    body = bytearray(data)
    body[16:18] = b"\x7f\xff"  # the first record's function id
    rank1.write_bytes(bytes(body))
    with pytest.raises(DumpiFormatError, match=r"byte offset 16 \(record 0\): bad function id"):
        import_dumpi(meta_file)
    rank1.unlink()
    with pytest.raises(InputError, match=r"testtrace\.meta: rank 1's trace testtrace-0001\.bin"):
        import_dumpi(meta_file)


def test_bad_meta_lines_name_the_line(tmp_path: Path) -> None:
    meta_file = tmp_path / "x.meta"
    meta_file.write_text("hostname=h\nnumprocs 4\nfileprefix=x\n")
    with pytest.raises(InputError) as err:
        read_dumpi_meta(meta_file)
    assert err.value.line == 2 and "x.meta" in str(err.value)
    meta_file.write_text("numprocs=four\nfileprefix=x\n")
    with pytest.raises(InputError, match=":1: numprocs is not an integer"):
        read_dumpi_meta(meta_file)
    meta_file.write_text("numprocs=2\n")
    with pytest.raises(InputError, match="missing 'fileprefix='"):
        read_dumpi_meta(meta_file)


def test_unknown_layout_is_counted_not_dropped(shared_data: Path, tmp_path: Path) -> None:
    """A record whose arguments we cannot read stops that rank; the rest is reported."""
    meta_file = _copy_sample(shared_data, "testtrace", tmp_path)
    rank0 = tmp_path / "testtrace-0000.bin"
    data = bytearray(rank0.read_bytes())
    finalize = next(r for r in read_bin(rank0).records if r.name == "Finalize").offset
    data[finalize : finalize + 2] = struct.pack(">H", FUNCTION_NAMES.index("File_open"))
    rank0.write_bytes(bytes(data))
    table, meta = import_dumpi(meta_file)
    assert Counter(table.column("op").to_pylist())["finalize"] == 3
    note = " (not read: follows a call of unknown layout)"
    assert meta.unsupported[f"MPI_File_open{note}"] == 1
    assert meta.unsupported[f"MPI_Finalize{note}"] == 1  # the footer still counts it


@pytest.fixture(scope="module")
def sample_copy(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    return _copy_sample(shared_data, "testbgp", tmp_path_factory.mktemp("dumpi"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(st.tuples(st.integers(0, 13_818), st.integers(0, 255)), max_size=6),
    cut=st.one_of(st.none(), st.integers(0, 13_818)),
)
def test_fuzz_corrupted_bin_raises_only_input_error(
    sample_copy: Path, edits: list[tuple[int, int]], cut: int | None
) -> None:
    original = (sample_copy.parent / "testbgp-0002.bin").with_suffix(".orig")
    target = sample_copy.parent / "testbgp-0002.bin"
    if not original.exists():
        shutil.copy(target, original)
    data = bytearray(original.read_bytes())
    for pos, value in edits:
        data[pos] = value
    target.write_bytes(bytes(data[:cut] if cut is not None else data))
    try:
        table, meta = load_trace(sample_copy)
    except InputError as err:
        assert "testbgp-0002.bin" in str(err)
        return
    assert meta.ranks == 7
    validate_table(table, meta)  # must not crash on anything the reader accepted
