"""Shared fixtures. The local Slurm cluster fixture lives in tests/slurm_fixture.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]


def _find_shared_data() -> Path:
    """$TAILCAST_SHARED_DATA, else ../shared/data beside the checkout, else the workplace's
    /work/shared/data (CI may clone the repository somewhere else)."""
    explicit = os.environ.get("TAILCAST_SHARED_DATA")
    candidates = [Path(explicit)] if explicit else []
    candidates += [REPO.parent / "shared" / "data", Path("/work/shared/data")]
    return next((c for c in candidates if c.is_dir()), candidates[0])


SHARED_DATA = _find_shared_data()

pytest_plugins = ["tests.slurm_fixture", "tests.third_party_fixture"]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


# In CI the fuzz tests draw the same examples every run (a red CI must be reproducible);
# locally they explore new ones each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if in_ci():
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (public traces, OSU outputs, squeue JSON). Skips only off-CI."""
    if not SHARED_DATA.is_dir():
        if in_ci():
            pytest.fail(f"{SHARED_DATA} is missing in CI")
        pytest.skip(f"{SHARED_DATA} not present on this machine")
    return SHARED_DATA


@pytest.fixture()
def results_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $TAILCAST_HOME for one test."""
    home = tmp_path / "tailcast-home"
    monkeypatch.setenv("TAILCAST_HOME", str(home))
    return home
