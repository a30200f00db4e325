"""Whether a synthetic trace can be built here: its memory estimate against the memory the
kernel says is available, checked before anything is allocated, so `trace synth -n
100000000` is refused at once instead of growing until the machine swaps.

The generators build a trace row by row in Python lists (schema.TraceBuilder) and convert
them to Arrow, so their peak memory grows with the rows. Measured peak RSS of `trace synth`
less that of a 10-row synth (Python 3.11, pyarrow 26, this machine): osu allreduce 256
ranks x 21 sizes x 100 iterations 367 B per row; all2all on 700 ranks 460; seed002 on 1000
ranks 457; randomapp 500,000 flows 397; poisson 16 ranks x 20,000 messages 578. ROW_BYTES is
the largest, rounded up. Per-rank count lists (alltoallv, the v-collectives) add
ELEMENT_BYTES per element: the list's pointer and its Arrow value (alltoallv on 64 ranks,
11 sizes x 100 iterations: 193 MB measured, 229 MB estimated).
"""

from __future__ import annotations

from pathlib import Path

from tailcast.errors import UsageError

ROW_BYTES = 600
ELEMENT_BYTES = 16
MEMINFO = Path("/proc/meminfo")


def available_bytes(meminfo: Path = MEMINFO) -> int | None:
    """MemAvailable of /proc/meminfo (the kernel's estimate of what can be allocated
    without swapping), in bytes; None where there is no such file or line."""
    try:
        text = meminfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024  # the kernel writes kB (KiB)
    return None


def estimate_bytes(rows: int, list_elements: int = 0) -> int:
    """Peak memory of building a trace of `rows` rows (module doc)."""
    return rows * ROW_BYTES + list_elements * ELEMENT_BYTES


def check_fits(what: str, rows: int, list_elements: int = 0, meminfo: Path = MEMINFO) -> None:
    """UsageError when building `what` (a trace of `rows` rows) would need more memory than
    is available, naming both."""
    need = estimate_bytes(rows, list_elements)
    have = available_bytes(meminfo)
    if have is not None and need > have:
        raise UsageError(
            f"{what}: {rows:,} rows need about {_size(need)} to build, more than the "
            f"{_size(have)} available (MemAvailable, {meminfo}); use fewer ranks, sizes, "
            "iterations, flows or messages"
        )


def _size(count: int) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count / 1e3:.1f} kB"
