"""SimGrid time-independent trace (TiT) import.

A TiT trace is text, one action per line: `<rank> <action> <args…>`. Either one file holds
all ranks, or each rank has its own file and an index ("list") file names them, one path per
line, rank i = line i (the form `smpirun -replay LIST` takes). A directory of per-rank files
(`…<rank>.txt`) is accepted too. Argument layout follows SimGrid 3.32 smpi_replay.cpp:
sizes are element counts of a datatype given by SimGrid's numeric id (0 double, 1 int,
2 char, …); the default type is MPI_DOUBLE when `init` has an argument, else MPI_BYTE.
Actions the importer does not map (comm_size, location, …) are counted in the metadata's
`unsupported`, not stored.

TiT has no clock: each call is given zero duration and `compute F` / `sleep S` advance the
rank's clock at `flops_per_s` (default 1 Gflop/s, so one flop = one ns).

The lines are parsed natively (`_core.TitReader`, crates/replay-py/src/tit_parse.rs) a
chunk of rows at a time. Per-rank files convert to Parquet streaming, rank after rank, in
bounded memory (`convert_tit`); a single file holding every rank is read whole, since its
rows must be sorted by rank.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from tailcast import _core
from tailcast.errors import InputError
from tailcast.store.parquet_io import atomic_path, conform, file_metadata
from tailcast.store.schemas import TRACE
from tailcast.traces.layout import TraceWriter, fitting_int
from tailcast.traces.meta import TABLE, TraceMeta
from tailcast.traces.schema import sorted_trace

DEFAULT_FLOPS_PER_S = 1e9
CHUNK_ROWS = 1 << 16
# Columns every TiT row has; the optional ones come from the actions in the files.
BASE_COLUMNS = ("rank", "seq", "op", "comm", "t_start_ns", "t_end_ns")
OP_TYPE = pa.dictionary(pa.int8(), pa.string())


@dataclass(frozen=True)
class TitSource:
    """A TiT trace: its files and ranks (per_rank: file i holds rank i)."""

    path: Path
    files: list[Path]
    per_rank: bool
    ranks: int


def open_tit(path: Path) -> TitSource:
    """The files of a TiT file, list file or directory of per-rank files."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file")
    per_rank = path.is_dir() or is_tit_list(path)
    if per_rank:
        files = _rank_files(path)
        return TitSource(path, files, True, len(files))
    try:
        ranks = _core.TitReader.count_ranks(path)
    except ValueError as exc:
        line, message = exc.args
        raise InputError(path, message, line) from None
    if ranks == 0:
        raise InputError(path, "no TiT actions in file")
    return TitSource(path, [path], False, ranks)


def tit_schema(source: TitSource) -> pa.Schema:
    """The columns the source's rows have (optional ones only when an action sets them)."""
    optional = set(_core.TitReader.columns(source.files))
    fields = []
    for field in TRACE:
        if field.name in BASE_COLUMNS or field.name in optional:
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
    for name in ("peer", "root", "tag", "send_bytes", "recv_bytes", "request"):
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


def _meta(source: TitSource, reader: _core.TitReader, flops_per_s: float) -> TraceMeta:
    return TraceMeta(
        ranks=source.ranks,
        application=source.path.stem,
        source_format="simgrid-tit",
        clock=f"synthetic: calls take 0 ns, compute at {flops_per_s:g} flop/s",
        unsupported=dict(reader.unsupported()),
    )


def import_tit(path: Path, flops_per_s: float = DEFAULT_FLOPS_PER_S) -> tuple[pa.Table, TraceMeta]:
    """Reads a TiT file, list file or directory of per-rank files into one TRACE table."""
    source = open_tit(path)
    reader = _core.TitReader(source.ranks, flops_per_s)
    schema = tit_schema(source)
    table = pa.Table.from_batches(list(tit_batches(source, schema, reader)), schema=schema)
    if not source.per_rank:
        table = sorted_trace(table)
    return conform(TABLE, table), _meta(source, reader, flops_per_s)


def convert_tit(
    path: Path,
    dst: Path,
    flops_per_s: float = DEFAULT_FLOPS_PER_S,
    progress: Callable[[int], None] | None = None,
) -> TraceMeta:
    """Writes the TiT trace at `path` as a tailcast Parquet trace at `dst` (atomically).
    Per-rank files stream through in bounded memory; `progress` gets each chunk's rows."""
    from tailcast.traces.io import write_trace

    source = open_tit(path)
    if not source.per_rank:
        table, meta = import_tit(path, flops_per_s)
        write_trace(table, dst, meta)
        return meta
    reader = _core.TitReader(source.ranks, flops_per_s)
    schema = tit_schema(source)
    kv = file_metadata(TABLE, {"ranks": str(source.ranks)})
    with atomic_path(Path(dst)) as tmp, TraceWriter(tmp, schema, kv) as writer:
        for batch in tit_batches(source, schema, reader):
            writer.write(batch)
            if progress is not None:
                progress(batch.num_rows)
        meta = _meta(source, reader, flops_per_s)
        writer.add_metadata(file_metadata(TABLE, meta.to_kv()))
    return meta


def is_tit_list(path: Path) -> bool:
    """True when `path` is an index file naming per-rank trace files."""
    first = _first_token(path)
    return first is not None and not _is_int(first) and _resolve(path, first).is_file()


def is_tit_file(path: Path) -> bool:
    first = _first_token(path)
    return first is not None and _is_int(first)


def _first_token(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                tokens = raw.split()
                if tokens and not tokens[0].startswith("#"):
                    return tokens[0]
    except OSError:
        return None
    return None


def _is_int(text: str) -> bool:
    return re.fullmatch(r"-?\d+", text) is not None


def _resolve(index: Path, entry: str) -> Path:
    p = Path(entry)
    return p if p.is_absolute() else index.parent / p


def _rank_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = [p for p in path.iterdir() if p.is_file() and re.search(r"\d+\.\w+$", p.name)]
        if not files:
            raise InputError(path, "directory holds no per-rank TiT files (…<rank>.txt)")
        return sorted(files, key=lambda p: int(re.findall(r"(\d+)\.\w+$", p.name)[0]))
    files = []
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            entry = raw.strip()
            if entry and not entry.startswith("#"):
                target = _resolve(path, entry)
                if not target.is_file():
                    raise InputError(path, f"listed trace {entry!r} does not exist", lineno)
                files.append(target)
    return files
