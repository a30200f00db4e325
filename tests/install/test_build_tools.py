"""`make` says in one line what it cannot install itself (cargo, Python >= 3.11 with venv)
before building anything: the real Makefile, run with a PATH that lacks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import in_ci

REPO = Path(__file__).resolve().parents[2]


def _bin(tmp_path: Path, python: bool) -> dict[str, str]:
    """An environment whose PATH holds bash, make, find (the Makefile's) and, if asked,
    python3, but no cargo; HOME without ~/.cargo."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "make", "find"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    if python:
        (bin_dir / "python3").symlink_to(sys.executable)
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": str(bin_dir), "HOME": str(home), "LANG": "C.UTF-8"}


def _make(env: dict[str, str], *goals: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "-C", str(REPO), "--no-print-directory", *goals],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_make_demo_without_cargo_says_what_to_install_in_one_line(tmp_path: Path) -> None:
    env = _bin(tmp_path, python=True)
    done = _make(env, "demo")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "missing cargo (Rust, e.g. curl" in lines[0] and "sh.rustup.rs" in lines[0]
    assert "python3" not in lines[0]  # the one that is there is not named
    # The same for every target that builds; none of them got as far as making a venv.
    for goal in ("install", "test", "lint"):
        again = _make(env, goal)
        assert again.returncode == 2 and len(again.stderr.splitlines()) == 1, again.stderr
    assert not (tmp_path / "home" / ".cargo").exists()


def test_both_missing_are_named_in_the_same_line(tmp_path: Path) -> None:
    done = _make(_bin(tmp_path, python=False), "demo")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "cargo (Rust" in line and "python3 >= 3.11 (Debian 12: apt-get install" in line


def test_with_everything_there_the_check_is_silent() -> None:
    if shutil.which("cargo") is None and not (Path.home() / ".cargo" / "bin" / "cargo").exists():
        if in_ci():
            pytest.fail("cargo is missing in CI")
        pytest.skip("no cargo on this machine")
    done = subprocess.run(
        ["make", "-C", str(REPO), "-n", "demo"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "missing" not in done.stderr
