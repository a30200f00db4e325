"""Features of a candidate against a queue snapshot, and Slurm's likely placement."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tailcast.collectors.jobs import QueueJob
from tailcast.collectors.topology import load_topology_toml
from tailcast.forecast.features import (
    FEATURES,
    QUEUE_FEATURES,
    Candidate,
    feature_row,
    feature_row_from_b,
)
from tailcast.forecast.placement import likely_nodes

REPO = Path(__file__).resolve().parents[2]
TOPO = load_topology_toml(REPO / "slurm_jobs" / "topology.example.toml")
WHEN = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)  # a Tuesday, 18:00 UTC


def job(job_id: str, nodes: list[str], state: str = "RUNNING") -> QueueJob:
    return QueueJob(job_id, job_id, "u", (state,), len(nodes), tuple(nodes))


QUEUE = (
    job("1", ["node05", "node06", "node07"]),  # island1/group2
    job("2", ["node09", "node10"]),  # island2/group3
    job("3", ["node16"]),  # single node: never background traffic
    job("4", ["node11", "node12", "node13", "node14"], "PENDING"),  # not running
    job("99", ["node01", "node02", "node03", "node04"]),  # the measuring job itself
)


def values(row: object) -> dict[str, float]:
    return dict(zip(FEATURES, row, strict=True))  # type: ignore[call-overload]


def test_queue_features_follow_eq1_eq2_and_leave_the_own_job_out() -> None:
    cand = Candidate("alltoall", 1 << 20, 4, 4, ("node01", "node02", "node03", "node04"))
    row, util = feature_row(QUEUE, 16, cand, WHEN, TOPO, own_job_id="99")
    v = values(row)
    # N_c = 5 nodes of multi-node running jobs; N_a = 6 allocated (with the 1-node job)
    assert (v["n_c"], v["n_c_dup"], v["n_a_dup"], v["n_t"]) == (5, 5, 6, 16)
    assert v["b_simple"] == pytest.approx(5 / 16)
    assert v["b"] == pytest.approx(5 / 16 * 5 / 6) == util.b
    assert (v["multi_node_jobs"], v["bg_job_nodes_max"]) == (2, 3)
    assert v["bg_job_nodes_mean"] == pytest.approx(2.5)
    # The candidate fills group1 alone; island1 = node01-08 holds node05-07 of job 1.
    assert v["bg_share_in_groups"] == 0.0
    assert v["bg_share_in_islands"] == pytest.approx(3 / 8)
    assert (v["locality"], v["levels_spanned"], v["groups_spanned"]) == (0, 1, 1)
    assert v["log2_msg_bytes"] == 20 and v["weekday"] == 1
    assert v["hour_sin"] == pytest.approx(math.sin(2 * math.pi * 18 / 24))


def test_spread_candidate_sees_background_in_its_groups() -> None:
    cand = Candidate("reduce", 4, 4, 4, ("node01", "node05", "node09", "node13"))
    v = values(feature_row(QUEUE, 16, cand, WHEN, TOPO, own_job_id="99")[0])
    assert v["locality"] == 2 and v["islands_spanned"] == 2 and v["groups_spanned"] == 4
    # all 16 nodes are in its groups; node05-07 and node09-10 carry background
    assert v["bg_share_in_groups"] == pytest.approx(5 / 16)


def test_without_topology_or_nodes_placement_features_are_unknown() -> None:
    cand = Candidate("bcast", 4, 4, 4, locality="same_island")
    v = values(feature_row(QUEUE, 16, cand, WHEN, None)[0])
    assert v["locality"] == 1
    assert all(math.isnan(v[k]) for k in ("levels_spanned", "bg_share_in_groups"))
    assert v["n_c"] == 9  # nothing excluded: the 4-node job 99 counts too


def test_b_only_row_marks_every_other_queue_feature_unknown() -> None:
    cand = Candidate("bcast", 1024, 4, 4, ("node01", "node02", "node03", "node04"))
    v = values(feature_row_from_b(0.42, cand, WHEN, TOPO))
    assert v["b"] == 0.42
    assert all(math.isnan(v[k]) for k in QUEUE_FEATURES)
    assert v["locality"] == 0 and v["benchmark"] >= 0


def test_likely_placement_is_best_fit_at_each_level() -> None:
    # group1 has 4 idle, group2 1 idle (5-7 busy), group3 2 idle, group4 4 idle
    busy = {"node05", "node06", "node07", "node09", "node10"}
    # 2 nodes: the fullest group that still fits is group3 (2 idle)
    assert likely_nodes(TOPO, busy, 2) == ["node11", "node12"]
    # 4 nodes: group1 and group4 fit; the first of the equally full ones
    assert likely_nodes(TOPO, busy, 4) == ["node01", "node02", "node03", "node04"]
    # 5 nodes: no group; island1 has 5 idle (fits exactly, fewest idle)
    five = likely_nodes(TOPO, busy, 5)
    assert five is not None and TOPO.classify(five).locality == "same_island"
    # 10 nodes: spans islands; 11 idle in total
    ten = likely_nodes(TOPO, busy, 10)
    assert ten is not None and len(set(ten)) == 10 and not busy & set(ten)
    assert TOPO.classify(ten).locality == "different_islands"
    assert likely_nodes(TOPO, busy, 11) is not None and likely_nodes(TOPO, busy, 12) is None
