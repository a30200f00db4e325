"""One replay is one scenario: `replay run` checks its fabric file once and builds the fabric
once, whatever the background (issue 38: it used to build it two to four times, placing the
foreground in Python and again in the engine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tailcast import _core
from tailcast.cli.main import app
from tailcast.errors import UsageError
from tests.replay.conftest import osu_parquet

CASES = {
    "plain": ["--fabric", "fat-tree-16"],
    "streamed": ["--fabric", "fat-tree-16", "--stream"],
    "background job": ["--fabric", "fat-tree-16", "--background", "uniform:nodes=4:load=0.3"],
    "background from b": [
        *("--fabric", "marconi100", "--background-b", "0.3"),
        *("--placement", "different_islands"),
    ],
    "background trace": ["--fabric", "tree-2x2x4"],  # + --background-trace, below
}


@pytest.mark.parametrize("case", CASES)
def test_replay_run_checks_and_builds_its_fabric_once(
    tmp_path: Path, monkeypatch: Any, case: str
) -> None:
    monkeypatch.setenv("TAILCAST_HOME", str(tmp_path / "home"))
    trace = osu_parquet(tmp_path, "alltoall", 8, 4096, iterations=3)
    args = ["replay", "run", str(trace), "--json", *CASES[case]]
    if case == "background trace":
        args += ["--background-trace", f"{trace}@random"]
    before = _core.fabric_work()
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    validated, built = (a - b for a, b in zip(_core.fabric_work(), before, strict=True))
    assert (validated, built) == (1, 1)
    summary = json.loads(out.stdout)
    assert summary["actions"] > 0
    assert (summary["background_messages"] > 0) == (case in ("background job", "background from b"))


def test_a_background_that_does_not_fit_is_the_users_to_change(tmp_path: Path) -> None:
    """The engine places the background; what cannot be placed is a usage error naming the
    numbers, after one build."""
    trace = osu_parquet(tmp_path, "alltoall", 16, 4096)
    args = ["replay", "run", str(trace), "--no-store", "--fabric", "dfp-test"]
    before = _core.fabric_work()
    out = CliRunner().invoke(app, [*args, "--background-b", "0.9"])
    assert isinstance(out.exception, UsageError)  # exit 2 (tests/cli/test_bad_input.py)
    assert "72 background nodes" in str(out.exception) and "only 64 are free" in str(out.exception)
    assert _core.fabric_work()[1] - before[1] == 1
