"""Thin, typed wrappers over iproute2 (`ip`, `tc`), `nsenter` and /proc: the only place the
lab talks to the kernel. Every call is an argv list with a timeout; a failure raises LabError
with the command and its stderr."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

NETNS_DIR = Path("/run/netns")


class LabError(Exception):
    """The lab could not be built, inspected or removed."""


def run(argv: list[str], timeout: float = 30, stdin: str | None = None) -> str:
    try:
        res = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise LabError(f"{argv[0]} not found (install iproute2 / util-linux)") from exc
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"`{' '.join(argv)}` timed out after {timeout:g} s") from exc
    if res.returncode != 0:
        raise LabError(f"`{' '.join(argv)}` failed ({res.returncode}): {res.stderr.strip()}")
    return res.stdout


def ip(netns: str, command: str, *verbatim: str) -> str:
    """`ip` in a namespace ("" = the host's): `command` is split on blanks (names and numbers
    only), `verbatim` arguments are passed as they are."""
    return run(["ip", *(["-n", netns] if netns else []), *command.split(), *verbatim])


def tc(netns: str, command: str) -> str:
    return run(["tc", *(["-n", netns] if netns else []), *command.split()])


def batch(tool: str, netns: str, commands: list[str], timeout: float = 60) -> None:
    """`ip` or `tc` commands (as `ip` / `tc` take them, without the tool's name) run by one
    process in a namespace: `-batch` stops at the first that fails, and its error names the
    line. A lab is ~650 commands; one process each cost 29 s at a load of 16 on 2 cores."""
    if commands:
        run([tool, *(["-n", netns] if netns else []), "-batch", "-"], timeout, "\n".join(commands))


def in_netns(netns: str, argv: list[str], timeout: float = 30) -> str:
    return run(["nsenter", f"--net={NETNS_DIR / netns}", *argv], timeout)


def netns_argv(netns: str, argv: list[str]) -> list[str]:
    """argv that runs `argv` inside a namespace (nsenter execs it: same PID, no fork)."""
    return ["nsenter", f"--net={NETNS_DIR / netns}", *argv]


def netns_inode(name: str) -> int | None:
    """Inode of a named namespace (the nsfs inode that /proc/PID/ns/net also shows)."""
    try:
        return os.stat(NETNS_DIR / name).st_ino
    except FileNotFoundError:
        return None


def netns_names() -> set[str]:
    try:
        return {p.name for p in NETNS_DIR.iterdir()}
    except FileNotFoundError:
        return set()


def processes_in(inodes: set[int]) -> dict[int, int]:
    """PID -> namespace inode of every live process inside one of these namespaces."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ino = os.stat(proc / "ns" / "net").st_ino
        except OSError:
            continue
        if ino in inodes:
            found[int(proc.name)] = ino
    return found


def kill_all(pids: list[int], grace_s: float = 5.0) -> list[int]:
    """SIGTERM, then SIGKILL after grace_s; returns the PIDs still alive after both."""

    def alive(pid: int) -> bool:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        return stat.rsplit(")", 1)[-1].split()[0] != "Z"

    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 3.0)):
        for pid in pids:
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(alive(p) for p in pids):
            time.sleep(0.05)
        pids = [p for p in pids if alive(p)]
        if not pids:
            break
    return pids


def links(netns: str = "") -> list[dict[str, Any]]:
    """`ip -j -d link show` of a namespace: ifname, ifindex, ifalias, mtu, ..."""
    out: list[dict[str, Any]] = json.loads(ip(netns, "-j -d link show") or "[]")
    return out


def host_networks() -> list[str]:
    """Every IPv4 prefix the host namespace has an address or a route in."""
    nets = []
    for entry in json.loads(ip("", "-j -4 addr show") or "[]"):
        for a in entry.get("addr_info", []):
            nets.append(f"{a['local']}/{a['prefixlen']}")
    for r in json.loads(ip("", "-j -4 route show table all") or "[]"):
        dst = r.get("dst", "")
        if dst and dst != "default":
            nets.append(dst if "/" in dst else f"{dst}/32")
    return nets


_UNITS = {"bit": 1, "Kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9, "Tbit": 10**12}


def shaped_rate_bit(netns: str, ifname: str) -> float | None:
    """The rate the kernel enforces on an interface's egress, read back from `tc` (the htb
    root class 1:1, or the tbf root qdisc); None when neither shapes it."""
    for what, pattern in (("class", r"class htb 1:1 root\b"), ("qdisc", r"qdisc tbf \S+ root\b")):
        text = tc(netns, f"{what} show dev {ifname}")
        found = re.search(pattern + r".*?\brate (\d+(?:\.\d+)?)([KMGT]?bit)\b", text)
        if found:
            return float(found.group(1)) * _UNITS[found.group(2)]
    return None


def qdisc_stats(netns: str, ifname: str) -> list[dict[str, Any]]:
    """`tc -s -j qdisc show dev IF`: kind, bytes, packets, drops, overlimits per qdisc."""
    out: list[dict[str, Any]] = json.loads(tc(netns, f"-s -j qdisc show dev {ifname}") or "[]")
    return out
