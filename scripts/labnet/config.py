"""The lab's network description (network.toml): one rate, burst and queue limit per tree
level, the qdisc that shapes them, the priority band for control packets, MTU, TCP settings,
address pools, and the Open MPI settings every task on the lab gets.

Every key is checked here, once; errors name the file, the key and what was expected.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEVELS = ("node", "group", "island")
QDISCS = ("htb", "tbf")
CONGESTION_CONTROLS = ("cubic", "reno", "bbr")
LAB_KEYS = {
    "qdisc",
    "control_priority_bytes",
    "mtu_bytes",
    "tcp_congestion_control",
    "tcp_slow_start_after_idle",
    "mgmt_pool",
    "data_pool",
}
LINK_KEYS = {"rate_mbit", "burst_bytes", "queue_bytes"}


class LabConfigError(Exception):
    """A network.toml that cannot be used; the message names file and key."""


@dataclass(frozen=True)
class LinkClass:
    """How one level's links are shaped, in each direction."""

    level: str
    rate_mbit: float
    burst_bytes: int
    queue_bytes: int


@dataclass(frozen=True)
class LabConfig:
    path: Path
    qdisc: str
    control_priority_bytes: int  # IP packets shorter than this go first; 0 = one band
    mtu_bytes: int
    tcp_congestion_control: str
    tcp_slow_start_after_idle: bool
    mgmt_pool: ipaddress.IPv4Network
    data_pool: ipaddress.IPv4Network
    links: dict[str, LinkClass]
    mpi_env: dict[str, str]  # OMPI_MCA_* for every task (the lab's TaskProlog)

    def as_record(self) -> dict[str, Any]:
        """The values the running lab was built with (kept in the cluster record)."""
        return {
            "config": str(self.path),
            "qdisc": self.qdisc,
            "control_priority_bytes": self.control_priority_bytes,
            "mtu_bytes": self.mtu_bytes,
            "tcp_congestion_control": self.tcp_congestion_control,
            "tcp_slow_start_after_idle": self.tcp_slow_start_after_idle,
            "links": {
                name: {k: getattr(lc, k) for k in sorted(LINK_KEYS)}
                for name, lc in self.links.items()
            },
            "mpi_env": dict(self.mpi_env),
        }


def default_config_path() -> Path:
    return Path(__file__).resolve().parent / "network.toml"


