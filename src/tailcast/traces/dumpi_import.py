"""SST DUMPI import: a `.meta` text file plus one binary `<prefix>-<rank>.bin` per rank.

The `.meta` file is `key=value` lines (hostname, numprocs, username, startime, fileprefix,
version, subversion, subsubversion); rank r's trace is `<fileprefix>-<r:04d>.bin` next to it.
Our own reader (tailcast.traces.dumpi_format, written from the public format description of
sst-dumpi's dumpi/common) parses each file; tailcast.traces.dumpi_convert maps the calls to
trace rows. Calls with no tailcast operation are counted in `unsupported`; so are calls that
follow a record whose argument layout we do not know (its length is unknown, so the rest of
that rank is counted from the file's footer instead of read).

Times are DUMPI's wall clock (cpu clock when a trace has no wall time), in ns since the
earliest first call of any rank.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from tailcast.errors import InputError
from tailcast.traces.dumpi_convert import DumpiConverter
from tailcast.traces.dumpi_format import DumpiBin, read_bin
from tailcast.traces.io import TraceMeta

MAX_RANKS = 1 << 20


@dataclass
class DumpiMeta:
    """The content of a `.meta` file."""

    path: Path
    numprocs: int
    fileprefix: str
    values: dict[str, str] = field(default_factory=dict)

    def bin_path(self, rank: int) -> Path:
        return self.path.parent / f"{self.fileprefix}-{rank:04d}.bin"


def read_dumpi_meta(path: Path) -> DumpiMeta:
    """Parses a `.meta` file; malformed lines raise InputError naming the line."""
    path = Path(path)
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not a DUMPI .meta text file ({exc.reason})") from None
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror})") from None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise InputError(path, f"expected 'key=value', got {line!r}", lineno)
        values[key.strip()] = value.strip()
        lines[key.strip()] = lineno
    for key in ("numprocs", "fileprefix"):
        if key not in values:
            raise InputError(path, f"missing '{key}=' line")
    try:
        numprocs = int(values["numprocs"])
    except ValueError:
        msg = f"numprocs is not an integer: {values['numprocs']!r}"
        raise InputError(path, msg, lines["numprocs"]) from None
    if not 0 < numprocs <= MAX_RANKS:
        raise InputError(path, f"numprocs {numprocs} out of range", lines["numprocs"])
    prefix = values["fileprefix"]
    if not prefix or "/" in prefix:
        raise InputError(path, f"bad fileprefix {prefix!r}", lines["fileprefix"])
    return DumpiMeta(path, numprocs, prefix, values)


def read_dumpi_bins(meta: DumpiMeta) -> list[DumpiBin]:
    bins = []
    for rank in range(meta.numprocs):
        bin_path = meta.bin_path(rank)
        if not bin_path.is_file():
            msg = f"rank {rank}'s trace {bin_path.name} is missing (numprocs={meta.numprocs})"
            raise InputError(meta.path, msg)
        bins.append(read_bin(bin_path))
    return bins


def import_dumpi(path: Path) -> tuple[pa.Table, TraceMeta]:
    """Reads a DUMPI trace given its `.meta` file."""
    meta = read_dumpi_meta(Path(path))
    bins = read_dumpi_bins(meta)
    conv = DumpiConverter(bins)
    conv.run()
    unsupported: Counter[str] = Counter(conv.unsupported)
    footer: Counter[str] = Counter()
    ignored: Counter[str] = Counter()
    for b in bins:
        footer.update(b.call_counts)
        ignored.update(b.ignored_counts)
        for name, count in b.unparsed.items():
            unsupported[f"MPI_{name} (not read: follows a call of unknown layout)"] += count
    first = bins[0]
    extra = {
        "dumpi_version": ".".join(str(v) for v in first.version),
        "dumpi_start_time": str(first.start_time),
        "hostname": meta.values.get("hostname", first.hostname),
        "username": meta.values.get("username", first.username),
        "rank_hostnames": json.dumps([b.hostname for b in bins]),
        "dumpi_footer_calls": json.dumps(dict(sorted(footer.items()))),
        "comms": json.dumps({str(i): m for i, m in sorted(conv.members.items()) if i != 0}),
    }
    if ignored:
        extra["dumpi_ignored_calls"] = json.dumps(dict(sorted(ignored.items())))
    if any(b.mesh_coords for b in bins):
        extra["rank_mesh_coords"] = json.dumps([b.mesh_coords for b in bins])
    if conv.partial:
        extra["dumpi_partial_splits"] = "true"
    has_wall = any(r.wall_ns for b in bins for r in b.records[:1])
    trace_meta = TraceMeta(
        ranks=meta.numprocs,
        application=meta.fileprefix,
        source_format="dumpi",
        clock=f"DUMPI {'wall' if has_wall else 'cpu'} clock, ns since the first call",
        unsupported=dict(unsupported),
        extra=extra,
    )
    return conv.builder.table(), trace_meta
