"""The lab's background jobs as the replay sees them: Open MPI 4.1.4's libnbc linear
Ialltoall (every receive and send of a call posted at once) and a start somewhere in the
job's call/gap cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.lab.bgtrace import write_background_trace
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import read_trace
from tailcast.traces.schema import Op

MIB = 1 << 20


def test_each_call_posts_a_receive_and_a_send_per_peer_then_waits_for_all(tmp_path: Path) -> None:
    path = write_background_trace(tmp_path / "bg.parquet", 4, MIB, [300e6, 100e6, 0.0], 5e6)
    rows = read_trace(path)[0].to_pylist()
    rank1 = [r for r in rows if r["rank"] == 1]
    ops = [r["op"] for r in rank1]
    call = [Op.IRECV, Op.ISEND] * 3 + [Op.WAITALL]
    assert ops == [Op.INIT, *call * 3, Op.FINALIZE]
    # a2a_sched_linear's peer order, skipping itself
    assert [r["peer"] for r in rank1[1:7]] == [0, 0, 2, 2, 3, 3]
    assert rank1[7]["requests"] == list(range(6))
    assert rank1[14]["requests"] == list(range(6, 12))
    # the offset delays the first call; each call's pause separates it from the next
    starts = [r["t_start_ns"] for r in rank1 if r["op"] == Op.WAITALL]
    assert starts == [5_000_000, 305_000_000, 405_000_000]


def test_one_call_on_the_lab_fabric_takes_the_island_links_time(tmp_path: Path) -> None:
    fabric = load_fabric("lab")
    # two nodes in each island: each direction of the island link carries 2 x 2 MiB
    path = write_background_trace(tmp_path / "bg.parquet", 4, MIB, [0.0])
    nodes = "nodes:node05,node06,node13,node14"
    took = replay_trace(path, fabric, ReplayOptions(placement=nodes)).total_time_ns
    group, island = fabric.table["levels"][1], fabric.table["levels"][-1]
    rate, upstream = island["link_bandwidth_gbps"], group["link_bandwidth_gbps"]
    # the island link's htb bucket (burst + one GSO packet of overdraft) first lets the
    # group uplinks' rate through, draining at the difference; then the island's rate
    depth_bits = (island["burst_bytes"] + island["max_packet_bytes"]) * 8
    peak_ns = depth_bits / (upstream - rate)
    rest_ns = (4 * MIB * 8 - upstream * peak_ns) / rate
    assert took == pytest.approx(peak_ns + rest_ns, rel=0.01)
    assert took < 4 * MIB * 8 / rate  # faster than the rate alone
