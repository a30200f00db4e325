"""Fuzz of the PMPI tracer's raw per-rank file reader on real files: the known-calls C
program is captured once with --keep-raw; random truncations and byte corruptions of one rank
file must either convert or raise InputError — never anything else."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tailcast.errors import InputError
from tailcast.traces.capture import capture_run
from tailcast.traces.capture.raw import HEADER, convert_raw, read_rank_file
from tailcast.traces.validate import validate_table
from tests.traces.test_capture import PROGRAMS

pytestmark = [pytest.mark.mpi]


@pytest.fixture(scope="module")
def raw_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """(directory holding the 4 raw rank files, original bytes of rank 1's file)."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("Open MPI (mpicc, mpirun) not installed")
    work = tmp_path_factory.mktemp("rawfuzz")
    exe = work / "known_calls"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(PROGRAMS / "known_calls.c")],
                   check=True, timeout=120)  # fmt: skip
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", XDG_CACHE_HOME=str(work / "cache"))  # fmt: skip
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
    try:
        argv = ["mpirun", "--oversubscribe", "-np", "4", str(exe)]
        result = capture_run(argv, work / "t.parquet", keep_raw=True, env=env, timeout=300)
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved
    assert result.returncode == 0
    (raw_dir,) = work.glob(".t-raw-*")
    files = sorted(raw_dir.glob("rank-*.bin"))
    assert len(files) == 4
    return raw_dir, files[1].read_bytes()


def test_real_raw_files_read_back(raw_files: tuple[Path, bytes]) -> None:
    raw_dir, data = raw_files
    rank1 = read_rank_file(raw_dir / "rank-000001.bin")
    assert rank1.rank == 1 and rank1.world_size == 4 and rank1.truncated_bytes == 0
    assert len(data) > HEADER.size and rank1.records
    table, meta = convert_raw(raw_dir)
    assert meta.ranks == 4 and validate_table(table, meta) == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=6),
    cut=st.one_of(st.none(), st.floats(0, 1)),
)
def test_fuzz_raw_rank_file(
    raw_files: tuple[Path, bytes], edits: list[tuple[float, int]], cut: float | None
) -> None:
    raw_dir, original = raw_files
    data = bytearray(original)
    for where, value in edits:
        data[int(where * len(data))] = value
    if cut is not None:
        data = data[: int(cut * len(data))]
    target = raw_dir / "rank-000001.bin"
    target.write_bytes(bytes(data))
    try:
        try:
            table, meta = convert_raw(raw_dir)
        except InputError:
            return
        validate_table(table, meta)  # must not crash on anything the reader accepted
    finally:
        target.write_bytes(original)
