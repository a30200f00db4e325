"""Store throughput: atomic Parquet writes of `samples` rows and DuckDB queries over many
files (the shape a campaign of many small agent jobs produces)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from tailcast.store import Catalog, ResultsDir


def run() -> dict[str, object]:
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        results = ResultsDir(Path(tmp))
        n_rows = 1_000_000
        big = pa.table(
            {
                "run_id": pa.array(["big"] * n_rows),
                "iteration": pa.array(np.arange(n_rows, dtype=np.int32)),
                "latency_us": pa.array(rng.lognormal(0, 0.5, n_rows)),
            }
        )
        t0 = time.perf_counter()
        results.write("samples", big)
        write_big_s = time.perf_counter() - t0

        n_files = 200
        t0 = time.perf_counter()
        for k in range(n_files):
            results.write(
                "samples",
                {
                    "run_id": [f"run{k}"] * 1000,
                    "iteration": list(range(1000)),
                    "latency_us": rng.lognormal(0, 0.5, 1000).tolist(),
                },
            )
        small_files_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        with Catalog(results) as cat:
            open_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            rows = cat.rows(
                "SELECT run_id, quantile_cont(latency_us, 0.99) AS p99 FROM samples GROUP BY run_id"
            )
            query_s = time.perf_counter() - t1
        assert len(rows) == n_files + 1
    return {
        "rows_big_file": n_rows,
        "write_big_rows_per_s": round(n_rows / write_big_s),
        "small_files": n_files,
        "small_file_writes_per_s": round(n_files / small_files_s, 1),
        "catalog_open_ms_for_201_files": round(open_s * 1e3, 1),
        "p99_by_run_query_ms": round(query_s * 1e3, 1),
        "fsync_per_write": True,
    }
