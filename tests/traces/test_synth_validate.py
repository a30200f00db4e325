"""Synthetic workloads, validation errors, Parquet round trip and streaming."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pytest

from tailcast.errors import UsageError
from tailcast.traces.info import summarize_table, trace_info
from tailcast.traces.io import TraceMeta, iter_batches, read_trace, write_trace
from tailcast.traces.synth import (
    WORKLOADS,
    WorkloadParams,
    osu_trace,
    seed002_mix_trace,
    workload_trace,
)
from tailcast.traces.validate import (
    CollectiveMismatch,
    MessageSizeMismatch,
    RequestError,
    UnmatchedMessage,
    validate_table,
)


@pytest.mark.parametrize("kind", WORKLOADS)
def test_every_workload_is_a_valid_trace(kind: str) -> None:
    table = workload_trace(kind, WorkloadParams(tasks=16, flows=320, seed=3))
    assert validate_table(table, TraceMeta(ranks=16)) == []


def test_flow_counts_match_seed000() -> None:
    n = 16

    def flows(kind: str) -> int:
        t = workload_trace(kind, WorkloadParams(tasks=n, flows=320))
        return summarize_table(t, TraceMeta(ranks=n)).ops["isend"].calls

    assert flows("AA") == n * (n - 1)
    assert flows("AR") == n * int(math.log2(n))
    assert flows("NB") == n * n // 2
    assert flows("RA") == 320 and flows("SH") == 320


def test_irregular_causality_sends_follow_receives() -> None:
    # In RandomApp a rank's k-th send comes after every receive of earlier flows to it.
    rows = workload_trace("randomapp", WorkloadParams(tasks=8, flows=200, seed=1)).to_pylist()
    rank2 = [r["op"] for r in rows if r["rank"] == 2]
    assert "recv" in rank2 and "isend" in rank2
    first_send = rank2.index("isend")
    assert all(op != "irecv" for op in rank2)  # blocking receives: causality is enforced
    assert first_send >= 1


def test_hotregion_and_tor_distributions() -> None:
    rows = workload_trace("HR", WorkloadParams(tasks=32, flows=4000, seed=2)).to_pylist()
    dst = [r["peer"] for r in rows if r["op"] == "isend"]
    hot = sum(1 for d in dst if d < 4) / len(dst)  # 12.5 % of 32 ports
    assert 0.25 < hot < 0.40  # 25 % directed + 12.5 % of the uniform rest
    rows = workload_trace("TL", WorkloadParams(tasks=24, flows=4000, seed=2)).to_pylist()
    remote = [r["peer"] // 12 != r["rank"] // 12 for r in rows if r["op"] == "isend"]
    assert 0.15 < sum(remote) / len(remote) < 0.25


def test_allreduce_needs_power_of_two() -> None:
    with pytest.raises(UsageError):
        workload_trace("allreduce", WorkloadParams(tasks=12))


def test_osu_trace_marks_iterations() -> None:
    table, meta = osu_trace("alltoall", ranks=4, sizes=[8, 1024], iterations=5, warmup=2)
    rows = [r for r in table.to_pylist() if r["op"] == "alltoall"]
    assert len(rows) == 4 * 2 * 7
    measured = [r for r in rows if r["iteration"] is not None]
    assert sorted({r["iteration"] for r in measured}) == list(range(10))
    assert {r["send_bytes"] for r in measured if r["iteration"] >= 5} == {1024}  # per-peer
    assert json.loads(meta.extra["osu_sizes"]) == [8, 1024]
    assert validate_table(table, meta) == []


def test_seed002_mix() -> None:
    table = seed002_mix_trace(ranks=16, seed=5)
    sends = [r for r in table.to_pylist() if r["op"] == "isend"]
    assert len(sends) == 16 * 100
    short = sum(1 for r in sends if r["send_bytes"] == 4096) / len(sends)
    assert 0.75 < short < 0.85
    assert {r["send_bytes"] for r in sends} == {4096, 512 * 1024}
    assert all(r["peer"] != r["rank"] for r in sends)
    assert validate_table(table, TraceMeta(ranks=16)) == []


def _trace(rows: list[dict[str, object]]) -> pa.Table:
    from tailcast.store.schemas import TRACE

    return pa.Table.from_pylist(rows, schema=TRACE)


def test_violations_name_rank_seq_op() -> None:
    meta = TraceMeta(ranks=2)
    lone = _trace([{"rank": 0, "seq": 0, "op": "send", "peer": 1, "tag": 0, "send_bytes": 8}])
    [v] = validate_table(lone, meta)
    assert isinstance(v, UnmatchedMessage) and (v.rank, v.seq, v.op) == (0, 0, "send")
    short = _trace([
        {"rank": 0, "seq": 0, "op": "send", "peer": 1, "tag": 0, "send_bytes": 8},
        {"rank": 1, "seq": 0, "op": "recv", "peer": 0, "tag": 0, "recv_bytes": 4},
    ])  # fmt: skip
    [v] = validate_table(short, meta)
    assert isinstance(v, MessageSizeMismatch) and v.rank == 1
    coll = _trace([
        {"rank": 0, "seq": 0, "op": "bcast", "root": 0, "send_bytes": 8},
        {"rank": 1, "seq": 0, "op": "bcast", "root": 1, "send_bytes": 8},
    ])  # fmt: skip
    [v] = validate_table(coll, meta)
    assert isinstance(v, CollectiveMismatch) and (v.rank, v.seq) == (1, 0)
    missing = _trace([{"rank": 0, "seq": 0, "op": "barrier"}])
    assert isinstance(validate_table(missing, meta)[0], CollectiveMismatch)
    req = _trace([
        {"rank": 0, "seq": 0, "op": "irecv", "peer": 1, "tag": 0, "request": 7},
        {"rank": 1, "seq": 0, "op": "send", "peer": 0, "tag": 0},
    ])  # fmt: skip
    [v] = validate_table(req, meta)
    assert isinstance(v, RequestError) and "never completed" in str(v)


def test_parquet_round_trip_and_streaming(tmp_path: Path) -> None:
    table, meta = osu_trace("bcast", ranks=8, sizes=[1, 2, 4], iterations=50)
    path = write_trace(table, tmp_path / "t.parquet", meta)
    back, meta2 = read_trace(path)
    assert back.num_rows == table.num_rows and meta2.ranks == 8
    assert meta2.extra["osu_iterations"] == "50"
    batches = list(iter_batches(path, columns=["rank", "seq"], batch_rows=100))
    assert len(batches) > 1 and sum(b.num_rows for b in batches) == table.num_rows
    ranks = pa.concat_arrays([b.column(0) for b in batches]).to_pylist()
    assert ranks == sorted(ranks)  # streamed in (rank, seq) order
    assert trace_info(path).ops["bcast"].calls == 8 * 3 * 50
