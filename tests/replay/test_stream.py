"""Streaming replay (`tailcast.replay.stream`): bit-identical to the in-memory replay
whatever the chunk size, per-op results streamed to Parquet, bad layouts rejected."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tailcast.errors import InputError
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import ReplayFailed, _pct, replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.replay.stream import stream_replay
from tailcast.store import ResultsDir
from tailcast.traces.convert import convert
from tailcast.traces.io import read_trace
from tests.replay.conftest import osu_parquet

KEY = [("rank", "ascending"), ("seq", "ascending")]


def _same(
    trace: Path, fabric: str, tmp: Path, chunk_rows: int, coll: str = "", piece_rows: int = 0
) -> None:
    options = ReplayOptions(coll=coll, seed=2)
    batch = replay_trace(trace, load_fabric(fabric), options)
    ops = tmp / f"ops-{fabric}-{chunk_rows}-{piece_rows}.parquet"
    streamed = stream_replay(
        trace,
        load_fabric(fabric),
        options,
        ops_path=ops,
        chunk_rows=chunk_rows,
        piece_rows=piece_rows or None,
    )
    assert streamed.total_time_ns == batch.total_time_ns
    assert streamed.stats["actions"] == batch.stats["actions"]
    assert streamed.stats["messages"] == batch.stats["messages"]
    assert np.array_equal(streamed.iterations, batch.iterations)
    assert np.array_equal(streamed.iteration_latency_us, batch.iteration_latency_us)
    got = pq.read_table(ops).sort_by(KEY)
    want = batch.ops.sort_by(KEY)
    for column in ("rank", "seq", "op", "sim_start_ns", "sim_end_ns"):
        assert got.column(column).to_pylist() == want.column(column).to_pylist(), column


@pytest.mark.parametrize("fabric", ["ideal", "crossbar", "torus-4x4x4"])
@pytest.mark.parametrize(("chunk_rows", "piece_rows"), [(2, 0), (5, 0), (4096, 0), (4096, 3)])
def test_streaming_equals_in_memory_replay_for_any_chunk_size(
    tmp_path: Path, fabric: str, chunk_rows: int, piece_rows: int
) -> None:
    trace = osu_parquet(tmp_path, "allreduce", 16, 65536, iterations=4)
    _same(trace, fabric, tmp_path, chunk_rows, coll="allreduce=ring", piece_rows=piece_rows)
    trace = osu_parquet(tmp_path, "alltoall", 8, 100, iterations=3)
    _same(trace, fabric, tmp_path, chunk_rows, piece_rows=piece_rows)


@pytest.mark.parametrize(
    "source",
    ["dumpi/testbgp.meta", "simgrid-tit/ti_traces_32_1", "simgrid-tit/actions_with_isend.txt"],
)
def test_public_traces_stream_identically(shared_data: Path, tmp_path: Path, source: str) -> None:
    parquet = tmp_path / "trace.parquet"
    convert(shared_data / "traces" / source, parquet)
    for fabric in ("ideal", "fat-tree-16"):
        _same(parquet, fabric, tmp_path, chunk_rows=3)
        _same(parquet, fabric, tmp_path, chunk_rows=4096, piece_rows=7)


def test_stored_results_and_no_ops(tmp_path: Path, results_home: Path) -> None:
    trace = osu_parquet(tmp_path, "bcast", 8, 1024, iterations=5)
    outcome = stream_replay(trace, load_fabric("ideal"), ReplayOptions(), ResultsDir())
    ops = pq.read_table(next((results_home / "replay_ops").glob("*.parquet")))
    assert ops.num_rows == outcome.stats["actions"] == sum(outcome.op_counts.values())
    assert set(ops.column("replay_id").to_pylist()) == {outcome.replay_id}
    assert len(list((results_home / "replays").glob("*.parquet"))) == 1
    iters = pq.read_table(next((results_home / "replay_iterations").glob("*.parquet")))
    assert iters.column("iteration").to_pylist() == [0, 1, 2, 3, 4]
    lean = stream_replay(trace, load_fabric("ideal"), ReplayOptions(), keep_ops=False)
    assert lean.ops_path is None and lean.total_time_ns == outcome.total_time_ns
    # Summarised in the binding (`summarise_ops`) instead of from the rows handed over.
    assert lean.summary()["ops"] == outcome.summary()["ops"]


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=1, max_size=300),
    q=st.one_of(st.sampled_from([0, 50, 99, 100]), st.floats(0, 100)),
)
def test_iteration_percentiles_are_numpys(values: list[float], q: float) -> None:
    """The summary's p50/p99 (numpy-free, for streamed replays) are np.percentile's."""
    assert _pct(values, q) == float(np.percentile(values, q))
    assert _pct(np.array(values), q) == float(np.percentile(values, q))


def test_trace_not_sorted_by_rank_is_rejected(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "barrier", 4, 0, iterations=2)
    table, _ = read_trace(trace)
    shuffled = tmp_path / "shuffled.parquet"
    reversed_rows = table.take(pa.array(np.arange(table.num_rows)[::-1]))
    meta = pq.read_metadata(trace).metadata
    pq.write_table(reversed_rows.replace_schema_metadata(meta), shuffled)
    with pytest.raises(InputError, match="not sorted by rank"):
        stream_replay(shuffled, load_fabric("ideal"), ReplayOptions())


def test_cli_stream_no_ops(tmp_path: Path, results_home: Path) -> None:
    import json

    from typer.testing import CliRunner

    from tailcast.cli.main import app

    trace = osu_parquet(tmp_path, "allgather", 8, 512, iterations=3)
    args = ["replay", "run", str(trace), "--stream", "--no-ops", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["iterations"] == 3 and summary["ops_path"] is None
    assert not (results_home / "replay_ops").exists()
    assert len(list((results_home / "replays").glob("*.parquet"))) == 1


def test_a_bad_row_in_a_later_piece_names_its_row(tmp_path: Path) -> None:
    # The engine gets each batch piece by piece inside run(); a row it rejects in a later
    # piece must still fail the replay and be named by its row number in the file.
    trace = osu_parquet(tmp_path, "bcast", 4, 64, iterations=20)
    table, _ = read_trace(trace)
    bad = 40  # rank 0's rows come first; 40 lies beyond the first pieces of 7
    t_start = table.column("t_start_ns").to_numpy().copy()
    t_end = table.column("t_end_ns").to_numpy().copy()
    t_end[bad] = t_start[bad] - 1
    table = table.set_column(table.schema.get_field_index("t_end_ns"), "t_end_ns", pa.array(t_end))
    broken = tmp_path / "broken.parquet"
    pq.write_table(table.replace_schema_metadata(pq.read_metadata(trace).metadata), broken)
    with pytest.raises(ReplayFailed, match=rf"row {bad} \(rank 0.*t_end_ns < t_start_ns"):
        stream_replay(broken, load_fabric("ideal"), ReplayOptions(), piece_rows=7)
