"""The network lab leaves nothing behind: `down` removes every namespace, veth, bridge, qdisc
and process the lab created; an `up` interrupted by a signal removes what it had built; one
killed outright is removed by `down` or by the next `up`; and what the lab did not create is
never touched."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.slurm_fixture import SCRIPT, _ci, _lab_available, _slurm_available

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


@pytest.fixture()
def lab_dir() -> Iterator[Path]:
    reason = None if _slurm_available() else "Slurm is not installed"
    reason = reason or _lab_available()
    if reason:
        if _ci():
            pytest.fail(reason + " — CI requires the network lab")
        pytest.skip(reason)
    directory = Path(tempfile.mkdtemp(prefix="tailcast-labt-"))
    yield directory
    subprocess.run([str(SCRIPT), "down", str(directory)], capture_output=True, timeout=120)
    shutil.rmtree(directory, ignore_errors=True)


def _ledger(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "lab.json").read_text())
    return data


def _what_is_left(
    ledger: dict[str, Any], reused: frozenset[int] = frozenset()
) -> dict[str, list[Any]]:
    """Everything of this lab the kernel still knows: namespaces (by name and by the recorded
    inodes, which a process could keep alive unnamed), host links, processes inside.
    `reused`: inodes a later lab was given after this one's were freed (the kernel reuses)."""
    tag = ledger["plan"]["tag"]
    named = (
        [p.name for p in Path("/run/netns").glob(f"*{tag}*")] if Path("/run/netns").exists() else []
    )
    inodes = {i for i in ledger["namespaces"].values() if i is not None} - reused
    procs = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.stat(proc / "ns" / "net").st_ino in inodes:
                    procs.append(int(proc.name))
            except OSError:
                continue
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return {
        "namespaces": named,
        "processes": procs,
        "host_links": [ln for ln in links.splitlines() if f"tcl{tag}" in ln],
    }


def _nothing_left(
    ledger: dict[str, Any], timeout: float = 10, reused: frozenset[int] = frozenset()
) -> None:
    deadline = time.monotonic() + timeout
    left = _what_is_left(ledger, reused)
    while any(left.values()) and time.monotonic() < deadline:
        time.sleep(0.2)  # the kernel frees a deleted namespace's links asynchronously
        left = _what_is_left(ledger, reused)
    assert not any(left.values()), left


def _up(d: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SCRIPT), "up", str(d), "--network", "lab"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_namespaces(d: Path, proc: subprocess.Popen[str], count: int) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            ledger = _ledger(d)
        except (FileNotFoundError, json.JSONDecodeError):
            ledger = {}
        made = [i for i in ledger.get("namespaces", {}).values() if i is not None]
        if len(made) >= count:
            return ledger
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise TimeoutError("up never created the namespaces")


def test_up_then_down_leaves_nothing(lab_dir: Path) -> None:
    res = subprocess.run(
        [str(SCRIPT), "up", str(lab_dir), "--network", "lab"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr
    ledger = _ledger(lab_dir)
    assert ledger["state"] == "up"
    present = _what_is_left(ledger)
    assert len(present["namespaces"]) == 17 and present["host_links"]  # 16 nodes + switches
    assert len(present["processes"]) >= 16  # one slurmd per node at least
    res = subprocess.run([str(SCRIPT), "down", str(lab_dir)], capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    _nothing_left(ledger)
    assert _ledger(lab_dir)["state"] == "down"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_up_removes_what_it_built(lab_dir: Path, sig: int) -> None:
    proc = _up(lab_dir)
    ledger = _wait_for_namespaces(lab_dir, proc, 6)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted by signal" in err, err
    _nothing_left(ledger)


def test_killed_up_is_cleaned_by_the_next_up_and_by_down(lab_dir: Path) -> None:
    proc = _up(lab_dir)
    first = _wait_for_namespaces(lab_dir, proc, 9)
    proc.kill()  # SIGKILL: no handler runs, the half-built lab stays
    proc.communicate(timeout=30)
    assert _what_is_left(first)["namespaces"]
    res = subprocess.run(
        [str(SCRIPT), "up", str(lab_dir), "--network", "lab"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr
    second = _ledger(lab_dir)
    # the next `up` removed the stale lab before building its own
    _nothing_left(first, reused=frozenset(second["namespaces"].values()))
    assert second["plan"]["tag"] != first["plan"]["tag"]
    # killed again once daemons run: `down` still removes everything
    subprocess.run([str(SCRIPT), "down", str(lab_dir)], check=True, timeout=120)
    _nothing_left(second)


def test_down_refuses_to_remove_a_namespace_it_did_not_create(lab_dir: Path) -> None:
    subprocess.run([str(SCRIPT), "up", str(lab_dir), "--network", "lab"], check=True, timeout=180)
    ledger = _ledger(lab_dir)
    name = ledger["plan"]["node_ns"]["node16"]
    # Someone else takes the name: ours stays alive unnamed (its slurmd holds it).
    subprocess.run(["ip", "netns", "del", name], check=True)
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        foreign = os.stat(f"/run/netns/{name}").st_ino
        res = subprocess.run(
            [str(SCRIPT), "down", str(lab_dir)], capture_output=True, text=True, timeout=120
        )
        assert res.returncode == 1 and "did not create" in res.stderr, res.stderr
        assert os.stat(f"/run/netns/{name}").st_ino == foreign  # left alone
        left = _what_is_left(ledger)
        assert left["namespaces"] == [name] and not left["processes"] and not left["host_links"]
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)
