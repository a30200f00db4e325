"""The eager threshold a replay of a measured run takes from the run's recorded protocol
(replay/eager_limit.py): ob1's `btl_eager_limit - 56`, checked against Open MPI 4.1.4 itself
(a blocking send of the largest eager size returns before the receive is posted, one byte
more waits for it), and replays of a 32 KiB message eager under the TCP BTL's default limit
and rendezvous under a 4 KiB one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tailcast.collectors.mpi_protocol import MpiProtocol
from tailcast.replay.eager_limit import OB1_HEADER_BYTES, eager_threshold, run_eager_threshold
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import ReplayOptions, replay_trace
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace
from tests.slurm_fixture import MPI_ROOT_ENV

PROBE = Path(__file__).with_name("programs") / "eager_probe.c"
RECEIVER_PAUSE_S = 1.0


def _ob1(transport: str, **limits: int) -> MpiProtocol:
    return MpiProtocol(library="Open MPI 4.1.4", pml="ob1", transport=transport,
                       eager_limits=limits)  # fmt: skip


def test_threshold_of_each_library() -> None:
    assert eager_threshold(_ob1("tcp", tcp=65536, vader=4096)) == 65480
    assert eager_threshold(_ob1("vader", tcp=65536, vader=4096)) == 4040
    assert eager_threshold(_ob1("tcp", vader=4096)) is None  # no limit recorded for tcp
    ucx = MpiProtocol(library="Open MPI 4.1.4", pml="ucx", transport="ucx")
    assert eager_threshold(ucx) is None  # UCX's `auto`: chosen at run time
    assert eager_threshold(MpiProtocol(**{**ucx.__dict__, "ucx_rndv_thresh": "8k"})) == 8191
    assert eager_threshold(None) is None and run_eager_threshold(None) is None
    assert run_eager_threshold(_ob1("tcp", tcp=4096).to_json()) == 4040


def _send_seconds(tmp: Path, mca: list[str], sizes: list[int]) -> dict[int, float]:
    binary = tmp / "eager_probe"
    if not binary.exists():
        subprocess.run(["mpicc", "-O2", "-o", str(binary), str(PROBE)], check=True)
    argv = ["mpirun", "--oversubscribe", "-np", "2", *mca, str(binary), *map(str, sizes)]
    env = {**os.environ, **MPI_ROOT_ENV}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=True)
    return {int(n): float(t) for n, t in (line.split() for line in out.stdout.splitlines())}


@pytest.mark.mpi
@pytest.mark.parametrize("limit", [65536, 4096])
def test_ob1_tcp_sends_eagerly_up_to_the_threshold(
    mpi_available: None, tmp_path: Path, limit: int
) -> None:
    if shutil.which("mpicc") is None:
        pytest.skip("no mpicc")
    largest = eager_threshold(_ob1("tcp", tcp=limit))
    assert largest == limit - OB1_HEADER_BYTES
    # One TCP module, on loopback: with more interfaces up (the network lab's bridges in the
    # root namespace during a test session) ob1 stripes messages over one module per
    # interface, and the first send on a module not yet connected waits for the receiver to
    # accept it — an eager send then takes the receiver's pause (CI, 2026-11-29; reproduced
    # with a veth pair: 65480 B took 1.004 s, 0.00003 s with lo alone).
    mca = ["--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"]
    mca += ["--mca", "btl_tcp_eager_limit", str(limit)]
    took = _send_seconds(tmp_path, mca, [largest, largest + 1])
    assert took[largest] < RECEIVER_PAUSE_S / 2, took  # handed over: eager
    assert took[largest + 1] > RECEIVER_PAUSE_S * 0.9, took  # waited for the receive


@pytest.mark.parametrize(("limit", "kind"), [(65536, "eager"), (4096, "rendezvous")])
def test_replay_of_a_32k_message_follows_the_recorded_limit(
    tmp_path: Path, limit: int, kind: str
) -> None:
    table, meta = osu_trace("bcast", 2, [32768], 3, 1)
    trace = write_trace(table, tmp_path / "bcast.parquet", meta)
    options = ReplayOptions(
        placement="nodes:node[01-02]",
        eager_threshold_bytes=run_eager_threshold(_ob1("tcp", tcp=limit).to_json()),
        record_messages=True,
    )
    outcome = replay_trace(trace, load_fabric("lab"), options)
    assert outcome.messages is not None
    kinds = {m["kind"] for m in outcome.messages.to_pylist() if m["bytes"] == 32768}
    assert kinds == {kind}


def _run_row(run_id: str, benchmark: str, started: int, protocol: MpiProtocol | None) -> dict:
    from datetime import UTC, datetime

    from tailcast.collectors.mpi_protocol import run_columns

    return {"run_id": run_id, "benchmark": benchmark, "nodes": ["node01", "node02"],
            "b_before": 0.1, "started_at": datetime(2026, 11, started, tzinfo=UTC),
            **run_columns(protocol)}  # fmt: skip


def test_runs_stored_before_the_record_stay_readable_as_unknown(tmp_path: Path) -> None:
    """The quickstart's bundled runs files have no protocol columns: unknown, so the
    fabric's threshold; a recorded run gives its own, and predict's simulation the newest
    recorded one, a run of its benchmark first."""
    from tailcast.quickstart import bundled_dir
    from tailcast.replay.measured_inputs import measured_run, recorded_eager_threshold
    from tailcast.store import Catalog, ResultsDir

    results = ResultsDir(tmp_path)
    shutil.copytree(bundled_dir() / "runs", tmp_path / "runs")
    with Catalog(results) as cat:
        old = cat.rows("SELECT run_id FROM runs LIMIT 1")[0]["run_id"]
        assert recorded_eager_threshold(cat, "bcast") is None
    assert measured_run(old, results).eager_threshold_bytes is None
    results.write("runs", [_run_row("a", "bcast", 1, _ob1("tcp", tcp=4096))])
    results.write("runs", [_run_row("b", "reduce", 2, _ob1("tcp", tcp=65536))])
    results.write("runs", [_run_row("c", "bcast", 3, None)])
    assert measured_run("a", results).eager_threshold_bytes == 4040
    with Catalog(results) as cat:
        assert recorded_eager_threshold(cat, "bcast") == 4040
        assert recorded_eager_threshold(cat, "alltoall") == 65480  # the newest of any
