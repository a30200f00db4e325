"""What a lab consists of, as data: namespaces, bridges, veth pairs with their addresses and
the shaping of each end. Pure: nothing here touches the kernel (lab.py applies a plan).

Layout (all switches are Linux bridges in one switch namespace):

    host ns  tcl<tag> ──────────────── br-mgmt ── m<NN> ── mgmt0  (node NN's namespace)
    node NN  data0 ── n<NN> ── br-g<G> ── g<G>-up ── i<I>-g<G> ── br-i<I> ── i<I>-i<J> ── ...

Each data veth end shapes its own egress, so each direction of each link is shaped once:
data0 shapes node→group, n<NN> group→node, g<G>-up group→island, i<I>-g<G> island→group,
i<I>-i<J> island I→island J. With more than two islands the island switches hang off a top
bridge (i<I>-up / top-i<I>) at the island rate instead of one direct link.
"""

from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass, field
from typing import Any

HOST = ""  # the namespace name of the host (root) network namespace
MGMT_IF = "mgmt0"
DATA_IF = "data0"
FIRST_HOST_OCTET = 10  # node k gets .(10 + k) on both networks; .1 is the host
MAX_NODES = 240


@dataclass(frozen=True)
class Port:
    """One end of a veth pair."""

    netns: str  # HOST for the root namespace
    ifname: str
    bridge: str | None = None  # bridge (in the same namespace) this end is a port of
    address: str | None = None  # "a.b.c.d/prefix"


@dataclass(frozen=True)
class Veth:
    a: Port
    b: Port
    label: str  # e.g. "node01-group1"
    level: str | None  # tree level whose shaping both ends get; None = unshaped (management)
    mtu: int


@dataclass(frozen=True)
class Plan:
    tag: str
    switch_ns: str
    node_ns: dict[str, str]  # node -> its namespace
    bridges: list[str]  # in the switch namespace
    veths: list[Veth]
    host_link: str  # the root-namespace end of the management network
    mgmt_net: str
    data_net: str
    gateway: str  # host address on the management network (slurmctld is reached here)
    mgmt_addr: dict[str, str] = field(default_factory=dict)
    data_addr: dict[str, str] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)  # group switch -> nodes
    islands: dict[str, list[str]] = field(default_factory=dict)  # island switch -> groups

    @property
    def namespaces(self) -> list[str]:
        return [self.switch_ns, *self.node_ns.values()]

    def as_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Plan:
        veths = [
            Veth(Port(**v["a"]), Port(**v["b"]), v["label"], v["level"], v["mtu"])
            for v in rec["veths"]
        ]
        return cls(**{**rec, "veths": veths})


def subnet(pool: ipaddress.IPv4Network, index: int) -> ipaddress.IPv4Network:
    """The index-th /24 of a pool."""
    subnets = list(pool.subnets(new_prefix=24))
    if not 0 <= index < len(subnets):
        raise ValueError(f"subnet index {index} outside {pool} ({len(subnets)} /24s)")
    return subnets[index]


def build_plan(
    tag: str,
    tree: list[list[list[str]]],
    mgmt_net: ipaddress.IPv4Network,
    data_net: ipaddress.IPv4Network,
    mtu: int,
) -> Plan:
    """tree: islands → groups → node names, as topology.conf groups them."""
    nodes = [n for island in tree for group in island for n in group]
    if not nodes:
        raise ValueError("a lab needs at least one node")
    if len(nodes) > MAX_NODES:
        raise ValueError(f"a lab holds at most {MAX_NODES} nodes, not {len(nodes)}")
    prefix = f"tcl-{tag}"
    switch_ns = f"{prefix}-sw"
    node_ns = {n: f"{prefix}-{n}" for n in nodes}

    def host_ip(net: ipaddress.IPv4Network, k: int) -> str:
        return f"{net.network_address + k}/{net.prefixlen}"

    gateway = str(mgmt_net.network_address + 1)
    bridges = ["br-mgmt"]
    veths = [
        Veth(
            Port(HOST, f"tcl{tag}", address=host_ip(mgmt_net, 1)),
            Port(switch_ns, "host", bridge="br-mgmt"),
            "host-mgmt",
            None,
            1500,
        )
    ]
    mgmt_addr, data_addr = {}, {}
    groups: dict[str, list[str]] = {}
    islands: dict[str, list[str]] = {}
    g = 0
    for i, island in enumerate(tree, 1):
        ibr = f"br-i{i}"
        bridges.append(ibr)
        islands[f"island{i}"] = []
        for members in island:
            g += 1
            gbr = f"br-g{g}"
            bridges.append(gbr)
            groups[f"group{g}"] = list(members)
            islands[f"island{i}"].append(f"group{g}")
            veths.append(
                Veth(
                    Port(switch_ns, f"g{g}-up", bridge=gbr),
                    Port(switch_ns, f"i{i}-g{g}", bridge=ibr),
                    f"group{g}-island{i}",
                    "group",
                    mtu,
                )
            )
            for node in members:
                k = nodes.index(node) + 1
                suffix = node.removeprefix("node")
                mgmt_addr[node] = host_ip(mgmt_net, FIRST_HOST_OCTET + k)
                data_addr[node] = host_ip(data_net, FIRST_HOST_OCTET + k)
                veths.append(
                    Veth(
                        Port(node_ns[node], MGMT_IF, address=mgmt_addr[node]),
                        Port(switch_ns, f"m{suffix}", bridge="br-mgmt"),
                        f"{node}-mgmt",
                        None,
                        1500,
                    )
                )
                veths.append(
                    Veth(
                        Port(node_ns[node], DATA_IF, address=data_addr[node]),
                        Port(switch_ns, f"n{suffix}", bridge=gbr),
                        f"{node}-group{g}",
                        "node",
                        mtu,
                    )
                )
    if len(tree) == 2:
        veths.append(
            Veth(
                Port(switch_ns, "i1-i2", bridge="br-i1"),
                Port(switch_ns, "i2-i1", bridge="br-i2"),
                "island1-island2",
                "island",
                mtu,
            )
        )
    elif len(tree) > 2:
        bridges.append("br-top")
        for i in range(1, len(tree) + 1):
            veths.append(
                Veth(
                    Port(switch_ns, f"i{i}-up", bridge=f"br-i{i}"),
                    Port(switch_ns, f"top-i{i}", bridge="br-top"),
                    f"island{i}-top",
                    "island",
                    mtu,
                )
            )
    return Plan(
        tag=tag,
        switch_ns=switch_ns,
        node_ns=node_ns,
        bridges=bridges,
        veths=veths,
        host_link=f"tcl{tag}",
        mgmt_net=str(mgmt_net),
        data_net=str(data_net),
        gateway=gateway,
        mgmt_addr=mgmt_addr,
        data_addr=data_addr,
        groups=groups,
        islands=islands,
    )
