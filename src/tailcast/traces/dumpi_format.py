"""Reader of one SST DUMPI per-rank binary trace (`<prefix>-<rank>.bin`).

File layout (sst-dumpi dumpi/common/io.c, iodefs.h; all integers big-endian):
- 8-byte magic 0xffaadd44554d5049, then the body: u32 cpu-time and u32 wall-time second
  offsets, then call records, closed by the end-of-stream label;
- header: 3 version bytes, u64 start time, host and user names (u16 length + bytes), mesh
  coordinates and sizes (u32 count + int32s; sizes only when the count > 0, from 0.5 on);
- footer: u64 magic 0xf007fee7, then u32 call counts and u32 ignored counts, one per function
  id plus one for all functions;
- "profile" records: datatype sizes (u32 count + u32 sizes), function addresses (u32 count +
  (u64, name)), performance-counter labels (u32 count + names), key/values;
- index at the very end: magic then u64 offsets of sizes, addresses, counter labels, header,
  body, footer, key/values (older files lack the first one, two or three of them).

A call record: u16 function id, u8 mask (bits: 0-1 statuses written, 2 cpu time, 3 wall time,
6 thread id, 7 performance counters), [u16 thread], per clock: start (u16 seconds since the
body's offset, u32 ns) and stop, [u8 n + n × two u64 counter values], then the arguments of
`dumpi_layouts.LAYOUTS`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailcast.errors import InputError
from tailcast.traces.dumpi_layouts import (
    ALL_FUNCTIONS,
    END_OF_STREAM,
    ENTER_EXIT_LAYOUT,
    FUNCTION_ENTER,
    FUNCTION_EXIT,
    FUNCTION_NAMES,
    LAYOUTS,
)

HEAD_MAGIC = 0xFFAADD44554D5049
FOOT_MAGIC = 0xF007FEE7
_STATUS_BITS, _CPU_BIT, _WALL_BIT, _THREAD_BIT, _PERF_BIT = 0x03, 0x04, 0x08, 0x40, 0x80
_INDEX_NAMES = ("sizes", "addresses", "perf_labels", "header", "body", "footer", "keyval")
_U16, _U32 = struct.Struct(">H"), struct.Struct(">I")
_I32, _U64 = struct.Struct(">i"), struct.Struct(">Q")


class DumpiFormatError(InputError):
    """A DUMPI file that cannot be read; the message names the byte offset."""


class _Truncated(Exception):
    pass


def _parse_layout(spec: str) -> tuple[tuple[str, str, bool], ...]:
    out = []
    for item in spec.split():
        name, kind = item.split(":")
        out.append((name, kind.rstrip("?"), kind.endswith("?")))
    return tuple(out)


_LAYOUT_BY_ID: dict[int, tuple[tuple[str, str, bool], ...]] = {
    FUNCTION_NAMES.index(name): _parse_layout(spec) for name, spec in LAYOUTS.items()
}
_LAYOUT_BY_ID[FUNCTION_ENTER] = _LAYOUT_BY_ID[FUNCTION_EXIT] = _parse_layout(ENTER_EXIT_LAYOUT)


def function_name(func: int) -> str:
    if func < ALL_FUNCTIONS:
        return FUNCTION_NAMES[func]
    return {FUNCTION_ENTER: "Function_enter", FUNCTION_EXIT: "Function_exit"}.get(
        func, f"function#{func}"
    )


@dataclass(slots=True)
class Status:
    bytes: int
    source: int
    tag: int | None


@dataclass(slots=True)
class Record:
    """One traced call. Times are (start, stop) in ns since the epoch of the trace's clock."""

    func: int
    offset: int
    thread: int | None
    cpu_ns: tuple[int, int] | None
    wall_ns: tuple[int, int] | None
    args: dict[str, Any]

    @property
    def name(self) -> str:
        return function_name(self.func)


@dataclass
class DumpiBin:
    """Everything one per-rank file holds."""

    path: Path
    version: tuple[int, int, int] = (0, 0, 0)
    start_time: int = 0
    hostname: str = ""
    username: str = ""
    mesh_coords: list[int] = field(default_factory=list)
    mesh_sizes: list[int] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    call_counts: dict[str, int] = field(default_factory=dict)
    ignored_counts: dict[str, int] = field(default_factory=dict)
    type_sizes: list[int] | None = None
    function_addresses: dict[int, str] = field(default_factory=dict)
    perf_labels: list[str] = field(default_factory=list)
    keyvals: dict[str, str] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    unparsed: dict[str, int] = field(default_factory=dict)  # calls after an unknown layout


