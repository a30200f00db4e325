"""A calibration written as a `tree` fabric means what was measured: the engine accepts the
TOML, its endpoints are the cluster's nodes in tree order, and a cross-island alltoall on
it takes the time the measured island rate gives; a non-uniform tree is refused; the lab's
network.toml adds its shapers as token buckets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.collectors.topology import Topology
from tailcast.errors import InputError, UsageError
from tailcast.lab.calibrate import (
    CLASSES,
    LINKS_CROSSED,
    CalibrationSettings,
    ClassMeasurement,
    derive,
)
from tailcast.lab.fabric_toml import fabric_toml, tree_shape
from tailcast.lab.shaper import Bucket, load_shapers
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

NETWORK_TOML = Path(__file__).parents[2] / "scripts" / "labnet" / "network.toml"
RATES = {"same_group": 245.4e6, "same_island": 197.1e6, "different_islands": 98.3e6}


def _topology(groups_per_island: int = 2, islands: int = 2) -> Topology:
    paths = {}
    n = 0
    for i in range(1, islands + 1):
        for g in range(1, groups_per_island + 1):
            for _ in range(4):
                n += 1
                paths[f"node{n:02d}"] = (
                    "top",
                    f"island{i}",
                    f"group{(i - 1) * groups_per_island + g}",
                )
    return Topology(paths, "test")


def _calibration(one_way_min: dict[str, float]):  # type: ignore[no-untyped-def]
    classes = {
        c: ClassMeasurement(
            c,
            ["a", "b"],
            LINKS_CROSSED[c],
            100.0,
            200.0,
            one_way_min[c],
            RATES[c],
            [RATES[c]],
            0.02,
        )
        for c in CLASSES
    }
    return derive(classes, CalibrationSettings())


def test_fit_gives_link_latency_and_overhead_from_the_fastest_times() -> None:
    cal = _calibration({"same_group": 30.0, "same_island": 40.0, "different_islands": 50.0})
    assert cal.link_latency_us == pytest.approx(5.0)
    assert cal.overhead_us == pytest.approx(20.0)
    flat = _calibration({"same_group": 40.0, "same_island": 30.0, "different_islands": 35.0})
    assert flat.link_latency_us == 0.0 and flat.overhead_us == pytest.approx(35.0)


def test_written_fabric_replays_at_the_measured_rates(tmp_path: Path) -> None:
    topo = _topology()
    cal = _calibration({"same_group": 30.0, "same_island": 40.0, "different_islands": 50.0})
    path = tmp_path / "lab.toml"
    path.write_text(fabric_toml(cal, topo, "lab"))
    fabric = load_fabric(path)
    assert fabric.node_names == [f"node{i:02d}" for i in range(1, 17)]
    trace = tmp_path / "a2a.parquet"
    table, meta = osu_trace("alltoall", 4, [1 << 20], 3)
    write_trace(table, trace, meta)
    out = replay_trace(trace, fabric, ReplayOptions(placement="nodes:node[01-02,09-10]"))
    # 2 x 2 blocks of 1 MiB cross the island link each way: 4 MiB at the island rate
    ideal_us = 4 * (1 << 20) * 8 / RATES["different_islands"] * 1e6
    assert out.iteration_latency_us.min() == pytest.approx(ideal_us, rel=0.02)
    same = replay_trace(trace, fabric, ReplayOptions(placement="nodes:node[01-04]"))
    # in one group each node sends 3 MiB through its own node link
    assert same.iteration_latency_us.min() == pytest.approx(
        3 * (1 << 20) * 8 / RATES["same_group"] * 1e6, rel=0.02
    )


def test_unequal_groups_are_refused() -> None:
    paths = dict(_topology().paths)
    paths["node17"] = ("top", "island2", "group4")
    with pytest.raises(UsageError, match="equal groups"):
        tree_shape(Topology(paths, "test"))
    assert tree_shape(_topology(groups_per_island=3, islands=1))[0] == [4, 3]


def test_the_labs_shapers_become_token_buckets(tmp_path: Path) -> None:
    """network.toml's bursts with htb's GSO overdraft (7 segments of 9000 - 52 B at its
    MTU) and veth's 10 Gbit/s; a cross-island 32 KiB message after idle leaves at the peak
    instead of taking 2.7 ms at the island rate."""
    shapers = load_shapers(NETWORK_TOML)
    assert set(shapers) == {"node", "group", "island"}
    assert all(b == Bucket(18000, 7 * 8948, 10.0) for b in shapers.values())
    path = tmp_path / "lab.toml"
    cal = _calibration({"same_group": 30.0, "same_island": 40.0, "different_islands": 50.0})
    path.write_text(fabric_toml(cal, _topology(), "lab", shapers))
    fabric = load_fabric(path)
    assert [lv["burst_bytes"] for lv in fabric.table["levels"]] == [18000] * 3
    trace = tmp_path / "p2p.parquet"
    table, meta = osu_trace("bcast", 2, [1 << 15], 1)
    write_trace(table, trace, meta)
    out = replay_trace(trace, fabric, ReplayOptions(placement="nodes:node[01,09]"))
    at_rate_us = (1 << 15) * 8 / RATES["different_islands"] * 1e6
    assert out.iteration_latency_us.max() < at_rate_us / 4
    plain = tmp_path / "plain.toml"
    plain.write_text(fabric_toml(cal, _topology(), "plain"))
    slow = replay_trace(trace, load_fabric(plain), ReplayOptions(placement="nodes:node[01,09]"))
    assert slow.iteration_latency_us.min() > at_rate_us


def test_tbf_has_no_overdraft_and_a_missing_burst_is_named(tmp_path: Path) -> None:
    text = NETWORK_TOML.read_text()
    tbf = tmp_path / "tbf.toml"
    tbf.write_text(text.replace('qdisc = "htb"', 'qdisc = "tbf"'))
    assert load_shapers(tbf)["node"].max_packet_bytes == 0
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("burst_bytes = 18000\nqueue_bytes", "queue_bytes", 1))
    with pytest.raises(InputError, match=r"links\.node\.burst_bytes"):
        load_shapers(bad)
