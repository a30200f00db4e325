"""SimGrid time-independent trace (TiT) import.

A TiT trace is text, one action per line: `<rank> <action> <args…>`. Either one file holds
all ranks, or each rank has its own file and an index ("list") file names them, one path per
line, rank i = line i (the form `smpirun -replay LIST` takes). A directory of per-rank files
(`…<rank>.txt`) is accepted too. Argument layout follows SimGrid 3.32 smpi_replay.cpp:
sizes are element counts of a datatype given by SimGrid's numeric id (0 double, 1 int,
2 char, …); the default type is MPI_DOUBLE when `init` has an argument, else MPI_BYTE.
Collectives record that size as `dtype_bytes` (their element counts decide Open MPI's
fallbacks); TiT has no reduction op, so `commutative` stays null (commutative).
Actions the importer does not map (comm_size, location, …) are counted in the metadata's
`unsupported`, not stored.

TiT has no clock: each call is given zero duration and `compute F` / `sleep S` advance the
rank's clock at `flops_per_s` (default 1 Gflop/s, so one flop = one ns).

The lines are parsed natively (`_core.TitReader`, crates/trace-formats/src/tit/parse.rs) a
chunk of rows at a time; this module builds an Arrow table of them (for `trace info`,
`validate`, export). Conversion to Parquet does not go through Arrow: `tit_convert`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from tailcast import _core
from tailcast.errors import InputError
from tailcast.store.parquet_io import conform
from tailcast.store.schemas import TRACE
from tailcast.traces.layout import fitting_int
from tailcast.traces.meta import TABLE, TraceMeta
from tailcast.traces.schema import sorted_trace
from tailcast.traces.tit_source import (
    DEFAULT_FLOPS_PER_S,
    TitSource,
    is_tit_file,
    is_tit_list,
    open_tit,
    tit_columns,
)

__all__ = ["import_tit", "is_tit_file", "is_tit_list", "open_tit"]
CHUNK_ROWS = 1 << 16
OP_TYPE = pa.dictionary(pa.int8(), pa.string())


def tit_schema(source: TitSource) -> pa.Schema:
    """The columns the source's rows have (optional ones only when an action sets them)."""
    present = set(tit_columns(source))
    fields = []
    for field in TRACE:
        if field.name in present:
            if field.name == "rank":
                field = field.with_type(fitting_int(0, max(0, source.ranks - 1)))
            elif field.name == "op":
                field = field.with_type(OP_TYPE)
            elif field.name == "comm":
                field = field.with_type(pa.int8())
            fields.append(field)
    return pa.schema(fields)


def tit_batches(
    source: TitSource, schema: pa.Schema, reader: _core.TitReader
) -> Iterator[pa.RecordBatch]:
    """The rows of every file, CHUNK_ROWS at a time (file order; InputError names the file
    and line of what cannot be read)."""
    names = pa.array(_core.TitReader.op_names(), pa.string())
    for index, file in enumerate(source.files):
        try:
            reader.open(file, index if source.per_rank else None)
            while (columns := reader.read(CHUNK_ROWS)) is not None:
                yield _batch(columns, schema, names)
        except ValueError as exc:
            line, message = exc.args
            raise InputError(file, message, line) from None
        except OSError as exc:
            raise InputError(file, f"cannot read ({exc.strerror})") from None


def _batch(columns: dict[str, np.ndarray], schema: pa.Schema, names: pa.Array) -> pa.RecordBatch:
    n = len(columns["op"])
    times = pa.array(columns["time_ns"])
    arrays: dict[str, pa.Array] = {
        "rank": pa.array(columns["rank"]),
        "seq": pa.array(columns["seq"]),
        "op": pa.DictionaryArray.from_arrays(pa.array(columns["op"].astype(np.int8)), names),
        "comm": pa.array(np.zeros(n, dtype=np.int8)),
        "t_start_ns": times,
        "t_end_ns": times,
    }
    for name in ("peer", "root", "tag", "send_bytes", "recv_bytes", "request", "dtype_bytes"):
        arrays[name] = _nullable(columns[name], columns[f"{name}_valid"])
    for name in ("requests", "send_counts", "recv_counts"):
        valid = columns[f"{name}_valid"]
        mask = None if valid.all() else pa.array(~valid)
        arrays[name] = pa.ListArray.from_arrays(
            pa.array(columns[f"{name}_offsets"]), pa.array(columns[f"{name}_values"]), mask=mask
        )
    return pa.RecordBatch.from_arrays([arrays[f.name].cast(f.type) for f in schema], schema=schema)


def _nullable(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(values) if valid.all() else pa.array(values, mask=~valid)


def import_tit(path: Path, flops_per_s: float = DEFAULT_FLOPS_PER_S) -> tuple[pa.Table, TraceMeta]:
    """Reads a TiT file, list file or directory of per-rank files into one TRACE table."""
    source = open_tit(path)
    reader = _core.TitReader(source.ranks, flops_per_s)
    schema = tit_schema(source)
    table = pa.Table.from_batches(list(tit_batches(source, schema, reader)), schema=schema)
    if not source.per_rank:
        table = sorted_trace(table)
    return conform(TABLE, table), source.meta(reader.unsupported(), flops_per_s)