class _Cursor:
    """Bounds-checked big-endian reads from an in-memory file."""

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise _Truncated
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int(_U16.unpack(self.take(2))[0])

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def i32(self) -> int:
        return int(_I32.unpack(self.take(4))[0])

    def u64(self) -> int:
        return int(_U64.unpack(self.take(8))[0])

    def count(self, item_bytes: int) -> int:
        """An array length, refused when the items cannot fit in the rest of the file."""
        n = self.u32()
        if n * item_bytes > len(self.data) - self.pos:
            raise _Truncated
        return n

    def string16(self) -> str:
        return self.take(self.u16()).decode("utf-8", errors="replace")

    def chars(self) -> str:
        return self.take(self.count(1)).decode("utf-8", errors="replace")

    def i32_array(self) -> list[int]:
        n = self.count(4)
        return list(struct.unpack(f">{n}i", self.take(4 * n)))

    def u16_array(self) -> list[int]:
        n = self.count(2)
        return list(struct.unpack(f">{n}H", self.take(2 * n)))


def read_bin(path: Path, body_only: bool = False) -> DumpiBin:
    """Parses one per-rank file; malformed content raises DumpiFormatError naming the offset."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read DUMPI file ({exc.strerror})") from None
    out = DumpiBin(path=path)
    cur = _Cursor(data)
    section = "file magic"
    try:
        if len(data) < 8 or cur.u64() != HEAD_MAGIC:
            raise DumpiFormatError(path, "byte offset 0: not a DUMPI trace (bad magic)")
        section = "index record"
        out.index = _read_index(path, data)
        section = "header"
        _read_header(out, _Cursor(data, out.index["header"]))
        section = "footer"
        _read_footer(out, _Cursor(data, out.index["footer"]))
        if not body_only:
            section = "profile records"
            _read_profile(out, data)
    except _Truncated:
        raise DumpiFormatError(path, f"{section} runs past the end of the file") from None
    _read_body(out, data)
    return out


def _read_index(path: Path, data: bytes) -> dict[str, int]:
    # Newest layout has 7 offsets after the magic; older files lack the leading 1-3 of them.
    for n in (7, 6, 5, 4):
        start = len(data) - 8 * (n + 1)
        if start >= 8 and _U64.unpack_from(data, start)[0] == HEAD_MAGIC:
            values = struct.unpack_from(f">{n}Q", data, start + 8)
            index = dict(zip(_INDEX_NAMES[7 - n :], values, strict=True))
            for name, off in index.items():
                if off >= start or (off < 8 and name in ("header", "body")):
                    msg = f"byte offset {start}: index names {name} at {off}, outside the file"
                    raise DumpiFormatError(path, msg)
            return index
    msg = "no index record at the end of the file (truncated trace?)"
    raise DumpiFormatError(path, msg)


def _read_header(out: DumpiBin, cur: _Cursor) -> None:
    out.version = (cur.u8(), cur.u8(), cur.u8())
    out.start_time = cur.u64()
    out.hostname, out.username = cur.string16(), cur.string16()
    out.mesh_coords = cur.i32_array()
    if out.mesh_coords and out.version >= (0, 5, 0):
        out.mesh_sizes = cur.i32_array()


def _read_footer(out: DumpiBin, cur: _Cursor) -> None:
    start = cur.pos
    if cur.u64() != FOOT_MAGIC:
        raise DumpiFormatError(out.path, f"byte offset {start}: bad footer magic")
    n = ALL_FUNCTIONS + 1
    calls = struct.unpack(f">{n}I", cur.take(4 * n))
    ignored = struct.unpack(f">{n}I", cur.take(4 * n))
    out.call_counts = {function_name(i): c for i, c in enumerate(calls[:-1]) if c}
    out.ignored_counts = {function_name(i): c for i, c in enumerate(ignored[:-1]) if c}


def _read_profile(out: DumpiBin, data: bytes) -> None:
    idx = out.index
    if idx.get("sizes"):
        cur = _Cursor(data, idx["sizes"])
        n = cur.count(4)
        out.type_sizes = list(struct.unpack(f">{n}I", cur.take(4 * n)))
    if idx.get("addresses"):
        cur = _Cursor(data, idx["addresses"])
        for _ in range(cur.count(10)):
            address = cur.u64()
            out.function_addresses[address] = cur.string16()
    if idx.get("perf_labels"):
        cur = _Cursor(data, idx["perf_labels"])
        out.perf_labels = [cur.string16() for _ in range(cur.count(2))]
    if idx.get("keyval"):
        cur = _Cursor(data, idx["keyval"])
        for _ in range(cur.count(4)):
            key = cur.string16()
            out.keyvals[key] = cur.string16()


def _read_body(out: DumpiBin, data: bytes) -> None:
    cur = _Cursor(data, out.index["body"])
    try:
        cpu_base, wall_base = cur.u32(), cur.u32()
    except _Truncated:
        raise DumpiFormatError(out.path, "body runs past the end of the file") from None
    clocks = _Clocks(cpu_base, wall_base)
    while True:
        start, func = cur.pos, -1
        try:
            func = cur.u16()
            if func == END_OF_STREAM:
                return
            if func == ALL_FUNCTIONS or func > END_OF_STREAM:
                msg = f"byte offset {start} (record {len(out.records)}): bad function id {func}"
                raise DumpiFormatError(out.path, msg)
            if func not in _LAYOUT_BY_ID:
                _stop_at_unknown(out, func)
                return
            out.records.append(_read_record(out, cur, func, start, clocks))
        except _Truncated:
            msg = (
                f"byte offset {start} (record {len(out.records)}, "
                f"{function_name(func) if func >= 0 else 'label'}): record runs past "
                "the end of the call stream (truncated trace?)"
            )
            raise DumpiFormatError(out.path, msg) from None
        if cur.pos > out.index["header"]:
            msg = f"byte offset {start}: call record overruns the header (corrupt record)"
            raise DumpiFormatError(out.path, msg)


def _stop_at_unknown(out: DumpiBin, func: int) -> None:
    """Without a layout the record's length is unknown: the rest of the stream is counted from
    the footer (calls recorded minus calls read) and reported, not guessed at."""
    read: dict[str, int] = {}
    for r in out.records:
        read[r.name] = read.get(r.name, 0) + 1
    for name, total in out.call_counts.items():
        left = total - read.get(name, 0)
        if left > 0:
            out.unparsed[name] = left
    out.unparsed.setdefault(function_name(func), 1)


class _Clocks:
    """Seconds are stored as u16 past a per-file base; a base of 0 makes them wrap at 2^16,
    so each clock is unwrapped by keeping it monotonic."""

    def __init__(self, cpu_base: int, wall_base: int) -> None:
        self.base = {"cpu": cpu_base, "wall": wall_base}
        self.last = {"cpu": 0, "wall": 0}
        self.wraps = {"cpu": 0, "wall": 0}

    def ns(self, clock: str, sec16: int, nsec: int) -> int:
        sec = sec16 + self.wraps[clock] * 65536
        if sec < self.last[clock] - 32768:
            self.wraps[clock] += 1
            sec += 65536
        self.last[clock] = sec
        return (self.base[clock] + sec) * 1_000_000_000 + nsec


def _read_record(out: DumpiBin, cur: _Cursor, func: int, start: int, clocks: _Clocks) -> Record:
    mask = cur.u8()
    thread = cur.u16() if mask & _THREAD_BIT else None
    cpu = wall = None
    if mask & _CPU_BIT:
        cpu = _times(cur, clocks, "cpu")
    if mask & _WALL_BIT:
        wall = _times(cur, clocks, "wall")
    if mask & _PERF_BIT:
        cur.take(16 * cur.u8())
    args: dict[str, Any] = {}
    for name, kind, root_only in _LAYOUT_BY_ID[func]:
        if root_only and args.get("commrank") != args.get("root"):
            continue
        args[name] = _value(out, cur, kind, mask)
    return Record(func, start, thread, cpu, wall, args)


def _times(cur: _Cursor, clocks: _Clocks, clock: str) -> tuple[int, int]:
    s_sec, s_ns, e_sec, e_ns = cur.u16(), cur.u32(), cur.u16(), cur.u32()
    return clocks.ns(clock, s_sec, s_ns), clocks.ns(clock, e_sec, e_ns)


def _value(out: DumpiBin, cur: _Cursor, kind: str, mask: int) -> Any:
    if kind == "i":
        return cur.i32()
    if kind == "h":
        return cur.u16()
    if kind == "b":
        return cur.u8()
    if kind == "q":
        return cur.u64()
    if kind == "I":
        return cur.i32_array()
    if kind == "H":
        return cur.u16_array()
    if kind == "S":
        return _statuses(out, cur, mask)
    if kind == "c":
        return cur.chars()
    if kind == "C":
        return [cur.chars() for _ in range(cur.count(4))]
    if kind == "D":
        return [[cur.chars() for _ in range(cur.count(4))] for _ in range(cur.count(4))]
    if kind == "A":
        return [cur.i32_array() for _ in range(cur.count(4))]
    if kind in ("V", "W"):
        argc = cur.count(4)
        if kind == "V" and out.version < (0, 6, 2):
            cur.u32()  # argc was written twice before 0.6.2
        return [cur.chars() for _ in range(argc)]
    if kind in ("X", "Y"):
        since = (0, 6, 9) if kind == "X" else (0, 6, 8)
        return cur.i32_array() if out.version >= since else [cur.i32()]
    raise AssertionError(f"unknown layout kind {kind!r}")


def _statuses(out: DumpiBin, cur: _Cursor, mask: int) -> list[Status] | None:
    if not mask & _STATUS_BITS:
        return None
    with_tag = out.version >= (0, 6, 3)
    result = []
    for _ in range(cur.count(10)):
        nbytes, source = cur.i32(), cur.i32()
        cur.take(2)  # cancelled, error
        result.append(Status(nbytes, source, cur.i32() if with_tag else None))
    return result
