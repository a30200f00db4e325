"""Fabric configuration: TOML files (units in key names) checked against their model's
parameters, which each model declares once in the engine (`crates/replay-engine/src/fabric/
models/`). Python parses the TOML and hands the table over; the engine checks it once
(`_core.FabricSpec`: the declaration, then the model's own checks as it builds) and names the
key at fault. A replay with the default seed takes that build, so one command checks and
builds its fabric once.
`tailcast replay fabrics --describe MODEL` prints the declarations.

Bundled fabrics are the TOML files of `tailcast/replay/fabrics/` (see `bundled_fabrics()`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tailcast import _core
from tailcast.errors import EXIT_USAGE, InputError, UsageError


class FabricConfigError(InputError):
    """A fabric file that does not fit its model: names the file and the key (exit 2)."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Fabric:
    """A loaded fabric: where it came from, its text and table, and the engine's checked
    spec of it."""

    name: str
    source: str
    toml_text: str
    table: dict[str, Any]
    spec: _core.FabricSpec = field(repr=False, compare=False)

    @cached_property
    def layout(self) -> dict[str, Any]:
        """Endpoint count, group and island of every endpoint, path classes."""
        return self.spec.layout()

    @property
    def sha256(self) -> str:
        import hashlib  # loads OpenSSL (~7 ms): only stored replays need the digest

        return hashlib.sha256(self.toml_text.encode()).hexdigest()

    @property
    def model(self) -> str:
        return str(self.table["model"])

    @property
    def endpoints(self) -> int | None:
        """Endpoint count of a topology model; None for contention-free models."""
        count = self.layout["endpoints"]
        return None if count is None else int(count)

    def value(self, key: str) -> Any:
        """A top-level parameter: the file's value, else the model's declared default (None
        when it has none)."""
        if key in self.table:
            return self.table[key]
        for param in model_docs()[self.model]["params"]:
            if param["key"] == key and param["default"] not in (None, "(none)"):
                return tomllib.loads(f"v = {param['default']}")["v"]
        return None

    @property
    def node_names(self) -> list[str] | None:
        """Host names of endpoints 0, 1, … (the TOML's `nodes` hostlist), if given."""
        text = self.table.get("nodes")
        if not text:
            return None
        import hostlist

        return list(hostlist.expand_hostlist(str(text)))


# The package is a directory (it holds a compiled extension, so it is never imported from a
# zip): a path next to this module finds the bundled files without importlib.resources.
BUNDLED_DIR = Path(__file__).resolve().parent / "fabrics"


def bundled_fabrics() -> dict[str, str]:
    """Name → TOML text of the fabrics shipped with tailcast."""
    return {path.stem: path.read_text() for path in sorted(BUNDLED_DIR.glob("*.toml"))}


def load_fabric(spec: str | Path) -> Fabric:
    """A fabric from a TOML file path or a bundled name (`ideal`, `fat-tree-16`, …)."""
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise UsageError(f"fabric file {path} does not exist")
        return parse_fabric(path.read_text(), str(path))
    bundled = BUNDLED_DIR / f"{spec}.toml"
    if "/" in str(spec) or not bundled.is_file():
        raise UsageError(
            f"unknown fabric {spec!r}: give a .toml file or one of {', '.join(bundled_fabrics())}"
        )
    return parse_fabric(bundled.read_text(), f"<bundled>/{spec}.toml", name=str(spec))


def _toml_line(err: tomllib.TOMLDecodeError) -> int | None:
    found = re.search(r"line (\d+)", str(err))
    return int(found.group(1)) if found else None


def parse_fabric(text: str, source: str, name: str | None = None) -> Fabric:
    """Validates fabric TOML text; `source` names the file in errors."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(source, f"invalid TOML: {err}", line=_toml_line(err)) from err
    try:
        spec = _core.FabricSpec(table)
    except _core.FabricConfigError as err:
        raise FabricConfigError(source, str(err)) from err
    except ValueError as err:  # a TOML value of a type no parameter takes (a date)
        raise FabricConfigError(source, str(err)) from err
    label = name or str(table.get("name") or Path(source).stem)
    return Fabric(name=label, source=source, toml_text=text, table=table, spec=spec)


def declared_value(table: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(whether it is set, its value) of a declared parameter `key` of a model (as
    `model_docs` names them: "terminal.bandwidth_gbps", "topology.k (kind = fat_tree)") in
    a fabric's `table`. A key under an array of tables ("levels.arity") has one value per
    table."""
    node: Any = table
    for part in key.split(" (", 1)[0].split("."):
        if isinstance(node, list):
            node = [item[part] for item in node if isinstance(item, dict) and part in item]
            if not node:
                return False, None
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return False, None
    return True, node


def model_docs() -> dict[str, dict[str, Any]]:
    """Model name → its one-line doc and parameter declarations (as the engine has them)."""
    return {m["name"]: m for m in _core.fabric_models()}
