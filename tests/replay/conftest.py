"""Helpers shared by the replay tests: synthetic OSU traces written as real Parquet files."""

from __future__ import annotations

from pathlib import Path

from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace


def osu_parquet(tmp: Path, collective: str, ranks: int, size: int, iterations: int = 1) -> Path:
    table, meta = osu_trace(collective, ranks, [size], iterations)
    return write_trace(table, tmp / f"osu_{collective}_{ranks}_{size}.parquet", meta)
