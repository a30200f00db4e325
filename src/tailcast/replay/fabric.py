"""Fabric configuration: TOML files (units in key names) → the flat typed dict the engine takes.

Models (DESIGN.md "Replay semantics"):
- `model = "loggp"` in one of two spellings. α-β-γ: `alpha_us`, `beta_ns_per_byte`
  (a message costs exactly α + nβ, no rendezvous handshake). LogGP (Alexandrov et al. 1995):
  `L_ns`, `o_ns`, `g_ns`, `G_ns_per_byte`, `O_ns_per_byte` (LogGOPS's O), with handshake.
  Both take `gamma_ns_per_byte` (reduction cost).
- `model = "flow"`: max-min fair flows on `[topology]` kind = crossbar (`endpoints`),
  fat_tree (`k`, `n`: k-ary n-tree), torus3d (`dims` = [x, y, z]); `link_bandwidth_gbps`,
  `hop_latency_ns`, `duplex` (full|half), `routing` (dmodk|random), host `overhead_ns`,
  `overhead_ns_per_byte`, `gamma_ns_per_byte`.
Bundled fabrics (by name): see `bundled_fabrics()`.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tailcast.errors import InputError, UsageError

EngineValue = int | float | str

_COMMON = {"model", "name", "description", "gamma_ns_per_byte"}
_ALPHA_BETA = {"alpha_us", "beta_ns_per_byte"}
_LOGGP = {"L_ns", "o_ns", "g_ns", "G_ns_per_byte", "O_ns_per_byte"}
_FLOW = {
    "link_bandwidth_gbps",
    "hop_latency_ns",
    "duplex",
    "routing",
    "overhead_ns",
    "overhead_ns_per_byte",
    "topology",
}
_TOPOLOGY_KEYS = {"crossbar": {"endpoints"}, "fat_tree": {"k", "n"}, "torus3d": {"dims"}}


@dataclass(frozen=True)
class Fabric:
    """A loaded fabric: where it came from, its text, and the engine configuration."""

    name: str
    source: str
    toml_text: str
    engine: dict[str, EngineValue]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.toml_text.encode()).hexdigest()

    @property
    def endpoints(self) -> int | None:
        """Endpoint count of a topology model; None for contention-free models."""
        e = self.engine
        topo = e.get("topology")
        if topo == "crossbar":
            return int(e["endpoints"])
        if topo == "fat_tree":
            return int(int(e["k"]) ** int(e["n"]))
        if topo == "torus3d":
            return int(e["x"]) * int(e["y"]) * int(e["z"])
        return None


def bundled_fabrics() -> dict[str, str]:
    """Name → TOML text of the fabrics shipped with tailcast."""
    folder = resources.files("tailcast.replay") / "fabrics"
    return {
        entry.name.removesuffix(".toml"): entry.read_text()
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".toml")
    }


def load_fabric(spec: str | Path) -> Fabric:
    """A fabric from a TOML file path or a bundled name (`ideal`, `fat-tree-16`, …)."""
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise UsageError(f"fabric file {path} does not exist")
        return parse_fabric(path.read_text(), str(path))
    bundled = bundled_fabrics()
    if str(spec) not in bundled:
        raise UsageError(
            f"unknown fabric {spec!r}: give a .toml file or one of {', '.join(bundled)}"
        )
    return parse_fabric(bundled[str(spec)], f"<bundled>/{spec}.toml", name=str(spec))


def _toml_line(err: tomllib.TOMLDecodeError) -> int | None:
    found = re.search(r"line (\d+)", str(err))
    return int(found.group(1)) if found else None


class _Keys:
    """Typed access to one TOML table; every error names the file and the key."""

    def __init__(self, source: str, data: dict[str, Any], prefix: str = "") -> None:
        self.source, self.data, self.prefix = source, data, prefix

    def fail(self, key: str, message: str) -> InputError:
        return InputError(self.source, f"key {self.prefix}{key}: {message}")

    def number(self, key: str, default: float | None = None, minimum: float = 0.0) -> float:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "is required")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number, got {value!r}")
        if not value >= minimum or value == float("inf"):
            raise self.fail(key, f"must be a finite number >= {minimum}, got {value!r}")
        return float(value)

    def integer(self, key: str, minimum: int = 1) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def choice(self, key: str, allowed: tuple[str, ...], default: str | None = None) -> str:
        value = self.data.get(key, default)
        if value not in allowed:
            raise self.fail(key, f"expected one of {', '.join(allowed)}, got {value!r}")
        return str(value)

    def only(self, allowed: set[str]) -> None:
        for key in sorted(set(self.data) - allowed):
            raise self.fail(key, f"unknown key (allowed: {', '.join(sorted(allowed))})")


def parse_fabric(text: str, source: str, name: str | None = None) -> Fabric:
    """Validates fabric TOML text; `source` names the file in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(source, f"invalid TOML: {err}", line=_toml_line(err)) from err
    keys = _Keys(source, data)
    model = keys.choice("model", ("loggp", "flow"))
    engine: dict[str, EngineValue] = {"gamma_ns_per_byte": keys.number("gamma_ns_per_byte", 0.0)}
    if model == "loggp":
        _loggp(keys, engine)
    else:
        _flow(keys, engine)
    label = name or str(data.get("name") or Path(source).stem)
    return Fabric(name=label, source=source, toml_text=text, engine=engine)


