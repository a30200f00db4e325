"""tailcast's own OTF2 reader (tailcast._core.read_otf2, via otf2_import) gives the same
trace rows, in the same order, and the same metadata (`unsupported` counts included) as
the `otf2` wheel's decoding it replaced (tests/traces/otf2_wheel_reference.py), on the
public Score-P archive and on archives the wheel's writer makes (bench/trace_fuzz.py's
seeds, the fuzzing's seed archives). The wheel is a dev dependency: without it this fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tailcast.traces.otf2_import import import_otf2

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from tests.traces.otf2_wheel_reference import decode_otf2 as decode_with_wheel


def assert_same(anchor: Path) -> None:
    table, meta = import_otf2(anchor)
    expected_table, expected_meta = decode_with_wheel(anchor)
    assert table.num_rows == expected_table.num_rows
    assert table.equals(expected_table, check_metadata=True)
    assert meta == expected_meta


def test_sst_macro_archive_matches_the_wheel(shared_data: Path) -> None:
    assert_same(shared_data / "traces/otf2/sst-macro-10rank/traces.otf2")


@pytest.mark.parametrize(("ranks", "rounds"), [(1, 1), (2, 1), (2, 3), (3, 5), (4, 2), (8, 4)])
def test_written_archives_match_the_wheel(tmp_path: Path, ranks: int, rounds: int) -> None:
    from trace_fuzz import write_otf2_seed

    assert_same(write_otf2_seed(tmp_path / "archive", ranks, rounds))


def test_fuzz_seed_archives_match_the_wheel() -> None:
    from trace_fuzz import OTF2_SEEDS

    for anchor in sorted(OTF2_SEEDS.glob("*/traces.otf2")):
        assert_same(anchor)
