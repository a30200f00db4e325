"""Lab campaign files are checked with errors naming file and key; which data links a job
uses, and whether two jobs share one, follows from the topology alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.collectors.topology import Topology
from tailcast.errors import InputError
from tailcast.lab.campaign import plan
from tailcast.lab.links import data_links, path_links, shares_links
from tailcast.lab.spec import load_lab_campaign

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "slurm_jobs" / "lab-campaign.toml"


def _lab_topology() -> Topology:
    paths = {}
    for i in range(1, 17):
        group = (i - 1) // 4 + 1
        island = (group - 1) // 2 + 1
        paths[f"node{i:02d}"] = ("top", f"island{island}", f"group{group}")
    return Topology(paths, "test")


def test_path_links_climb_to_the_lowest_common_switch() -> None:
    topo = _lab_topology()
    assert path_links(topo, "node01", "node02") == [("node01", "group1"), ("group1", "node02")]
    assert path_links(topo, "node01", "node05") == [
        ("node01", "group1"),
        ("group1", "island1"),
        ("island1", "group2"),
        ("group2", "node05"),
    ]
    assert len(path_links(topo, "node01", "node09")) == 6
    # directions are separate links
    assert ("island1", "top") in data_links(topo, ["node01", "node09"])
    assert ("top", "island1") in data_links(topo, ["node01", "node09"])


def test_two_tops_are_joined_directly() -> None:
    topo = Topology({"a": ("i1", "g1"), "b": ("i2", "g2")}, "test")
    assert path_links(topo, "a", "b") == [
        ("a", "g1"),
        ("g1", "i1"),
        ("i1", "i2"),
        ("i2", "g2"),
        ("g2", "b"),
    ]


def test_example_campaign_shares_links_only_where_it_says() -> None:
    camp = load_lab_campaign(EXAMPLE)
    runs = {(r.phase.name, r.placement): r.shares_links for r in plan(camp, _lab_topology())}
    assert runs[("none", "different_islands")] is False
    for phase in ("cross-4", "cross-8", "cross-10"):
        assert runs[(phase, "different_islands")] is True
    for phase in ("local-4", "local-8", "local-10"):
        assert runs[(phase, "different_islands")] is False
    assert not any(v for (_, placement), v in runs.items() if placement == "same_group")
    assert ("cross-10", "same_group") not in runs  # node04 is busy in that phase
    assert not shares_links(_lab_topology(), ["node01", "node02"], [])


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        (
            'benchmarks = ["bcast", "reduce", "alltoall"]',
            'benchmarks = ["bcast", "scan"]',
            "benchmarks",
        ),
        ('sizes = ["32K", "1M"]', 'sizes = ["32Q"]', "sizes"),
        ('pattern = "alltoall"', 'pattern = "bcast"', "[background] pattern"),
        ('same_group = "node[01-04]"', 'same_group = "node[01"', "[foreground] same_group"),
        ('jobs = ["node[05-08]"]', 'jobs = ["node[05-08]", "node08,node09"]', "overlap"),
        ("gap_ms = 300", "gap_ms = -1", "gap_ms"),
        ('gaps = "exponential"', 'gaps = "poisson"', "[background] gaps"),
        ('name = "none"', 'name = "cross-4"', "unique"),
        ("settle_s = 5.0", "settle = 5.0", "unknown keys in [campaign]"),
    ],
)
def test_bad_campaign_names_file_and_key(tmp_path: Path, old: str, new: str, names: str) -> None:
    text = EXAMPLE.read_text()
    assert old in text, old
    path = tmp_path / "LAB.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(InputError) as err:
        load_lab_campaign(path)
    assert str(path) in str(err.value) and names in str(err.value)


def test_background_calls_are_counted_inside_a_run_window(tmp_path: Path) -> None:
    from tailcast.lab.campaign import _calls_between, _progress

    log = tmp_path / "bg.jsonl"
    lines = [f'{{"t": {100.0 + i}, "calls": {3 * i}}}' for i in range(10)]
    log.write_text("\n".join(lines) + '\n{"t": 110.0, "cal')  # cut by the job's cancellation
    samples = _progress(log)
    assert len(samples) == 10
    assert _calls_between(samples, 102.5, 106.5) == 18 - 6  # samples at t=102 and t=106
    assert _calls_between(samples, 50.0, 60.0) == 0
    assert _calls_between(_progress(tmp_path / "missing.jsonl"), 0.0, 1.0) == 0
