"""Network topology and placement locality (seed 001 §4.1: same group / same island /
different islands of a Dragonfly+).

A topology maps each node to its switch path from the top of the tree down to its leaf
switch, e.g. ("island0", "group1"). Sources:
- `scontrol show topology` (topology/tree plugin): `SwitchName=… Level=… Nodes=… Switches=…`;
- a user TOML file: `[islands.<island>]` tables whose keys are groups and values hostlists;
- `SLURM_TOPOLOGY_ADDR` values per node ("s2.s0.node01" with pattern "switch.switch.node").

Locality of a node set: `same_group` when all nodes hang off one leaf switch, `same_island`
when they share the leaf switches' parent, `different_islands` otherwise. `levels_spanned`
counts switch levels a message may cross (1 = one leaf switch), which generalises the three
names to deeper trees.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from tailcast.collectors.jobs import expand_nodes
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import InputError, TailcastError

SAME_GROUP = "same_group"
SAME_ISLAND = "same_island"
DIFFERENT_ISLANDS = "different_islands"


class UnknownNodeError(TailcastError):
    """A node of the set to classify is not in the topology."""


@dataclass(frozen=True)
class Locality:
    locality: str
    levels_spanned: int
    groups: int  # distinct leaf switches used
    islands: int  # distinct parents of those leaf switches


@dataclass(frozen=True)
class Topology:
    paths: Mapping[str, tuple[str, ...]]  # node -> switches, top first, leaf last
    source: str

    def groups(self) -> dict[tuple[str, ...], list[str]]:
        """Leaf-switch path -> its nodes, in topology order."""
        out: dict[tuple[str, ...], list[str]] = {}
        for node, path in self.paths.items():
            out.setdefault(path, []).append(node)
        return out

    def islands(self) -> dict[tuple[str, ...], list[tuple[str, ...]]]:
        """Parent path -> its leaf switches (groups)."""
        out: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for group in self.groups():
            out.setdefault(group[:-1], []).append(group)
        return out

    def classify(self, nodes: Iterable[str]) -> Locality:
        nodes = list(nodes)
        if not nodes:
            raise UnknownNodeError("cannot classify an empty node set")
        missing = [n for n in nodes if n not in self.paths]
        if missing:
            raise UnknownNodeError(f"nodes not in the topology ({self.source}): {missing}")
        paths = {self.paths[n] for n in nodes}
        depth = max(len(p) for p in paths)
        common = 0
        for level in zip_longest(*paths):
            if len(set(level)) != 1 or level[0] is None:
                break
            common += 1
        parents = {p[:-1] for p in paths}
        if len(paths) == 1:
            kind = SAME_GROUP
        elif len(parents) == 1 and next(iter(parents)):
            kind = SAME_ISLAND
        else:
            kind = DIFFERENT_ISLANDS
        return Locality(kind, depth - common + 1, len(paths), len(parents))

    def pick_nodes(self, count: int, locality: str) -> list[str]:
        """A node list of `count` nodes with the requested locality, for pinned placements:
        same_island takes one island's groups round-robin, different_islands takes all
        islands round-robin (as seed 001 spread 16 nodes four per island)."""
        if locality == SAME_ISLAND:
            for groups in self.islands().values():
                members = [self.groups()[g] for g in groups]
                if len(members) >= 2 and sum(map(len, members)) >= count:
                    return _round_robin(members, count)
            raise UnknownNodeError(f"no island with ≥ 2 groups holds {count} nodes")
        if locality == DIFFERENT_ISLANDS:
            islands = self.islands()
            if len(islands) < 2:
                raise UnknownNodeError("the topology has fewer than two islands")
            per_island = [
                _round_robin([self.groups()[g] for g in gs], None) for gs in islands.values()
            ]
            if sum(map(len, per_island)) < count:
                raise UnknownNodeError(f"the topology has fewer than {count} nodes")
            return _round_robin(per_island, count)
        if locality == SAME_GROUP:
            for group_nodes in self.groups().values():
                if len(group_nodes) >= count:
                    return group_nodes[:count]
            raise UnknownNodeError(f"no group holds {count} nodes")
        raise UnknownNodeError(f"unknown locality {locality!r}")


def _round_robin(lists: list[list[str]], count: int | None) -> list[str]:
    out = [x for row in zip_longest(*lists) for x in row if x is not None]
    return out if count is None else out[:count]


# --- scontrol show topology ---------------------------------------------------------------

_TOKEN = re.compile(r"(\w+)=(\S*)")


def parse_scontrol_topology(text: str, path: str | Path = "<scontrol show topology>") -> Topology:
    """Parses the tree plugin's switch records into node paths."""
    nodes_of: dict[str, tuple[str, ...]] = {}
    level_of: dict[str, int] = {}
    parent_of: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = dict(_TOKEN.findall(line))
        name = fields.get("SwitchName")
        if not name:
            raise InputError(path, f"expected a SwitchName=… record, got {line.strip()!r}", lineno)
        try:
            level_of[name] = int(fields.get("Level", "0"))
            nodes_of[name] = expand_nodes(fields.get("Nodes", ""))
            children = expand_nodes(fields.get("Switches", ""))
        except ValueError as exc:
            raise InputError(path, f"switch {name}: {exc}", lineno) from exc
        for child in children:
            if parent_of.setdefault(child, name) != name:
                raise InputError(path, f"switch {child} has two parents", lineno)
    if not nodes_of:
        raise InputError(path, "no switches (is TopologyPlugin=topology/tree configured?)")
    leaf_of: dict[str, str] = {}
    for switch in sorted(nodes_of, key=lambda s: level_of[s], reverse=True):
        for node in nodes_of[switch]:
            leaf_of[node] = switch  # lowest level written last wins
    paths: dict[str, tuple[str, ...]] = {}
    for node in sorted(leaf_of, key=_node_key):
        chain = [leaf_of[node]]
        while chain[-1] in parent_of:
            if len(chain) > len(nodes_of):
                raise InputError(path, f"switch cycle above {leaf_of[node]}")
            chain.append(parent_of[chain[-1]])
        paths[node] = tuple(reversed(chain))
    return Topology(paths, "scontrol")