def _number(path: Path, key: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LabConfigError(f"{path}: {key} must be a number, got {value!r}")
    if not low <= value <= high:
        raise LabConfigError(f"{path}: {key} = {value} is outside [{low:g}, {high:g}]")
    return float(value)


def _integer(path: Path, key: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LabConfigError(f"{path}: {key} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise LabConfigError(f"{path}: {key} = {value} is outside [{low}, {high}]")
    return value


def _choice(path: Path, key: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise LabConfigError(f"{path}: {key} = {value!r}; expected one of {', '.join(allowed)}")
    return str(value)


def _pool(path: Path, key: str, value: object) -> ipaddress.IPv4Network:
    try:
        net = ipaddress.IPv4Network(str(value))
    except ValueError as exc:
        raise LabConfigError(f"{path}: {key} = {value!r} is not an IPv4 network ({exc})") from exc
    if net.prefixlen > 23 or not net.is_private:
        raise LabConfigError(f"{path}: {key} = {value} must be a private network of /23 or wider")
    return net


def _table(path: Path, doc: dict[str, Any], key: str, allowed: set[str]) -> dict[str, Any]:
    table = doc.get(key)
    if not isinstance(table, dict):
        raise LabConfigError(f"{path}: needs a [{key}] table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise LabConfigError(
            f"{path}: unknown keys in [{key}]: {unknown}; known: {sorted(allowed)}"
        )
    missing = sorted(allowed - set(table))
    if missing:
        raise LabConfigError(f"{path}: [{key}] lacks {missing}")
    return table


def _control_priority(path: Path, value: object, qdisc: str) -> int:
    """0, or a power of two ≥ 64: the u32 filter matches 'IP total length < N' as a mask."""
    n = _integer(path, "lab.control_priority_bytes", value, 0, 1024)
    if n and (n < 64 or n & (n - 1)):
        raise LabConfigError(f"{path}: lab.control_priority_bytes = {n}; use 0 or 64, 128, ...")
    if n and qdisc != "htb":
        raise LabConfigError(
            f"{path}: lab.control_priority_bytes needs qdisc = 'htb' (tbf is classless)"
        )
    return n


def _mpi_env(path: Path, doc: dict[str, Any]) -> dict[str, str]:
    table = doc.get("mpi", {})
    if not isinstance(table, dict):
        raise LabConfigError(f"{path}: [mpi] must be a table of OMPI_MCA_* = value")
    bad = [k for k, v in table.items() if not re.fullmatch(r"OMPI_MCA_\w+", k) or "'" in str(v)]
    if bad:
        raise LabConfigError(
            f"{path}: [mpi] keys must be OMPI_MCA_<param> with plain values: {bad}"
        )
    return {k: str(v) for k, v in table.items()}


def load_config(path: Path | None = None) -> LabConfig:
    path = (path or default_config_path()).resolve()
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as exc:
        raise LabConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        where = f" line {found.group(1)}" if found else ""
        raise LabConfigError(f"{path}{where}: invalid TOML ({exc})") from exc
    unknown = sorted(set(doc) - {"lab", "links", "mpi"})
    if unknown:
        raise LabConfigError(f"{path}: unknown tables {unknown}; expected [lab], [links.*], [mpi]")
    lab = _table(path, doc, "lab", LAB_KEYS)
    if not isinstance(lab["tcp_slow_start_after_idle"], bool):
        raise LabConfigError(f"{path}: lab.tcp_slow_start_after_idle must be true or false")
    links_doc = doc.get("links")
    if not isinstance(links_doc, dict) or set(links_doc) != set(LEVELS):
        found_levels = sorted(links_doc) if isinstance(links_doc, dict) else []
        raise LabConfigError(
            f"{path}: needs exactly [links.node], [links.group] and [links.island], "
            f"found {found_levels}"
        )
    mtu = _integer(path, "lab.mtu_bytes", lab["mtu_bytes"], 1280, 65000)
    links = {}
    for level in LEVELS:
        t = _table(path, links_doc, level, LINK_KEYS)
        links[level] = LinkClass(
            level=level,
            rate_mbit=_number(path, f"links.{level}.rate_mbit", t["rate_mbit"], 1, 100_000),
            # A burst below one packet would stall htb/tbf on every full-size frame.
            burst_bytes=_integer(
                path, f"links.{level}.burst_bytes", t["burst_bytes"], mtu + 14, 1 << 26
            ),
            queue_bytes=_integer(
                path, f"links.{level}.queue_bytes", t["queue_bytes"], 2 * (mtu + 14), 1 << 28
            ),
        )
    mgmt = _pool(path, "lab.mgmt_pool", lab["mgmt_pool"])
    data = _pool(path, "lab.data_pool", lab["data_pool"])
    if mgmt.overlaps(data):
        raise LabConfigError(f"{path}: lab.mgmt_pool {mgmt} overlaps lab.data_pool {data}")
    qdisc = _choice(path, "lab.qdisc", lab["qdisc"], QDISCS)
    return LabConfig(
        path=path,
        qdisc=qdisc,
        control_priority_bytes=_control_priority(path, lab["control_priority_bytes"], qdisc),
        mtu_bytes=mtu,
        tcp_congestion_control=_choice(
            path, "lab.tcp_congestion_control", lab["tcp_congestion_control"], CONGESTION_CONTROLS
        ),
        tcp_slow_start_after_idle=lab["tcp_slow_start_after_idle"],
        mgmt_pool=mgmt,
        data_pool=data,
        links=links,
        mpi_env=_mpi_env(path, doc),
    )
