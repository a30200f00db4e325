"""Builds a lab from a plan and removes it again, keeping a ledger (DIR/lab.json) of what it
created so that teardown removes exactly that, on every exit path.

Ownership: a namespace is removed only if the ledger lists it and its nsfs inode is the one
recorded when this lab created it; the host-side veth only if its ifindex and alias match.
Anything else with a similar name is left alone and reported. The ledger is written before
each creation step (intent) and after it (inode / ifindex), so a lab whose `up` was killed
part-way can still be removed by `down` or by the next `up` on the same directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labnet.config import LabConfig, LinkClass
from labnet.netops import (
    LabError,
    batch,
    host_networks,
    in_netns,
    ip,
    kill_all,
    links,
    netns_inode,
    netns_names,
    processes_in,
    qdisc_stats,
    shaped_rate_bit,
)
from labnet.plan import HOST, Plan, Port, build_plan, subnet

LEDGER = "lab.json"
LOCK = Path("/run/lock/tailcast-labnet.lock")


def _alias(plan: Plan, directory: Path) -> str:
    return f"tailcast-lab {plan.tag} {directory}"


class Ledger:
    """DIR/lab.json, rewritten atomically after every change."""

    def __init__(self, directory: Path, data: dict[str, Any]) -> None:
        self.path = directory / LEDGER
        self.data = data

    @classmethod
    def load(cls, directory: Path) -> Ledger | None:
        path = directory / LEDGER
        if not path.exists():
            return None
        try:
            return cls(directory, json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise LabError(f"{path}: unreadable lab ledger ({exc})") from exc

    def save(self) -> None:
        tmp = self.path.with_name(f".{LEDGER}.tmp")
        tmp.write_text(json.dumps(self.data, indent=2))
        os.replace(tmp, self.path)

    @property
    def plan(self) -> Plan:
        return Plan.from_record(self.data["plan"])


@contextlib.contextmanager
def _host_lock() -> Iterator[None]:
    """Serialises lab creation on this host: subnet choice and the host address claim."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _free_subnet_index(config: LabConfig) -> int:
    used = [ipaddress.IPv4Network(n, strict=False) for n in host_networks()]
    for index, mgmt in enumerate(config.mgmt_pool.subnets(new_prefix=24)):
        if not any(mgmt.overlaps(u) for u in used):
            return index
    raise LabError(f"no free /24 left in {config.mgmt_pool} for the management network")


def _new_tag() -> str:
    taken = netns_names() | {str(link.get("ifname", "")) for link in links()}
    while True:
        tag = secrets.token_hex(3)
        if not any(tag in name for name in taken):
            return tag


def _shaping(port: Port, lc: LinkClass, config: LabConfig, mtu: int) -> list[str]:
    """`tc` commands shaping the egress of one veth end: tbf; or htb, one class at the link's
    rate with a bfifo leaf, or — with a control band — two leaves under it, the first (prio 0)
    for IP packets shorter than control_priority_bytes (TCP ACKs, header-only segments), so
    they do not wait behind the bulk data queued in the other direction's flows."""
    rate, dev = f"{round(lc.rate_mbit * 1e6)}bit", f"dev {port.ifname}"
    shape = f"burst {lc.burst_bytes} cburst {lc.burst_bytes} quantum {mtu + 14}"
    if config.qdisc == "tbf":
        return [
            f"qdisc replace {dev} root tbf rate {rate} burst {lc.burst_bytes} "
            f"limit {lc.queue_bytes}"
        ]
    band = config.control_priority_bytes
    commands = [
        f"qdisc replace {dev} root handle 1: htb default {20 if band else 1}",
        f"class add {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate} {shape}",
    ]
    if not band:
        return [*commands, f"qdisc add {dev} parent 1:1 handle 10: bfifo limit {lc.queue_bytes}"]
    tenth = f"{round(lc.rate_mbit * 1e5)}bit"
    rest = f"{round(lc.rate_mbit * 9e5)}bit"
    for leaf, share, prio in ((10, tenth, 0), (20, rest, 1)):
        commands.append(
            f"class add {dev} parent 1:1 classid 1:{leaf} htb rate {share} "
            f"ceil {rate} {shape} prio {prio}"
        )
        commands.append(
            f"qdisc add {dev} parent 1:{leaf} handle {leaf}: bfifo limit {lc.queue_bytes}"
        )
    # IPv4 total length (offset 2) below a power of two: its high bits are all zero
    mask = 0xFFFF & ~(band - 1)
    commands.append(
        f"filter add {dev} parent 1: protocol ip prio 1 u32 "
        f"match u16 0x0000 {mask:#06x} at 2 flowid 1:10"
    )
    return commands


