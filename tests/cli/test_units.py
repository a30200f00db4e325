"""One size grammar for every command (agent sizes, campaign TOML, `--background bytes=`,
`trace synth --sizes`, `predict`): binary units, ASCII digits, a typed error otherwise."""

from __future__ import annotations

import pytest

from tailcast.errors import UsageError
from tailcast.units import parse_size, parse_sizes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", 4),
        ("0", 0),
        ("1K", 1024),
        ("1k", 1024),
        ("32KiB", 32768),
        ("32kb", 32768),
        (" 1 M ", 1 << 20),
        ("1MiB", 1 << 20),
        ("2G", 2 << 30),
        ("512B", 512),
    ],
)
def test_sizes_in_binary_units(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "K", "1Q", "4²", "４", "1.5K", "-1", "1iB", "1KK", "1 K B"])
def test_anything_else_is_a_usage_error_naming_the_text(text: str) -> None:
    with pytest.raises(UsageError, match="bad message size"):
        parse_size(text)


def test_lists_and_power_of_two_ranges() -> None:
    assert parse_sizes("4,1K, 1M") == [4, 1024, 1 << 20]
    assert parse_sizes("0:4") == [0, 1, 2, 4]
    assert parse_sizes("1K:4K") == [1024, 2048, 4096]
    with pytest.raises(UsageError, match="empty size range"):
        parse_sizes("4K:1K")
    with pytest.raises(UsageError, match="empty size list"):
        parse_sizes(" , ")
