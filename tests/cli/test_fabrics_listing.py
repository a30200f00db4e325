"""`tailcast replay fabrics`: columns that never run into each other, and `--describe` of a
bundled fabric (its values beside its model's parameters) or of a model (its parameters)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest

from tailcast.cli._common import aligned
from tailcast.replay.fabric import bundled_fabrics, model_docs
from tailcast.replay.toml_text import value_text

EXE = [sys.executable, "-m", "tailcast", "replay", "fabrics"]


def fabrics(*args: str) -> str:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, check=True).stdout


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def test_listing_columns_never_collide() -> None:
    listing = json.loads(fabrics("--json"))
    text = fabrics()
    bundled, models = text.split("\n\n")
    lines = bundled.splitlines()
    assert len(lines) == len(listing["fabrics"]) == len(bundled_fabrics())
    longest = max(len(f["name"]) for f in listing["fabrics"])
    assert longest == len("photonic-segment-fat-tree-12")  # the longest bundled name
    model_at = longest + 2
    for line, row in zip(lines, listing["fabrics"], strict=True):
        assert line[:model_at].rstrip() == row["name"]
        assert line[model_at:].split()[0] == row["model"], line
        assert _cells(line) == [row["name"], row["model"], row["description"]]
    model_lines = models.splitlines()[1:]
    for line, model in zip(model_lines, listing["models"], strict=True):
        assert _cells(line) == [model["name"], model["doc"]], line


def test_aligned_pads_to_any_length() -> None:
    name = "a-user-fabric-whose-name-is-longer-than-any-bundled-one-by-far-" * 2
    lines = aligned([[name, "flow", "one"], ["x", "tree-model-with-a-long-name", "two"]])
    model = "tree-model-with-a-long-name"
    assert lines[0] == name + "  " + "flow".ljust(len(model) + 2) + "one"
    assert lines[1] == "x".ljust(len(name) + 2) + model + "  two"


def _rows(text: str) -> dict[str, list[str]]:
    """`--describe FABRIC`'s table: key → [value, default], then the doc line under it."""
    lines = text.splitlines()[2:]
    assert _cells(lines[0]) == ["key", "value", "default"] and _cells(lines[1]) == ["doc"]
    rows: dict[str, list[str]] = {}
    for head, doc in zip(lines[2::2], lines[3::2], strict=True):
        key, *rest = _cells(head)
        rows[key] = [*rest, doc.strip()]
    return rows


def test_describe_a_bundled_fabric_prints_its_values_beside_the_schema() -> None:
    text = fabrics("--describe", "dfp-test")
    assert text.startswith("fabric dfp-test (<bundled>/dfp-test.toml): CODES dfp-test")
    assert text.splitlines()[1].startswith("model dragonfly_plus: ")
    rows = _rows(text)
    params = model_docs()["dragonfly_plus"]["params"]
    assert list(rows) == [p["key"] for p in params]
    assert rows["groups"][:2] == ["5", "required"]
    assert rows["router_delay_ns"][:2] == ["100.0", "100"]
    assert rows["terminal.bandwidth_gbps"][:2] == ["68.719476736", "required"]
    assert rows["terminal.latency_ns"][:2] == ["-", "0"]  # not set: the default applies
    assert rows["terminal"][:2] == ["(table)", "required"]  # shown by its own keys
    for p in params:
        assert rows[p["key"]][2] == p["doc"]
        assert rows[p["key"]][1] == ("required" if p["required"] else p["default"])
    for p in json.loads(fabrics("--describe", "dfp-test", "--json"))["params"]:
        if not isinstance(p["value"], dict):  # each value as TOML writes it; "-" if unset
            assert rows[p["key"]][0] == (value_text(p["value"]) if p["set"] else "-")


@pytest.mark.parametrize("name", sorted(bundled_fabrics()))
def test_describe_json_of_every_bundled_fabric_carries_values_and_schema(name: str) -> None:
    doc = json.loads(fabrics("--describe", name, "--json"))
    model = model_docs()[doc["name"]]
    assert doc["fabric"] == name and doc["doc"] == model["doc"]
    assert [p["key"] for p in doc["params"]] == [p["key"] for p in model["params"]]
    for mine, schema in zip(doc["params"], model["params"], strict=True):
        assert {k: mine[k] for k in schema} == schema
        assert mine["set"] == (mine["value"] is not None)
    set_keys = {p["key"].split(".")[0].split(" ")[0] for p in doc["params"] if p["set"]}
    assert set_keys == set(tomllib.loads(bundled_fabrics()[name]))  # every key is shown


def test_describe_values_of_arrays_of_tables_and_of_a_topology() -> None:
    tree = {
        p["key"]: p for p in json.loads(fabrics("--describe", "tree-2x2x4", "--json"))["params"]
    }
    assert tree["levels.arity"]["value"] == [4, 2, 2]
    rows = _rows(fabrics("--describe", "tree-2x2x4"))
    assert rows["levels"][0] == "(3 tables)" and rows["levels.arity"][0] == "[4, 2, 2]"
    rows = _rows(fabrics("--describe", "fat-tree-16"))
    assert rows["topology"][0] == '{kind = "fat_tree"}'  # only what no key of its own shows
    assert rows["topology.k (kind = fat_tree)"][0] == "4"
    assert rows["topology.dims (kind = torus3d)"][0] == "-"


def test_describe_a_model_prints_its_schema_only() -> None:
    text = fabrics("--describe", "dragonfly_plus")
    assert text.splitlines()[0].startswith("model dragonfly_plus: ")
    assert re.search(r"^  groups\s{2,}an integer in \[1, 65536\]; required$", text, re.M)
    doc = json.loads(fabrics("--describe", "dragonfly_plus", "--json"))
    assert doc == model_docs()["dragonfly_plus"]
    assert "value" not in doc["params"][0]


def test_describe_unknown_name_is_one_usage_line() -> None:
    proc = subprocess.run([*EXE, "--describe", "nope"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("tailcast: error: --describe 'nope': not a model")
    assert proc.stderr.count("\n") == 1 and "dfp-test" in proc.stderr
