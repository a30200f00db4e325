"""Fixtures shared by the lab tests."""

from __future__ import annotations

import shutil

import pytest

from tailcast.quickstart import BUNDLED_TABLES, bundled_dir
from tailcast.store import ResultsDir


@pytest.fixture(scope="module")
def bundled_store(tmp_path_factory: pytest.TempPathFactory) -> ResultsDir:
    """A store holding the lab campaign bundled with the quickstart (one copy per module:
    replays stored by one test module stay out of another's)."""
    root = tmp_path_factory.mktemp("bundled-lab")
    for table in BUNDLED_TABLES:
        shutil.copytree(bundled_dir() / table, root / table)
    return ResultsDir(root)
