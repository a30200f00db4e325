"""Fabric TOML loading: bundled files, both LogGP spellings, errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.errors import InputError, UsageError
from tailcast.replay.fabric import bundled_fabrics, load_fabric, parse_fabric


def test_bundled_fabrics_load_and_have_the_documented_sizes() -> None:
    assert set(bundled_fabrics()) == {"ideal", "crossbar", "fat-tree-16", "torus-4x4x4"}
    assert load_fabric("fat-tree-16").endpoints == 16
    assert load_fabric("torus-4x4x4").endpoints == 64
    ideal = load_fabric("ideal")
    assert ideal.endpoints is None
    assert ideal.engine["model"] == "alpha_beta"
    assert ideal.engine["alpha_ns"] == 1000.0


def test_loggp_spelling_maps_to_engine_keys() -> None:
    fabric = parse_fabric(
        "model = 'loggp'\nL_ns = 500\no_ns = 100\ng_ns = 20\nG_ns_per_byte = 0.1\n", "x.toml"
    )
    assert fabric.engine == {
        "model": "loggp",
        "latency_ns": 500.0,
        "overhead_ns": 100.0,
        "gap_ns": 20.0,
        "gap_ns_per_byte": 0.1,
        "overhead_ns_per_byte": 0.0,
        "gamma_ns_per_byte": 0.0,
    }


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("model = 'loggp'\nalpha_us = 1\nbeta_ns_per_byte = 1\nL_ns = 3\n", "key L_ns: mixes"),
        ("model = 'loggp'\nalpha_us = 1\n", "key beta_ns_per_byte: is required"),
        ("model = 'loggp'\nalpha_us = -1\nbeta_ns_per_byte = 1\n", "key alpha_us: must be"),
        ("model = 'flow'\nlink_bandwidth_gbps = 1\n", "key topology:"),
        (
            "model = 'flow'\nlink_bandwidth_gbps = 1\n"
            "[topology]\nkind = 'torus3d'\ndims = [4, 4]\n",
            "key topology.dims:",
        ),
        ("model = 'flow'\nlink_bandwidth_gbps = 1\nbandwidth = 3\n", "key bandwidth: unknown"),
        ("model = 'ideal'\n", "key model:"),
    ],
)
def test_invalid_fabric_names_file_and_key(text: str, needle: str) -> None:
    with pytest.raises(InputError) as info:
        parse_fabric(text, "bad.toml")
    assert str(info.value).startswith("bad.toml: ")
    assert needle in str(info.value)


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("model = 'loggp'\nalpha_us = = 1\n")
    with pytest.raises(InputError) as info:
        load_fabric(path)
    assert info.value.line == 2
    assert str(path) in str(info.value)


def test_unknown_fabric_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="ideal"):
        load_fabric("no-such-fabric")
