"""The PMPI tracer's timing mode (TAILCAST_TRACE_MODE=timing) on real 4-rank programs: every
call recorded once with its times and bytes, MPI_Wtime's own readings kept, the same call
counts as the full tracer sees, and the reader's checks on damaged files."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tailcast.errors import InputError
from tailcast.traces.capture import build_tracer, convert_raw
from tailcast.traces.capture.timing import CALLS, CODE, read_timing_dir, read_timing_file

PROGRAMS = Path(__file__).parent / "programs"
SOURCES = Path(__file__).resolve().parents[2] / "src" / "tailcast" / "traces" / "capture"


def test_call_codes_follow_the_c_enum() -> None:
    text = (SOURCES / "tailcast_pmpi_timing.h").read_text()
    body = re.sub(r"/\*.*?\*/", "", text[text.index("enum tm_call {") : text.index("};")])
    names = re.findall(r"TM_(\w+)", body)
    assert [f"MPI_{n}".lower() for n in names] == [c.lower() for c in CALLS]


def _run(program: Path, env: dict[str, str], raw: Path, *args: str) -> None:
    env = {**env, "LD_PRELOAD": str(build_tracer()), "TAILCAST_TRACE_DIR": str(raw),
           "TAILCAST_TRACE_MODE": "timing"}  # fmt: skip
    argv = ["mpirun", "--oversubscribe", "-np", "4", "-x", "LD_PRELOAD", "-x",
            "TAILCAST_TRACE_DIR", "-x", "TAILCAST_TRACE_MODE", str(program), *args]  # fmt: skip
    subprocess.run(argv, env=env, check=True, timeout=300, capture_output=True)


@pytest.fixture(scope="module")
def mpi_env(tmp_path_factory: pytest.TempPathFactory, mpi_available: None) -> dict[str, str]:
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc not installed")
    return {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_btl": "self,vader"}  # fmt: skip


def _compile(name: str, out: Path) -> Path:
    exe = out / name
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(PROGRAMS / f"{name}.c")],
                   check=True, timeout=120)  # fmt: skip
    return exe


@pytest.mark.mpi
def test_timing_only_calls(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    _run(_compile("timing_only_calls", tmp_path), mpi_env, raw)
    ranks = read_timing_dir(raw)
    assert [r.rank for r in ranks] == [0, 1, 2, 3] and all(r.finalized for r in ranks)
    for rc in ranks:
        counts = Counter(CALLS[c] for c in rc.records["call"])
        assert counts == {
            "MPI_Init": 1, "MPI_Finalize": 1, "MPI_Wtime": 6, "MPI_Ibcast": 3, "MPI_Wait": 7,
            "MPI_Iallreduce": 1, "MPI_Ialltoallv": 1, "MPI_Alltoallw": 1, "MPI_Ibarrier": 1,
            "MPI_Neighbor_allgather": 1, "MPI_Ineighbor_alltoall": 1,
            "MPI_Neighbor_alltoallw": 1,
        }  # fmt: skip
        assert list(rc.of("MPI_Ibcast")["bytes"]) == [256] * 3  # 64 MPI_INT
        assert list(rc.of("MPI_Iallreduce")["bytes"]) == [128]
        assert list(rc.of("MPI_Ialltoallv")["bytes"]) == [-1]  # per-peer counts: not one
        assert int(rc.of("MPI_Neighbor_allgather")["bytes"][0]) == 32
        rec = rc.records
        timed = rec[rec["call"] != CODE["MPI_Wtime"]]
        assert np.all(timed["t_end"] >= timed["t_start"])
        assert np.all(np.diff(timed["t_start"]) >= 0)  # in call order
        clock = rc.of("MPI_Wtime")["bytes"].view(np.float64)
        assert np.all(np.diff(clock) > 0)  # the values MPI_Wtime returned, increasing
        # each Ibcast sits between the two readings around it, as in OSU's loops
        calls = list(rec["call"])
        starts = [i for i, c in enumerate(calls) if c == CODE["MPI_Ibcast"]]
        assert all(calls[i - 1] == calls[i + 2] == CODE["MPI_Wtime"] for i in starts)


@pytest.mark.mpi
def test_same_call_counts_as_the_full_tracer(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    exe = _compile("known_calls", tmp_path)
    timing_raw, full_raw = tmp_path / "timing", tmp_path / "full"
    timing_raw.mkdir()
    full_raw.mkdir()
    _run(exe, mpi_env, timing_raw)
    env = {**mpi_env, "LD_PRELOAD": str(build_tracer()), "TAILCAST_TRACE_DIR": str(full_raw)}
    subprocess.run(["mpirun", "--oversubscribe", "-np", "4", "-x", "LD_PRELOAD", "-x",
                    "TAILCAST_TRACE_DIR", str(exe)], env=env, check=True, timeout=300,
                   capture_output=True)  # fmt: skip
    table, _ = convert_raw(full_raw)
    full = Counter(table.column("op").to_pylist())
    timed = Counter(CALLS[c] for rc in read_timing_dir(timing_raw) for c in rc.records["call"])
    # comm_split/dup/free are not timed; the test loop spins a varying number of times
    for op, n in full.items():
        if op.startswith("comm_") or op == "test":
            continue
        assert timed["MPI_" + op.capitalize()] == n, op
    with pytest.raises(InputError, match="not a tailcast tracer file"):
        convert_raw(timing_raw)  # the full converter refuses timing files, and
    with pytest.raises(InputError, match="not a timing-mode tracer file"):
        read_timing_dir(full_raw)  # the other way round


def test_truncated_and_corrupt_files(tmp_path: Path) -> None:
    import struct

    header = struct.pack("<6i", 0x54434154, 2, 0, 1, 123, 32)
    record = struct.pack("<3q2i", 10, 20, 8, CODE["MPI_Bcast"], 0)
    path = tmp_path / "rank-000000.bin"
    path.write_bytes(header + record * 3 + record[:17])  # a crash mid-record
    rc = read_timing_file(path)
    assert len(rc.records) == 3 and rc.truncated_bytes == 17 and not rc.finalized
    path.write_bytes(header + struct.pack("<3q2i", 1, 2, 0, 999, 0))
    with pytest.raises(InputError, match="unknown call code 999"):
        read_timing_file(path)
    path.write_bytes(header[:10])
    with pytest.raises(InputError, match="shorter than its header"):
        read_timing_file(path)
    (tmp_path / "rank-000000.bin").write_bytes(struct.pack("<6i", 0x54434154, 2, 0, 2, 1, 32))
    with pytest.raises(InputError, match=r"ranks \[1\] of 2 left no timing file"):
        read_timing_dir(tmp_path)
