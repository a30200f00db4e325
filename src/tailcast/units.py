"""Parsing of human-written quantities shared by every command (`4,1K,32K,1M`)."""

from __future__ import annotations

import re

from tailcast.errors import UsageError

# Digits are ASCII only: int() would accept '４' or reject '4²' with a bare ValueError.
_SIZE = re.compile(r"^\s*(\d+)\s*(?:([KMG])I?B?|B)?\s*$", re.IGNORECASE | re.ASCII)
# OSU and MPI users mean powers of two: 1K = 1024 bytes, as OSU's own -m option does.
_FACTOR = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    """'4' → 4, '1K' → 1024, '32KiB' → 32768, '1 MB' → 1048576 (bytes)."""
    match = _SIZE.match(text)
    if not match:
        raise UsageError(f"bad message size {text!r} (use e.g. 4, 1K, 32K, 1M)")
    return int(match.group(1)) * _FACTOR[(match.group(2) or "").upper()]


def parse_sizes(text: str) -> list[int]:
    """A comma-separated list ('4,1K,32K,1M') or an OSU-style power-of-two range ('1:1M',
    which holds 0 too when it starts there)."""
    if ":" in text:
        lo_text, hi_text = text.split(":", 1)
        lo, hi = parse_size(lo_text), parse_size(hi_text)
        if lo > hi:
            raise UsageError(f"empty size range {text!r}")
        sizes, size = [], lo
        while size <= hi:
            sizes.append(size)
            size = size * 2 if size else 1
        return sizes
    sizes = [parse_size(part) for part in text.split(",") if part.strip()]
    if not sizes:
        raise UsageError("empty size list")
    return sizes


def format_size(n_bytes: int) -> str:
    """4 → '4 B', 32768 → '32 KiB', 1048576 → '1 MiB' (binary units, as parse_size reads)."""
    for factor, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n_bytes >= factor and n_bytes % factor == 0:
            return f"{n_bytes // factor} {unit}"
    return f"{n_bytes} B"


def format_us(value_us: float) -> str:
    """A latency in the unit that keeps two or three significant digits: '850 µs', '4.1 ms'."""
    if value_us >= 1e6:
        return f"{value_us / 1e6:.2g} s" if value_us < 1e7 else f"{value_us / 1e6:.0f} s"
    if value_us >= 1e3:
        return f"{value_us / 1e3:.2g} ms" if value_us < 1e4 else f"{value_us / 1e3:.0f} ms"
    return f"{value_us:.2g} µs" if value_us < 10 else f"{value_us:.0f} µs"