def _node_key(name: str) -> tuple[str, int]:
    match = re.match(r"(.*?)(\d+)$", name)
    return (match.group(1), int(match.group(2))) if match else (name, -1)


def read_scontrol_topology(policy: RetryPolicy = RetryPolicy()) -> Topology:
    return parse_scontrol_topology(run_tool(["scontrol", "show", "topology"], policy).stdout)


# --- user TOML ------------------------------------------------------------------------------


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def parse_topology_toml(text: str, path: str | Path = "<topology.toml>") -> Topology:
    """`[islands.<island>]` tables mapping group names to hostlists."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise InputError(
            path, f"invalid TOML: {exc}", int(found.group(1)) if found else None
        ) from exc
    islands = doc.get("islands")
    if not isinstance(islands, dict) or not islands:
        raise InputError(path, "needs [islands.<name>] tables mapping groups to hostlists")
    paths: dict[str, tuple[str, ...]] = {}
    for island, groups in islands.items():
        if not isinstance(groups, dict) or not groups:
            raise InputError(path, f"island {island!r} has no groups", _line_of(text, island))
        for group, hosts in groups.items():
            line = _line_of(text, group)
            if not isinstance(hosts, str):
                raise InputError(path, f"group {group!r}: value must be a hostlist string", line)
            try:
                members = expand_nodes(hosts)
            except ValueError as exc:
                raise InputError(path, f"group {group!r}: {exc}", line) from exc
            for node in members:
                if node in paths:
                    raise InputError(path, f"node {node} is in two groups", line)
                paths[node] = (str(island), str(group))
    return Topology(paths, str(path))


def load_topology_toml(path: Path) -> Topology:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read ({exc})") from exc
    return parse_topology_toml(text, path)


# --- SLURM_TOPOLOGY_ADDR ----------------------------------------------------------------------


def topology_from_addrs(addrs: Mapping[str, str], pattern: str | None = None) -> Topology:
    """Per-node SLURM_TOPOLOGY_ADDR values ("s2.s0.node01") with the optional
    SLURM_TOPOLOGY_ADDR_PATTERN ("switch.switch.node"); switch parts form the path."""
    paths: dict[str, tuple[str, ...]] = {}
    kinds = pattern.split(".") if pattern else None
    for node, addr in addrs.items():
        parts = addr.split(".")
        if kinds is not None and len(kinds) == len(parts):
            switches = [p for p, k in zip(parts, kinds, strict=True) if k == "switch"]
        else:
            switches = parts[:-1]
        paths[node] = tuple(switches)
    return Topology(paths, "SLURM_TOPOLOGY_ADDR")
