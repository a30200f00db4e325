"""SimGrid TiT → tailcast Parquet trace without Arrow: the native converter
(`_core.TitConverter`: crates/trace-formats/src/tit/convert.rs) parses the lines and writes
the trace layout (traces.layout) itself. Per-rank files stream through in bounded memory;
a single file holding every rank is parsed whole (its rows must be sorted by rank)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tailcast import _core
from tailcast.errors import InputError
from tailcast.store.atomic import atomic_path
from tailcast.store.footer import file_metadata
from tailcast.traces.layout import DELTA_COLUMNS, PAGE_ROWS, ROW_GROUP_ROWS
from tailcast.traces.meta import TABLE, TraceMeta
from tailcast.traces.tit_source import DEFAULT_FLOPS_PER_S, open_tit, tit_columns


def convert_tit(
    path: Path,
    dst: Path,
    flops_per_s: float = DEFAULT_FLOPS_PER_S,
    progress: Callable[[int], None] | None = None,
) -> TraceMeta:
    """Writes the TiT trace at `path` as a tailcast Parquet trace at `dst` (atomically);
    `progress` gets the rows of each row group. InputError names file and line."""
    source = open_tit(path)
    with atomic_path(Path(dst)) as tmp:
        try:
            converter = _core.TitConverter(
                source.files, source.per_rank, source.ranks, flops_per_s, tmp,
                tit_columns(source), sorted(DELTA_COLUMNS), ROW_GROUP_ROWS, PAGE_ROWS,
            )  # fmt: skip
            converter.run(progress)
        except ValueError as exc:
            if len(exc.args) == 3:
                file, line, message = exc.args
                raise InputError(Path(file), message, line) from None
            raise InputError(Path(path), str(exc)) from None
        except OSError as exc:
            raise InputError(Path(path), f"cannot read ({exc})") from None
        meta = source.meta(converter.unsupported(), flops_per_s)
        kv = file_metadata(TABLE, meta.to_kv())
        converter.finish({k.decode(): v.decode() for k, v in kv.items()})
    return meta
