"""scripts/labnet without the kernel: network.toml is checked key by key, and the plan built
from it mirrors topology.conf's tree (every level's links, both directions, unique names and
addresses) for any number of islands."""

from __future__ import annotations

import ipaddress
import sys
import tomllib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from labnet.config import LabConfigError, load_config  # noqa: E402
from labnet.plan import DATA_IF, HOST, MGMT_IF, build_plan  # noqa: E402

DEFAULT = SCRIPTS / "labnet" / "network.toml"


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = DEFAULT.read_text()
    assert old in text, old
    path = tmp_path / "network.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_default_config_loads_with_every_level_and_the_mpi_settings() -> None:
    config = load_config()
    doc = tomllib.loads(DEFAULT.read_text())
    assert {k: v.rate_mbit for k, v in config.links.items()} == {
        k: float(t["rate_mbit"]) for k, t in doc["links"].items()
    }
    # rates fall towards the top, so each placement class has its own bottleneck level
    assert config.links["node"].rate_mbit > config.links["group"].rate_mbit
    assert config.links["group"].rate_mbit > config.links["island"].rate_mbit
    assert config.mpi_env["OMPI_MCA_btl_tcp_if_include"] == DATA_IF
    assert config.mpi_env["OMPI_MCA_oob_tcp_if_include"] == MGMT_IF


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("rate_mbit = 250", "rate_mbit = 0", "links.node.rate_mbit"),
        ("rate_mbit = 100", "rate_mbit = '100'", "links.island.rate_mbit"),
        ('qdisc = "htb"', 'qdisc = "netem"', "lab.qdisc"),
        ('qdisc = "htb"', 'qdisc = "tbf"', "control_priority_bytes"),
        ("control_priority_bytes = 128", "control_priority_bytes = 100", "control_priority"),
        ("mtu_bytes = 9000", "mtu_bytes = 9000\nmtu = 1500", "unknown keys in [lab]"),
        ("burst_bytes = 18000", "burst_bytes = 100", "links.node.burst_bytes"),
        ('"10.214.0.0/16"', '"10.213.4.0/23"', "overlaps"),
        ('"10.214.0.0/16"', '"8.8.0.0/16"', "lab.data_pool"),
        ("[links.group]", "[links.spine]", "[links.node], [links.group] and [links.island]"),
        ("tcp_slow_start_after_idle = false", "tcp_slow_start_after_idle = 0", "true or false"),
        ('OMPI_MCA_pml = "ob1"', 'pml = "ob1"', "OMPI_MCA_"),
        ("[lab]", "[lab\n", "invalid TOML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, old: str, new: str, names: str) -> None:
    path = _variant(tmp_path, old, new)
    with pytest.raises(LabConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value) and names in str(err.value)


def _tree(islands: int) -> list[list[list[str]]]:
    nodes = [f"node{i:02d}" for i in range(1, 8 * islands + 1)]
    groups = [nodes[i : i + 4] for i in range(0, len(nodes), 4)]
    return [groups[i : i + 2] for i in range(0, len(groups), 2)]


@pytest.mark.parametrize("islands", [1, 2, 3])
def test_plan_mirrors_the_tree(islands: int) -> None:
    tree = _tree(islands)
    plan = build_plan(
        "abc123",
        tree,
        ipaddress.IPv4Network("10.213.7.0/24"),
        ipaddress.IPv4Network("10.214.7.0/24"),
        9000,
    )
    nodes = [n for island in tree for group in island for n in group]
    by_level: dict[str | None, list[str]] = {}
    for veth in plan.veths:
        by_level.setdefault(veth.level, []).append(veth.label)
        for port in (veth.a, veth.b):
            assert len(port.ifname) <= 15  # IFNAMSIZ
    assert len(by_level["node"]) == len(nodes)
    assert len(by_level["group"]) == 2 * islands
    assert len(by_level.get("island", [])) == {1: 0, 2: 1, 3: 3}[islands]
    assert len(by_level[None]) == len(nodes) + 1  # management: one per node + the host's
    # each node's data link ends on its own group's bridge
    for g, (gname, members) in enumerate(plan.groups.items(), 1):
        for node in members:
            veth = next(v for v in plan.veths if v.label == f"{node}-{gname}")
            assert (veth.a.netns, veth.a.ifname) == (plan.node_ns[node], DATA_IF)
            assert veth.b.bridge == f"br-g{g}" and veth.level == "node"
    assert plan.groups == {
        f"group{g}": members
        for g, members in enumerate((grp for island in tree for grp in island), 1)
    }
    addresses = list(plan.mgmt_addr.values()) + list(plan.data_addr.values())
    assert len(set(addresses)) == 2 * len(nodes)
    host = [v for v in plan.veths if v.a.netns == HOST]
    assert len(host) == 1 and host[0].a.address == f"{plan.gateway}/24"
