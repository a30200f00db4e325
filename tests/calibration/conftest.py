"""Fixtures of the calibration tests: the lab campaign bundled with the quickstart."""

from tests.lab.conftest import bundled_store

__all__ = ["bundled_store"]
