"""Fuzzing the Parquet trace reader (issue 19 §5): a real synthetic trace file with a column
cast to a wrong type or dropped, its schema version or table name changed, or its bytes
flipped and cut. Read as `replay run` reads it (`read_meta`, then `load_columns`): a typed
error or a trace, never another exception. Shared by bench/fuzz_figures.py and
tests/reliability/test_fuzz_readers.py."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from text_fuzz import FuzzCounts

from tailcast.replay.run import load_columns
from tailcast.store.schemas import META_SCHEMA_VERSION, META_TABLE
from tailcast.traces.io import read_meta, write_trace
from tailcast.traces.synth.osu import osu_trace

WRONG_TYPES = [pa.string(), pa.float64(), pa.int8(), pa.bool_(), pa.list_(pa.int64())]


def _base(work: Path) -> tuple[pa.Table, bytes]:
    table, meta = osu_trace("allreduce", 4, [8, 1024], 3)
    path = write_trace(table, work / "base.parquet", meta)
    return pq.read_table(path), path.read_bytes()


def _schema_mutant(table: pa.Table, rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    meta = dict(table.schema.metadata or {})
    if kind == 0:  # a column of a wrong type
        i = rng.randrange(table.num_columns)
        to = rng.choice(WRONG_TYPES)
        try:
            column = table.column(i).cast(to)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            column = pa.nulls(table.num_rows, to)
        table = table.set_column(i, pa.field(table.field(i).name, to), column)
    elif kind == 1:  # a column missing
        table = table.remove_column(rng.randrange(table.num_columns))
    elif kind == 2:
        meta[META_SCHEMA_VERSION] = rng.choice([b"99", b"-1", b"x", b""])
    else:
        meta[META_TABLE] = rng.choice([b"runs", b"", b"trace\x00"])
    sink = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    return sink.getvalue()


def _byte_mutant(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    if rng.random() < 0.3:
        del buf[rng.randrange(len(buf)) :]
    return bytes(buf)


def fuzz_parquet(inputs: int, seed: int = 19, keep: Path | None = None) -> FuzzCounts:
    """`inputs` mutants read in this process; `keep` (a directory) receives each input
    before it is read, so an input that aborts the process is left there."""
    rng = random.Random(seed)
    counts = FuzzCounts()
    with tempfile.TemporaryDirectory(prefix="tailcast-fuzz-") as scratch:
        work = Path(scratch)
        table, data = _base(work)
        path = (keep or work) / "fuzz.parquet"
        for _ in range(inputs):
            blob = _schema_mutant(table, rng) if rng.random() < 0.5 else _byte_mutant(data, rng)
            path.write_bytes(blob)
            counts.attempt(lambda: (read_meta(path), load_columns(path)))
    return counts


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from parquet_fuzz import fuzz_parquet
c = fuzz_parquet(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
print(json.dumps({"inputs": c.inputs, "accepted": c.accepted, "typed": dict(c.typed_errors),
                  "crashes": dict(c.crashes), "slow": c.slow, "max_s": c.max_input_s}))
"""


def fuzz_parquet_isolated(inputs: int, seed: int = 19, chunk: int = 500) -> FuzzCounts:
    """`fuzz_parquet` in child processes of `chunk` inputs each: an input that aborts the
    interpreter (a C++ exception escaping pyarrow) is counted as a crash and kept in
    `examples` as the path of a copy, and the fuzzing goes on with the next chunk."""
    counts = FuzzCounts()
    keep_root = Path(tempfile.mkdtemp(prefix="tailcast-fuzz-crashes-"))
    for k, start in enumerate(range(0, inputs, chunk)):
        n = min(chunk, inputs - start)
        keep = keep_root / f"chunk-{k}"
        keep.mkdir()
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(Path(__file__).parent), str(n), str(seed + k),
             str(keep)],
            capture_output=True, text=True,
        )  # fmt: skip
        if child.returncode != 0:
            last = child.stderr.strip().splitlines()
            what = next((x.strip() for x in last if "what()" in x), last[-1] if last else "")
            counts.crashes[f"process died ({child.returncode}): {what[:100]}"] += 1
            counts.examples.append(str(keep / "fuzz.parquet"))
            counts.inputs += 1  # the inputs before it in the chunk are not counted
            continue
        doc = json.loads(child.stdout)
        counts.inputs += doc["inputs"]
        counts.accepted += doc["accepted"]
        counts.typed_errors.update(doc["typed"])
        counts.crashes.update(doc["crashes"])
        counts.slow += doc["slow"]
        counts.max_input_s = max(counts.max_input_s, doc["max_s"])
    return counts
