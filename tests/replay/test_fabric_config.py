"""Fabric TOML loading: bundled files, the models' declared parameters, and errors naming
file, key and the allowed values (exit 2), including a property test over random invalid
configurations."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tailcast import _core
from tailcast.errors import EXIT_USAGE, InputError, UsageError
from tailcast.replay.fabric import (
    FabricConfigError,
    bundled_fabrics,
    load_fabric,
    model_docs,
    parse_fabric,
)


def test_bundled_fabrics_load_and_have_the_documented_sizes() -> None:
    assert {"ideal", "crossbar", "fat-tree-16", "torus-4x4x4"} <= set(bundled_fabrics())
    for name in bundled_fabrics():
        assert load_fabric(name).model in model_docs()
    assert load_fabric("fat-tree-16").endpoints == 16
    assert load_fabric("torus-4x4x4").endpoints == 64
    ideal = load_fabric("ideal")
    assert ideal.endpoints is None
    assert ideal.model == "alpha_beta"


def test_every_model_declares_documented_parameters() -> None:
    docs = model_docs()
    assert {"alpha_beta", "loggp", "flow"} <= set(docs)
    for name, doc in docs.items():
        keys = [p["key"] for p in doc["params"]]
        assert keys[0] == "model", name
        assert len(keys) == len(set(keys)), name
        assert all(p["doc"] and p["expected"] for p in doc["params"]), name
    flow = {p["key"]: p for p in docs["flow"]["params"]}
    assert flow["link_bandwidth_gbps"]["required"]
    assert flow["hop_latency_ns"]["default"] == "0"
    assert "topology.k (kind = fat_tree)" in flow


_INVALID = [
    # (text, key, words of the allowed values)
    ("model = 'loggp'\nalpha_us = 1\n", "alpha_us", "a key of model alpha_beta"),
    ("model = 'alpha_beta'\nalpha_us = 1\n", "beta_ns_per_byte", "is required"),
    ("model = 'alpha_beta'\nalpha_us = -1\nbeta_ns_per_byte = 1\n", "alpha_us", ">= 0"),
    ("model = 'flow'\nlink_bandwidth_gbps = 1\n", "topology", "[topology] table is required"),
    (
        "model = 'flow'\nlink_bandwidth_gbps = 1\n[topology]\nkind = 'torus3d'\ndims = [4, 4]\n",
        "topology.dims",
        "a list of 3 integers",
    ),
    (
        "model = 'flow'\nlink_bandwidth_mbps = 1\n[topology]\nkind = 'crossbar'\nendpoints = 4\n",
        "link_bandwidth_mbps",
        "did you mean link_bandwidth_gbps",
    ),
    (
        "model = 'flow'\nlink_bandwidth_gbps = 1\nrouting = 'ecmp'\n"
        "[topology]\nkind = 'crossbar'\nendpoints = 4\n",
        "routing",
        "one of dmodk, random",
    ),
    ("model = 'ideal'\n", "model", "alpha_beta"),
]


@pytest.mark.parametrize(("text", "key", "allowed"), _INVALID)
def test_invalid_fabric_names_file_key_and_allowed_values(
    text: str, key: str, allowed: str
) -> None:
    with pytest.raises(FabricConfigError) as info:
        parse_fabric(text, "bad.toml")
    message = str(info.value)
    assert message.startswith(f"bad.toml: key {key}: "), message
    assert allowed in message
    assert "\n" not in message
    assert info.value.exit_code == EXIT_USAGE


def test_cli_exits_2_with_one_line_naming_file_and_key(tmp_path: Path) -> None:
    trace = tmp_path / "t.parquet"
    subprocess.run(
        [sys.executable, "-m", "tailcast", "trace", "synth", "osu", "--collective",
         "bcast", "--ranks", "4", "--sizes", "8", "--iterations", "2", "-o", str(trace)],
        check=True, capture_output=True,
    )  # fmt: skip
    bad = tmp_path / "bad.toml"
    bad.write_text("model = 'flow'\nlink_bandwidth_gbps = 0\n[topology]\nkind = 'crossbar'\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tailcast", "replay", "run", str(trace), "--fabric",
         str(bad), "--no-store"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(bad) in lines[0] and "key link_bandwidth_gbps" in lines[0]


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("model = 'loggp'\nL_ns = = 1\n")
    with pytest.raises(InputError) as info:
        load_fabric(path)
    assert info.value.line == 2
    assert str(path) in str(info.value)


def test_unknown_fabric_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="ideal"):
        load_fabric("no-such-fabric")


def test_describe_prints_the_models_declared_parameters() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tailcast", "replay", "fabrics", "--describe",
         "fat-tree-16", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    doc = json.loads(out)
    assert doc["name"] == "flow"
    assert [p["key"] for p in doc["params"]] == [p["key"] for p in model_docs()["flow"]["params"]]


# Mutations that make a valid table invalid, each with the key it must be blamed on.


def _valid_tables() -> list[dict[str, Any]]:
    return [tomllib.loads(text) for text in bundled_fabrics().values()]


def _leaves(table: dict[str, Any], prefix: str = "") -> list[tuple[str, list[str]]]:
    out = []
    for k, v in table.items():
        path = [*prefix.split(".")[:-1], k] if prefix else [k]
        if isinstance(v, dict):
            out += _leaves(v, ".".join(path) + ".")
        elif k != "model":
            out.append((".".join(path), path))
    return out


def _set(table: dict[str, Any], path: list[str], value: Any) -> None:
    for p in path[:-1]:
        table = table[p]
    table[path[-1]] = value


_BAD_VALUES = st.sampled_from([-1, -0.5, "x", [1, "a"], {"nested": 1}, True, 1e400])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(data=st.data())
def test_random_invalid_configs_are_rejected_naming_the_mutated_key(data: st.DataObject) -> None:
    table = copy.deepcopy(data.draw(st.sampled_from(_valid_tables())))
    kind = data.draw(st.sampled_from(["value", "unknown", "drop"]))
    leaves = _leaves(table)
    if kind == "unknown":
        key = data.draw(st.from_regex(r"[a-z]{3,8}_(ns|gbps|us)", fullmatch=True))
        if key in {p["key"] for m in model_docs().values() for p in m["params"]}:
            return
        table[key] = 1
        blamed = key
    elif kind == "drop":
        doc = model_docs()[table["model"]]
        required = [p["key"] for p in doc["params"] if p["required"] and "." not in p["key"]]
        required = [k for k in required if k != "model" and k in table]
        if not required:
            return
        blamed = data.draw(st.sampled_from(required))
        del table[blamed]
    else:
        if not leaves:
            return
        dotted, path = data.draw(st.sampled_from(leaves))
        value = data.draw(_BAD_VALUES)
        if dotted in ("name", "description", "nodes") and isinstance(value, str):
            return  # any string is a valid name
        _set(table, path, value)
        blamed = dotted
    try:
        _core.FabricSpec(table)
    except _core.FabricConfigError as err:
        assert err.key == blamed or err.key.startswith(blamed + "."), (err.key, blamed, table)
        assert err.reason
        return
    except ValueError as err:  # values no parameter can take (nested dicts in lists)
        assert blamed in str(err)
        return
    # A value that happens to be valid where it landed (e.g. -1 is never valid, but True
    # for a boolean is): only then may it pass.
    doc = {p["key"]: p for p in model_docs()[table["model"]]["params"]}
    assert kind == "value" and "true or false" in doc[blamed]["expected"], (blamed, table)
