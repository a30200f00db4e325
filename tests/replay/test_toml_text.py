"""A fabric table written back as TOML reads as the same table (every bundled fabric and
the value kinds fabric files use), so a sweep point's stored TOML is what it ran with."""

from __future__ import annotations

import math
import tomllib

import pytest

from tailcast.replay import toml_text
from tailcast.replay.fabric import bundled_fabrics, parse_fabric


@pytest.mark.parametrize("name", sorted(bundled_fabrics()))
def test_every_bundled_fabric_round_trips(name: str) -> None:
    table = tomllib.loads(bundled_fabrics()[name])
    text = toml_text.dumps(table)
    assert tomllib.loads(text) == table
    parse_fabric(text, f"<{name} written back>")  # and the engine accepts it


def test_value_kinds_and_awkward_keys() -> None:
    table = {
        "model": 'quote " and \\ back',
        "n": -3,
        "x": 1e-9,
        "big": 1.5e300,
        "inf": math.inf,
        "flag": False,
        "list": [1, 2.5, "a"],
        "odd key": 1,
        "nested": {"deeper": {"k": 1}, "v": [True]},
        "rows": [{"a": 1}, {"a": 2, "b": {"c": "d"}}],
    }
    assert tomllib.loads(toml_text.dumps(table)) == table


def test_a_value_with_no_toml_form_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="no TOML form for NoneType"):
        toml_text.dumps({"x": None})