def _port_setup(port: Port, mtu: int) -> list[str]:
    """`ip` commands configuring one veth end."""
    commands = [f"link set {port.ifname} mtu {mtu}"]
    if port.bridge:
        commands.append(f"link set {port.ifname} master {port.bridge}")
    if port.address:
        commands.append(f"addr add {port.address} dev {port.ifname}")
    return [*commands, f"link set {port.ifname} up"]


def _check_congestion_control(config: LabConfig) -> None:
    """A namespace may only choose algorithms the host allows (tcp_cong.c: restricted ones
    are for the initial namespace); say so before building anything."""
    allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read_text().split()
    if config.tcp_congestion_control not in allowed:
        raise LabError(
            f"{config.path}: lab.tcp_congestion_control = {config.tcp_congestion_control!r} is "
            f"not in the host's net.ipv4.tcp_allowed_congestion_control ({' '.join(allowed)})"
        )


def create(directory: Path, tree: list[list[list[str]]], config: LabConfig) -> Ledger:
    """Builds the lab for `tree` (islands → groups → nodes); on any failure, including a
    signal turned into an exception by the caller, removes what it built and re-raises."""
    directory = directory.resolve()
    _check_congestion_control(config)
    with _host_lock():
        index = _free_subnet_index(config)
        plan = build_plan(
            _new_tag(),
            tree,
            subnet(config.mgmt_pool, index),
            subnet(config.data_pool, index),
            config.mtu_bytes,
        )
        ledger = Ledger(
            directory,
            {
                "state": "building",
                "dir": str(directory),
                "plan": plan.as_record(),
                "config": config.as_record(),
                "namespaces": {},
                "host_link": None,
            },
        )
        ledger.save()
        try:
            _build(ledger, plan, config, directory)
        except BaseException:
            destroy(directory)
            raise
    return ledger


def _build(ledger: Ledger, plan: Plan, config: LabConfig, directory: Path) -> None:
    # Namespaces one by one, each recorded (intent, then inode); everything inside them is
    # removed with them, so the rest goes in one `ip` / `tc` batch per namespace and step.
    for ns in plan.namespaces:
        ledger.data["namespaces"][ns] = None  # intent first: a crash here is still cleaned
        ledger.save()
        ip(HOST, f"netns add {ns}")
        ledger.data["namespaces"][ns] = netns_inode(ns)
        ledger.save()
        sysctls = [
            "net.ipv6.conf.all.disable_ipv6=1",
            "net.ipv6.conf.default.disable_ipv6=1",
            f"net.ipv4.tcp_congestion_control={config.tcp_congestion_control}",
            f"net.ipv4.tcp_slow_start_after_idle={int(config.tcp_slow_start_after_idle)}",
        ]
        in_netns(ns, ["sysctl", "-qw", *sysctls])
    setup: dict[str, list[str]] = {ns: ["link set lo up"] for ns in plan.namespaces}
    for bridge in plan.bridges:
        setup[plan.switch_ns] += [
            f"link add {bridge} type bridge stp_state 0 forward_delay 0",
            f"link set {bridge} up",
        ]
    batch("ip", plan.switch_ns, setup.pop(plan.switch_ns))
    pairs: list[str] = []
    shaping: dict[str, list[str]] = {}
    for veth in plan.veths:
        a, b = veth.a, veth.b
        where = f"netns {a.netns}" if a.netns else ""
        pair = f"link add {a.ifname} {where} type veth peer name {b.ifname} netns {b.netns}"
        if a.netns == HOST:  # the one link outside the namespaces: recorded, made alone
            alias = _alias(plan, directory)
            ledger.data["host_link"] = {"name": a.ifname, "ifindex": None, "alias": alias}
            ledger.save()
            ip(HOST, pair)
            ip(HOST, f"link set {a.ifname} alias", alias)
            ledger.data["host_link"]["ifindex"] = next(
                link["ifindex"] for link in links() if link.get("ifname") == a.ifname
            )
            ledger.save()
        else:
            pairs.append(pair)
        for port in (a, b):
            setup.setdefault(port.netns, []).extend(_port_setup(port, veth.mtu))
            if veth.level is not None:
                lc = config.links[veth.level]
                shaping.setdefault(port.netns, []).extend(_shaping(port, lc, config, veth.mtu))
    batch("ip", HOST, pairs)
    for ns, commands in setup.items():
        batch("ip", ns, commands)
    for ns, commands in shaping.items():
        batch("tc", ns, commands)
    ledger.data["state"] = "up"
    ledger.save()


