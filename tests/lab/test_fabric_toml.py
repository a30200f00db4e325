"""A calibration written as a `tree` fabric means what was measured: the engine accepts the
TOML, its endpoints are the cluster's nodes in tree order, and a cross-island alltoall on
it takes the time the measured island rate gives; a non-uniform tree is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.collectors.topology import Topology
from tailcast.errors import UsageError
from tailcast.lab.calibrate import (
    CLASSES,
    LINKS_CROSSED,
    CalibrationSettings,
    ClassMeasurement,
    derive,
)
from tailcast.lab.fabric_toml import fabric_toml, tree_shape
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

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
