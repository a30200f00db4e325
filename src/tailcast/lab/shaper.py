"""The network lab's link shapers as token buckets for a `tree` fabric: what
scripts/labnet/network.toml configures (per level the htb or tbf burst; the qdisc; the MTU),
plus the overdraft the kernel's rules allow. A specification, not a fit.

htb (net/sched/sch_htb.c: `htb_class_mode`, `htb_charge_class`) sends a packet while its
tokens are >= 0 and charges all of it, so one packet may overdraw the bucket. With GSO on
veth, TCP hands the qdisc super-packets of whole segments up to the device's `gso_max_size`
(65536 B; net/ipv4/tcp.c `tcp_xmit_size_goal`, `tcp_tso_autosize` allows all of it at the
lab's sub-512 µs RTTs): 7 segments of MSS = MTU - 20 (IPv4) - 20 (TCP) - 12 (timestamps) at
the lab's 9000 B MTU. tbf (sch_tbf.c) waits until it has tokens for the whole packet (and
segments GSO packets above its burst): no overdraft. The peak is what a veth reports
(drivers/net/veth.c `veth_get_link_ksettings`: 10 Gbit/s); it moves packets at memory speed,
whose cost the host model's per-message overhead carries.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from tailcast.errors import InputError

GSO_MAX_SIZE = 65536  # bytes: include/linux/netdevice.h, veth's default gso_max_size
TCP_IP_HEADERS = 20 + 20 + 12  # IPv4, TCP, TCP timestamps option (Linux default on)
VETH_GBPS = 10.0  # drivers/net/veth.c veth_get_link_ksettings: SPEED_10000


@dataclass(frozen=True)
class Bucket:
    """One level's shaper: `burst_bytes`, `max_packet_bytes`, `peak_bandwidth_gbps` of the
    `tree` model's [[levels]] tables."""

    burst_bytes: int
    max_packet_bytes: int
    peak_gbps: float


def max_super_packet(mtu_bytes: int) -> int:
    """Payload bytes of the largest GSO super-packet TCP builds at this MTU."""
    mss = mtu_bytes - TCP_IP_HEADERS
    return (GSO_MAX_SIZE // mss) * mss


def load_shapers(path: Path) -> dict[str, Bucket]:
    """Per level (node, group, island) the bucket network.toml configures."""
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"invalid TOML ({exc})") from exc

    def value(table: str, key: str) -> object:
        t: object = doc
        for part in table.split("."):
            t = t.get(part) if isinstance(t, dict) else None
        if not isinstance(t, dict) or key not in t:
            raise InputError(path, f"needs {table}.{key} (the lab's network.toml)")
        return t[key]

    def integer(table: str, key: str) -> int:
        v = value(table, key)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise InputError(path, f"{table}.{key} must be a positive integer, got {v!r}")
        return v

    qdisc = value("lab", "qdisc")
    if qdisc not in ("htb", "tbf"):
        raise InputError(path, f"lab.qdisc must be htb or tbf, got {qdisc!r}")
    overdraft = max_super_packet(integer("lab", "mtu_bytes")) if qdisc == "htb" else 0
    return {
        level: Bucket(integer(f"links.{level}", "burst_bytes"), overdraft, VETH_GBPS)
        for level in ("node", "group", "island")
    }
