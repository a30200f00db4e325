"""Store: schema round trips, atomic writes, DuckDB views, corrupt files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tailcast.errors import InputError, StoreError
from tailcast.store import TABLES, Catalog, ResultsDir, conform, read_table

NOW = datetime(2026, 11, 22, 1, 2, 3, tzinfo=UTC)


def _value(field: pa.Field, i: int) -> object:
    t = field.type
    if pa.types.is_string(t):
        return f"{field.name}-{i}"
    if pa.types.is_integer(t):
        return i + 1
    if pa.types.is_floating(t):
        return 0.5 + i
    if pa.types.is_boolean(t):
        return i % 2 == 0
    if pa.types.is_timestamp(t):
        return NOW
    if pa.types.is_list(t):
        inner = pa.field("x", t.value_type)
        return [_value(inner, j) for j in range(i + 1)]
    raise AssertionError(f"no sample value for {t}")


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_schema_round_trips(name: str, results_home: Path) -> None:
    schema = TABLES[name]
    rows = [{f.name: _value(f, i) for f in schema} for i in range(3)]
    path = ResultsDir().write(name, rows)
    back = read_table(path, expected_table=name)
    assert back.schema.remove_metadata() == schema
    assert back.to_pylist() == rows


def test_conform_fills_nullable_and_rejects_unknown_and_missing_required() -> None:
    table = conform("samples", {"run_id": ["r"], "iteration": [0], "latency_us": [1.5]})
    assert table.column("latency_us_mean").null_count == 1
    with pytest.raises(StoreError, match="unknown columns"):
        conform("samples", {"run_id": ["r"], "iteration": [0], "bogus": [1]})
    with pytest.raises(StoreError, match="required column iteration"):
        conform("samples", {"run_id": ["r"]})


WRITER = """
import sys, time
import pyarrow as pa
from pathlib import Path
from tailcast.store import atomic, parquet_io

def slow_fsync(fd):
    Path(sys.argv[2]).write_text("written")   # tell the test the temp file is written
    time.sleep(60)                             # killed here, before fsync + rename
atomic.os.fsync = slow_fsync  # store.atomic fsyncs the temporary file
n = 200_000
parquet_io.write_parquet_atomic(
    "samples", {"run_id": ["r"] * n, "iteration": list(range(n)), "latency_us": [1.0] * n},
    Path(sys.argv[1]),
)
"""


def test_writer_killed_mid_write_leaves_no_visible_file(results_home: Path, tmp_path: Path) -> None:
    results = ResultsDir()
    results.write("samples", {"run_id": ["kept"], "iteration": [0], "latency_us": [2.0]})
    target = results.table_dir("samples") / "victim.parquet"
    flag = tmp_path / "flag"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(flag)])
    deadline = time.monotonic() + 120
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert flag.exists(), "writer never reached the write"
    hidden = [p for p in target.parent.iterdir() if p.name.startswith(".tmp-")]
    assert hidden, "the write should go to a hidden temporary file"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not target.exists()
    assert [p.name for p in results.files("samples")] != [] and all(
        p.name != "victim.parquet" for p in results.files("samples")
    )
    with Catalog() as cat:
        assert cat.rows("SELECT run_id FROM samples") == [{"run_id": "kept"}]
        assert cat.problems == []


def test_view_spans_many_files_and_sql_aggregates(results_home: Path) -> None:
    results = ResultsDir()
    for k in range(4):
        results.write(
            "samples",
            {
                "run_id": [f"run{k}"] * 5,
                "iteration": list(range(5)),
                "latency_us": [float(k * 10 + i) for i in range(5)],
            },
        )
    with Catalog() as cat:
        assert len(cat.tables["samples"].files) == 4
        assert cat.tables["samples"].rows == 20
        rows = cat.rows(
            "SELECT run_id, max(latency_us) AS worst FROM samples GROUP BY run_id ORDER BY run_id"
        )
    assert rows == [{"run_id": f"run{k}", "worst": k * 10 + 4.0} for k in range(4)]


def test_corrupt_and_foreign_files_are_named_and_others_stay_queryable(
    results_home: Path,
) -> None:
    results = ResultsDir()
    for k in range(3):
        results.write("samples", {"run_id": [f"ok{k}"], "iteration": [0], "latency_us": [1.0]})
    directory = results.table_dir("samples")
    corrupt = directory / "corrupt.parquet"
    good = results.files("samples")[0].read_bytes()
    corrupt.write_bytes(good[: len(good) // 2])  # truncated: footer gone
    foreign = directory / "foreign.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), foreign)
    with Catalog() as cat:
        problems = {Path(p.path).name: str(p) for p in cat.problems}
        assert set(problems) == {"corrupt.parquet", "foreign.parquet"}
        assert "corrupt.parquet" in problems["corrupt.parquet"]
        assert "not written by tailcast" in problems["foreign.parquet"]
        assert cat.rows("SELECT count(*) AS n FROM samples") == [{"n": 3}]
    with pytest.raises(InputError, match=r"corrupt\.parquet"):
        read_table(corrupt)


def test_wrong_table_file_is_rejected(results_home: Path) -> None:
    path = ResultsDir().write("runs", [{"run_id": "a"}])
    moved = ResultsDir().table_dir("samples") / "stray.parquet"
    moved.parent.mkdir(parents=True, exist_ok=True)
    moved.write_bytes(path.read_bytes())
    with Catalog() as cat:
        assert [Path(p.path).name for p in cat.problems] == ["stray.parquet"]
        assert "expected 'samples'" in str(cat.problems[0])


def test_db_cli_sql_json_csv_and_tables(results_home: Path) -> None:
    ResultsDir().write("runs", [{"run_id": "r1", "benchmark": "bcast", "msg_size_bytes": 4}])
    exe = [sys.executable, "-m", "tailcast"]
    out = subprocess.run(
        [*exe, "db", "sql", "SELECT run_id, msg_size_bytes FROM runs", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == [{"run_id": "r1", "msg_size_bytes": 4}]
    out = subprocess.run(
        [*exe, "db", "sql", "SELECT benchmark FROM runs", "--csv"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.splitlines() == ["benchmark", "bcast"]
    out = subprocess.run(
        [*exe, "db", "tables", "--json"], capture_output=True, text=True, check=True
    )
    tables = {t["table"]: t for t in json.loads(out.stdout)["tables"]}
    assert tables["runs"]["files"] == 1 and tables["runs"]["rows"] == 1
    bad = subprocess.run([*exe, "db", "sql", "SELEC 1"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    bad = subprocess.run(
        [*exe, "db", "sql", "SELECT * FROM nowhere"], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "nowhere" in bad.stderr and bad.stderr.count("\n") == 1
