"""Fixtures for forecast tests: the recorded b-sweep campaign (real runs on the local 16-node
Slurm, scripts/record_bsweep_campaign.py) and a model trained on it once per session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "bsweep-16node"
TOPOLOGY = REPO / "slurm_jobs" / "topology.example.toml"
TABLES = ("runs", "samples", "snapshots", "utilisation")


def copy_store(target: Path) -> Path:
    """A writable store holding the recorded campaign."""
    for table in TABLES:
        shutil.copytree(RECORDED / table, target / table)
    return target


def tailcast(
    *args: str, home: Path, timeout: float = 900, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "tailcast", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def trained_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """$TAILCAST_HOME with the recorded campaign and model 'tail' trained on it (not
    validated: the validation has its own tests)."""
    home = copy_store(tmp_path_factory.mktemp("trained") / "home")
    res = tailcast("predict", "train", "--folds", "0", "--topology", str(TOPOLOGY), home=home)
    assert res.returncode == 0, res.stderr
    return home
