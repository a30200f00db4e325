"""Format detection and conversion between trace formats.

Inputs: an OTF2 anchor file (`traces.otf2`), a SimGrid TiT file / list file / directory,
a DUMPI `.meta`, or a tailcast Parquet trace. Outputs: tailcast Parquet or SimGrid TiT.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tailcast.errors import InputError, UsageError
from tailcast.traces.meta import TraceMeta

TYPE_CHECKING = False  # (typing.TYPE_CHECKING, which type checkers read as True)
if TYPE_CHECKING:  # pyarrow loads only for the formats that go through Arrow tables
    import pyarrow as pa

FORMATS = ("otf2", "tit", "dumpi", "parquet")
OUTPUTS = ("parquet", "tit")
_PARQUET_MAGIC = b"PAR1"
_OTF2_MAGIC = b"OTF2"


def detect_format(path: Path) -> str:
    """Names the format of `path`, from its name and first bytes."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file or directory")
    if path.is_dir():
        return "tit"
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    if path.suffix == ".otf2" or head.startswith(_OTF2_MAGIC):
        return "otf2"
    if path.suffix == ".meta":
        return "dumpi"
    from tailcast.traces.tit_source import is_tit_file, is_tit_list

    if is_tit_file(path) or is_tit_list(path):
        return "tit"
    raise InputError(path, f"cannot tell the trace format; pass --from ({', '.join(FORMATS)})")


def load_trace(path: Path, fmt: str | None = None) -> tuple[pa.Table, TraceMeta]:
    """Reads any supported input into a TRACE table and its metadata."""
    path = Path(path)
    fmt = fmt or detect_format(path)
    if fmt == "parquet":
        from tailcast.traces.io import read_trace

        return read_trace(path)
    if fmt == "tit":
        from tailcast.traces.tit_import import import_tit

        return import_tit(path)
    if fmt == "otf2":
        from tailcast.traces.otf2_import import import_otf2

        return import_otf2(path)
    if fmt == "dumpi":
        from tailcast.traces.dumpi_import import import_dumpi

        return import_dumpi(path)
    raise UsageError(f"unknown input format {fmt!r}; known: {', '.join(FORMATS)}")


def convert(
    src: Path,
    dst: Path,
    to: str = "parquet",
    fmt: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> TraceMeta:
    """Converts `src` to `dst`; returns the trace's metadata. `progress` is called with
    the rows of each chunk where the conversion streams (TiT to Parquet)."""
    if to not in OUTPUTS:
        raise UsageError(f"unknown output format {to!r}; known: {', '.join(OUTPUTS)}")
    fmt = fmt or detect_format(src)
    if fmt == "tit" and to == "parquet":
        from tailcast.traces.tit_convert import convert_tit

        return convert_tit(Path(src), Path(dst), progress=progress)
    table, meta = load_trace(src, fmt)
    if to == "parquet":
        from tailcast.traces.io import write_trace

        write_trace(table, Path(dst), meta)
    else:
        from tailcast.traces.tit_export import export_tit

        export_tit(table, meta, Path(dst))
    return meta