def _loggp(keys: _Keys, engine: dict[str, EngineValue]) -> None:
    given = set(keys.data)
    if given & _ALPHA_BETA and given & _LOGGP:
        key = sorted(given & _LOGGP)[0]
        raise keys.fail(key, "mixes the LogGP spelling with alpha_us/beta_ns_per_byte")
    if given & _LOGGP:
        keys.only(_COMMON | _LOGGP)
        engine.update(
            model="loggp",
            latency_ns=keys.number("L_ns"),
            overhead_ns=keys.number("o_ns", 0.0),
            gap_ns=keys.number("g_ns", 0.0),
            gap_ns_per_byte=keys.number("G_ns_per_byte", 0.0),
            overhead_ns_per_byte=keys.number("O_ns_per_byte", 0.0),
        )
        return
    keys.only(_COMMON | _ALPHA_BETA)
    engine.update(
        model="alpha_beta",
        alpha_ns=keys.number("alpha_us") * 1000.0,
        beta_ns_per_byte=keys.number("beta_ns_per_byte"),
    )


def _flow(keys: _Keys, engine: dict[str, EngineValue]) -> None:
    keys.only(_COMMON | _FLOW)
    engine.update(
        model="flow",
        link_bandwidth_gbps=keys.number("link_bandwidth_gbps", minimum=1e-9),
        hop_latency_ns=keys.number("hop_latency_ns", 0.0),
        duplex=keys.choice("duplex", ("full", "half"), "full"),
        routing=keys.choice("routing", ("dmodk", "random"), "dmodk"),
        overhead_ns=keys.number("overhead_ns", 0.0),
        overhead_ns_per_byte=keys.number("overhead_ns_per_byte", 0.0),
    )
    table = keys.data.get("topology")
    if not isinstance(table, dict):
        raise keys.fail("topology", "a [topology] table with `kind` is required")
    topo = _Keys(keys.source, table, "topology.")
    kind = topo.choice("kind", tuple(_TOPOLOGY_KEYS))
    topo.only({"kind"} | _TOPOLOGY_KEYS[kind])
    engine["topology"] = kind
    if kind == "crossbar":
        engine["endpoints"] = topo.integer("endpoints")
    elif kind == "fat_tree":
        engine["k"], engine["n"] = topo.integer("k", 2), topo.integer("n")
    else:
        dims = table.get("dims")
        if not (isinstance(dims, list) and len(dims) == 3):
            raise topo.fail("dims", f"expected [x, y, z], got {dims!r}")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims):
            raise topo.fail("dims", f"expected three integers >= 1, got {dims!r}")
        engine["x"], engine["y"], engine["z"] = dims
