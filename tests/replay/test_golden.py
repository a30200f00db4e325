"""Every bundled fabric's `replay run --json` transcript equals its golden file, byte for
byte (tests/replay/golden_cases.py says what the cases are and how to re-bless)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.replay.golden_cases import CASES, Case, fabrics, golden_path, transcript


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("fabric", fabrics())
def test_replay_matches_golden(fabric: str, case: Case, tmp_path: Path) -> None:
    path = golden_path(fabric, case)
    assert path.exists(), f"no golden file {path.name}: run scripts/bless-golden"
    assert transcript(fabric, case, tmp_path) == path.read_text(), (
        f"{fabric} {case.name} differs from {path.name}; if the change is intended, "
        "run scripts/bless-golden and say why in the commit"
    )


def test_every_golden_file_has_a_case() -> None:
    expected = {golden_path(f, c).name for f in fabrics() for c in CASES}
    on_disk = {p.name for p in golden_path("x", CASES[0]).parent.glob("*.json")}
    assert on_disk == expected
