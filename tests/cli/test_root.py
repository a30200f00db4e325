"""The CLI root: versions, help for every sub-command, one-line errors with exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tailcast
from tailcast import _core

EXE = [sys.executable, "-m", "tailcast"]
SUBCOMMANDS = [
    "agent",
    "collect",
    "trace",
    "replay",
    "analyze",
    "predict",
    "report",
    "db",
    "doctor",
    "quickstart",
    "calibrate",
]


def run(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = None
    if home is not None:
        import os

        env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run([*EXE, *args], capture_output=True, text=True, env=env, timeout=120)


def test_version_reports_package_and_engine() -> None:
    out = run("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == (
        f"tailcast {tailcast.__version__} (replay engine {_core.engine_version()})"
    )


def test_root_help_lists_every_subcommand() -> None:
    out = run("--help")
    assert out.returncode == 0
    for name in SUBCOMMANDS:
        assert f" {name} " in out.stdout, f"{name} missing from tailcast --help"


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_has_real_help(name: str) -> None:
    out = run(name, "--help")
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout and len(out.stdout.splitlines()) >= 4


def test_usage_error_exits_2_and_failure_exits_1_on_one_line(tmp_path: Path) -> None:
    bad = run("no-such-command")
    assert bad.returncode == 2
    fail = run("db", "sql", "SELECT * FROM missing_table", home=tmp_path)
    assert fail.returncode == 1
    assert fail.stderr.startswith("tailcast: error:") and fail.stderr.count("\n") == 1
    debug = run("--debug", "db", "sql", "SELECT * FROM missing_table", home=tmp_path)
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_cli_never_imports_click_directly() -> None:
    src = Path(tailcast.__file__).parent
    offenders = [p for p in src.rglob("*.py") if "import click" in p.read_text()]
    assert offenders == []
