"""Fuzzing the Parquet trace reader (issue 19 §5): a real synthetic trace file with a column
cast to a wrong type or dropped, its schema version or table name changed, or its bytes
flipped and cut. Read as `replay run` reads it (`read_meta`, then `load_columns`: the
native reader): a typed error or a trace, never another exception. Shared by
bench/fuzz_figures.py and tests/reliability/test_fuzz_readers.py.

Writing a Parquet file through pyarrow costs ~2 ms, reading one natively ~0.3 ms, so the
schema mutants are written once, all of them (every column in every wrong type, every column
dropped, every bad version and table name: `schema_mutants`), and an input is one of them or
the intact file, with its bytes damaged or not."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from text_fuzz import FuzzCounts, Step, Target, fuzz_target

from tailcast.replay.run import load_columns
from tailcast.store.schemas import META_SCHEMA_VERSION, META_TABLE
from tailcast.traces.io import read_meta, write_trace
from tailcast.traces.synth.osu import osu_trace

WRONG_TYPES = [pa.string(), pa.float64(), pa.int8(), pa.bool_(), pa.list_(pa.int64())]


def _bytes(table: pa.Table, meta: dict[bytes, bytes]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    return sink.getvalue()


def schema_mutants(table: pa.Table) -> Iterator[bytes]:
    meta = dict(table.schema.metadata or {})
    for i in range(table.num_columns):
        for to in WRONG_TYPES:  # a column of a wrong type
            try:
                column = table.column(i).cast(to)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                column = pa.nulls(table.num_rows, to)
            yield _bytes(table.set_column(i, pa.field(table.field(i).name, to), column), meta)
        yield _bytes(table.remove_column(i), meta)  # a column missing
    for version in (b"99", b"-1", b"x", b""):
        yield _bytes(table, {**meta, META_SCHEMA_VERSION: version})
    for name in (b"runs", b"", b"trace\x00"):
        yield _bytes(table, {**meta, META_TABLE: name})


def parquet_seeds(work: Path) -> tuple[bytes, list[bytes]]:
    """The intact trace file and its schema mutants."""
    table, meta = osu_trace("allreduce", 4, [8, 1024], 3)
    path = write_trace(table, work / "base.parquet", meta)
    return path.read_bytes(), list(schema_mutants(pq.read_table(path)))


def _byte_mutant(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    if rng.random() < 0.3:
        del buf[rng.randrange(len(buf)) :]
    return bytes(buf)


def _stepper(seeds: tuple[bytes, list[bytes]], scratch: Path) -> Step:
    base, mutants = seeds
    path = scratch / "fuzz.parquet"

    def step(rng: random.Random) -> object:
        if rng.random() < 0.5:  # a schema mutant, its bytes damaged half of the time
            blob = rng.choice(mutants)
            blob = _byte_mutant(blob, rng) if rng.random() < 0.5 else blob
        else:
            blob = _byte_mutant(base, rng)
        path.write_bytes(blob)
        return read_meta(path), load_columns(path)

    return step


TARGET = Target(parquet_seeds, _stepper)


def fuzz_parquet(inputs: int, seed: int = 19) -> FuzzCounts:
    """`inputs` mutants read in this process."""
    return fuzz_target(TARGET, inputs, seed)
