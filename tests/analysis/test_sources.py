from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tailcast.analysis.sources import resolve
from tailcast.errors import InputError, StoreError, UsageError
from tailcast.store import ResultsDir


@pytest.fixture()
def store(results_home: Path) -> ResultsDir:
    rd = ResultsDir()
    rd.write("replays", [{"replay_id": "with-iters"}, {"replay_id": "ops-only"}])
    rd.write(
        "replay_iterations",
        {"replay_id": ["with-iters"] * 3, "iteration": [0, 1, 2], "latency_us": [1.0, 2.0, 3.0]},
    )
    rd.write(
        "replay_ops",
        {
            "replay_id": ["ops-only"] * 2,
            "rank": [0, 1],
            "seq": [0, 0],
            "op": ["bcast"] * 2,
            "sim_start_ns": [0, 1000],
            "sim_end_ns": [5000, 3000],
        },
    )
    return rd


def test_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"v": np.arange(3.0)}), path)
    src = resolve(str(path))
    assert src.kind == "parquet" and src.table.num_rows == 3 and src.files == [path]


def test_corrupt_parquet_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=r"broken\.parquet"):
        resolve(str(path))


def test_table_replay_and_query(store: ResultsDir) -> None:
    src = resolve("replay_iterations")
    assert src.kind == "table" and src.table.num_rows == 3 and len(src.files) == 1
    it = resolve("with-iters")
    assert it.kind == "replay" and it.table.column("latency_us").to_pylist() == [1.0, 2.0, 3.0]
    ops = resolve("ops-only")
    assert ops.table.column("latency_us").to_pylist() == [5.0, 2.0]
    assert ops.files == store.files("replay_ops")
    q = resolve("SELECT latency_us * 2 AS d FROM replay_iterations")
    assert q.kind == "query" and q.table.column("d").to_pylist() == [2.0, 4.0, 6.0]
    assert q.files == store.files("replay_iterations")


def test_unknown_source_and_bad_sql(store: ResultsDir) -> None:
    with pytest.raises(UsageError, match="not a Parquet file"):
        resolve("no-such-replay")
    with pytest.raises(UsageError, match="no such Parquet file"):
        resolve("/nonexistent/file.parquet")
    with pytest.raises(StoreError):
        resolve("SELECT nope FROM replays")
