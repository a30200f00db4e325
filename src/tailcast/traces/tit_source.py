"""Where a SimGrid TiT trace's lines are: one file holding every rank, or per-rank files
named by an index ("list") file, rank i on line i (the form `smpirun -replay LIST` takes),
or a directory of per-rank files (`…<rank>.txt`). No pyarrow here: the conversion to
Parquet (tit_convert) runs without it."""

from __future__ import annotations

import re
from pathlib import Path

from tailcast import _core
from tailcast.errors import InputError
from tailcast.traces.meta import TraceMeta

DEFAULT_FLOPS_PER_S = 1e9
# Columns every TiT row has; the optional ones come from the actions in the files.
BASE_COLUMNS = ("rank", "seq", "op", "comm", "t_start_ns", "t_end_ns")
# TRACE column order (tailcast.store.schemas; a test checks it) of what TiT rows can hold.
TIT_COLUMNS = (
    "rank", "seq", "op", "peer", "root", "send_bytes", "recv_bytes", "tag", "comm", "request",
    "t_start_ns", "t_end_ns", "send_counts", "recv_counts", "requests", "dtype_bytes",
)  # fmt: skip


class TitSource:
    """A TiT trace: its files and ranks (per_rank: file i holds rank i). A plain class, as
    store.footer.Footer is: no dataclasses or typing in `trace convert`'s start-up."""

    __slots__ = ("files", "path", "per_rank", "ranks")

    def __init__(self, path: Path, files: list[Path], per_rank: bool, ranks: int) -> None:
        self.path = path
        self.files = files
        self.per_rank = per_rank
        self.ranks = ranks

    def meta(self, unsupported: dict[str, int], flops_per_s: float) -> TraceMeta:
        """The trace metadata of its conversion."""
        return TraceMeta(
            ranks=self.ranks,
            application=self.path.stem,
            source_format="simgrid-tit",
            clock=f"synthetic: calls take 0 ns, compute at {flops_per_s:g} flop/s",
            unsupported=dict(unsupported),
        )


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


def tit_columns(source: TitSource) -> list[str]:
    """The TRACE columns the trace's rows hold, in TRACE order: the base ones and those an
    action in its files sets (a quick scan of the action names)."""
    present = set(BASE_COLUMNS) | set(_core.TitReader.columns(source.files))
    return [name for name in TIT_COLUMNS if name in present]


def is_tit_list(path: Path) -> bool:
    """True when `path` is an index file naming per-rank trace files. Each line is a whole
    path, spaces and all (SimGrid reads the index with std::getline and opens each line as
    it is: smpi_deployment.cpp, smpi_read_replay)."""
    first = _first_line(path)
    return first is not None and not _is_int(first.split()[0]) and _resolve(path, first).is_file()


def is_tit_file(path: Path) -> bool:
    first = _first_line(path)
    return first is not None and _is_int(first.split()[0])


def _first_line(path: Path) -> str | None:
    """The first line that is not blank or a comment, stripped."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                line = raw.strip()
                if line and not line.startswith("#"):
                    return line
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
