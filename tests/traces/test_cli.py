"""`tailcast trace …` end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tailcast.cli.main import app
from tailcast.units import parse_sizes

runner = CliRunner()


def test_sizes() -> None:
    assert parse_sizes("1:8") == [1, 2, 4, 8]
    assert parse_sizes("4K,1M") == [4096, 1 << 20]


def test_synth_info_validate_convert(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "osu.parquet"
    argv = ["trace", "synth", "osu", "--collective", "allreduce", "--ranks", "4"]
    argv += ["--sizes", "8,64", "--iterations", "3", "-o", str(out)]
    res = runner.invoke(app, argv)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["trace", "info", str(out), "--json"])
    info = json.loads(res.stdout)
    assert info["ops"]["allreduce"]["calls"] == 4 * 2 * 3 and info["iterations"] == 6
    assert runner.invoke(app, ["trace", "validate", str(out)]).exit_code == 0
    converted = tmp_path / "otf2.parquet"
    anchor = shared_data / "traces/otf2/sst-macro-10rank/traces.otf2"
    res = runner.invoke(app, ["trace", "convert", str(anchor), str(converted)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["trace", "info", str(converted), "--json"])
    assert json.loads(res.stdout)["ops"]["isend"]["calls"] == 1440