def destroy(directory: Path) -> list[str]:
    """Removes what the ledger says this lab created: kills processes still inside its
    namespaces, deletes the namespaces (their veths go with them) and the host link.
    Returns what it refused to touch (recreated by someone else); [] when all is gone."""
    directory = directory.resolve()
    ledger = Ledger.load(directory)
    if ledger is None or ledger.data.get("state") == "down":
        return []
    refused: list[str] = []
    owned: dict[str, int] = {}
    for ns, recorded in ledger.data["namespaces"].items():
        current = netns_inode(ns)
        if current is None:
            continue
        if recorded is not None and current != recorded:
            refused.append(f"namespace {ns} (inode {current}, ours was {recorded})")
            continue
        owned[ns] = current
    left = kill_all(sorted(processes_in(set(owned.values()))))
    if left:
        raise LabError(f"processes {left} in the lab's namespaces survived SIGKILL")
    for ns in owned:
        ip(HOST, f"netns del {ns}")
    _remove_host_link(ledger, refused)
    ledger.data["state"] = "down" if not refused else "refused"
    ledger.data["refused"] = refused
    ledger.save()
    return refused


def _remove_host_link(ledger: Ledger, refused: list[str]) -> None:
    """The host end vanishes with its peer's namespace (asynchronously); delete it only if
    it is still there with our ifindex and alias."""
    want = ledger.data.get("host_link")
    if not want:
        return
    deadline = time.monotonic() + 5
    while True:
        found = [link for link in links() if link.get("ifname") == want["name"]]
        if not found:
            return
        link = found[0]
        if link.get("ifalias") != want["alias"] or (
            want["ifindex"] is not None and link.get("ifindex") != want["ifindex"]
        ):
            refused.append(f"link {want['name']} (alias {link.get('ifalias')!r} is not ours)")
            return
        if time.monotonic() > deadline:
            ip(HOST, f"link del {want['name']}")
            return
        time.sleep(0.1)


def leftovers(directory: Path) -> dict[str, list[Any]]:
    """What of a lab still exists: namespaces, host link, processes (empty lists = gone)."""
    ledger = Ledger.load(directory.resolve())
    if ledger is None:
        return {"namespaces": [], "host_link": [], "processes": []}
    recorded = {ns: ino for ns, ino in ledger.data["namespaces"].items() if ino is not None}
    present = [ns for ns in ledger.data["namespaces"] if netns_inode(ns) is not None]
    host = ledger.data.get("host_link") or {}
    link_left = [link["ifname"] for link in links() if link.get("ifname") == host.get("name")]
    return {
        "namespaces": present,
        "host_link": link_left,
        "processes": sorted(processes_in(set(recorded.values()))),
    }


def link_stats(directory: Path) -> list[dict[str, Any]]:
    """Per shaped direction: level, bytes and packets sent, drops, overlimits, backlog."""
    ledger = Ledger.load(directory.resolve())
    if ledger is None or ledger.data.get("state") != "up":
        raise LabError(f"{directory}: no lab is up here")
    rows = []
    for veth in ledger.plan.veths:
        if veth.level is None:
            continue
        left, right = veth.label.split("-", 1)
        for port, direction in ((veth.a, f"{left}->{right}"), (veth.b, f"{right}->{left}")):
            root = next(q for q in qdisc_stats(port.netns, port.ifname) if q.get("root"))
            rows.append(
                {
                    "link": direction,
                    "level": veth.level,
                    "netns": port.netns,
                    "ifname": port.ifname,
                    "qdisc": root["kind"],
                    "rate_bit": shaped_rate_bit(port.netns, port.ifname),
                    "bytes": root.get("bytes", 0),
                    "packets": root.get("packets", 0),
                    "drops": root.get("drops", 0),
                    "overlimits": root.get("overlimits", 0),
                    "backlog": root.get("backlog", 0),
                }
            )
    return rows
