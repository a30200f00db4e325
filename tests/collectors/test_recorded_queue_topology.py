"""Outputs recorded on the local 16-node Slurm 22.05.8 (see tests/data/slurm-22.05/README.md):
the JSON and -o backends must agree, and the tree topology must classify placements."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.collectors.sinfo import parse_sinfo_nodes
from tailcast.collectors.squeue import load_queue_file
from tailcast.collectors.topology import (
    DIFFERENT_ISLANDS,
    SAME_GROUP,
    SAME_ISLAND,
    UnknownNodeError,
    parse_scontrol_topology,
    parse_topology_toml,
    topology_from_addrs,
)
from tailcast.collectors.utilisation import compute_b
from tailcast.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm-22.05"

TOML = """\
# Seed 001's Dragonfly+ shape, scaled down: 2 islands x 2 groups x 4 nodes.
[islands.i1]
g1 = "node[01-04]"
g2 = "node[05-08]"

[islands.i2]
g3 = "node[09-12]"
g4 = "node[13-16]"
"""


def test_shared_nodes_json_and_format_backends_agree() -> None:
    # Running: 1 node[01-02], 2 node[01-03], 3 node[01-06], 4 node01; 5, 6 pending.
    # Multi-node: 1,2,3 -> N_c = 6 unique, N_c' = 2+3+6 = 11, N_a = 11 + 1 = 12.
    for name in ("squeue-shared.json", "squeue-format-shared.txt"):
        jobs = load_queue_file(DATA / name).jobs
        u = compute_b(jobs, 16)
        assert (u.n_c, u.n_c_dup, u.n_a_dup, u.pending_jobs) == (6, 11, 12, 2), name
        assert u.b == pytest.approx(6 / 16 * 11 / 12)
        assert u.b_simple == pytest.approx(6 / 16)


def test_sinfo_node_lines_deduplicated_and_malformed_named() -> None:
    text = "node01\nnode02\nnode01\nnode[03-04]\n"
    assert parse_sinfo_nodes(text) == ("node01", "node02", "node03", "node04")
    with pytest.raises(InputError) as err:
        parse_sinfo_nodes("node01\nnode02 idle\n", "sinfo.txt")
    assert err.value.line == 2


def test_scontrol_topology_paths() -> None:
    topo = parse_scontrol_topology((DATA / "scontrol-show-topology.txt").read_text())
    assert len(topo.paths) == 16
    assert topo.paths["node01"] == ("top", "island1", "group1")
    assert topo.paths["node16"] == ("top", "island2", "group4")


@pytest.mark.parametrize("source", ["scontrol", "toml"])
def test_locality_classes(source: str) -> None:
    if source == "scontrol":
        topo = parse_scontrol_topology((DATA / "scontrol-show-topology.txt").read_text())
    else:
        topo = parse_topology_toml(TOML, "topo.toml")
    same_group = topo.classify(["node01", "node02", "node03", "node04"])
    assert (same_group.locality, same_group.levels_spanned, same_group.groups) == (
        SAME_GROUP,
        1,
        1,
    )
    island = topo.classify(["node01", "node02", "node05", "node06"])
    assert (island.locality, island.levels_spanned, island.groups) == (SAME_ISLAND, 2, 2)
    spread = topo.classify(["node01", "node05", "node09", "node13"])
    assert (spread.locality, spread.levels_spanned, spread.islands) == (DIFFERENT_ISLANDS, 3, 2)


def test_pick_nodes_have_requested_locality() -> None:
    topo = parse_topology_toml(TOML)
    for kind in (SAME_GROUP, SAME_ISLAND, DIFFERENT_ISLANDS):
        nodes = topo.pick_nodes(4, kind)
        assert len(set(nodes)) == 4 and topo.classify(nodes).locality == kind
    assert topo.pick_nodes(4, DIFFERENT_ISLANDS) == ["node01", "node09", "node05", "node13"]
    with pytest.raises(UnknownNodeError):
        topo.pick_nodes(5, SAME_GROUP)


def test_unknown_node_is_typed_error() -> None:
    topo = parse_topology_toml(TOML)
    with pytest.raises(UnknownNodeError, match="node99"):
        topo.classify(["node01", "node99"])


def test_topology_addr_paths() -> None:
    topo = topology_from_addrs(
        {"node01": "top.island1.group1.node01", "node05": "top.island1.group2.node05"},
        "switch.switch.switch.node",
    )
    assert topo.classify(["node01", "node05"]).locality == SAME_ISLAND


def test_bad_toml_names_line() -> None:
    with pytest.raises(InputError) as err:
        parse_topology_toml(TOML.replace('g3 = "node[09-12]"', "g3 = node[09-12]"), "t.toml")
    assert err.value.line == 7 and err.value.path == "t.toml"
    with pytest.raises(InputError) as err:
        parse_topology_toml(TOML.replace("node[09-12]", "node[04-12]"), "t.toml")
    assert err.value.line == 7 and "node04 is in two groups" in err.value.reason
    with pytest.raises(InputError) as err:
        parse_topology_toml(TOML.replace("node[09-12]", "node[09-"), "t.toml")
    assert err.value.line == 7


def test_bad_scontrol_record_names_line() -> None:
    text = (DATA / "scontrol-show-topology.txt").read_text()
    with pytest.raises(InputError) as err:
        parse_scontrol_topology(text + "garbage here\n", "topo.txt")
    assert err.value.line == 8
    with pytest.raises(InputError, match="no switches"):
        parse_scontrol_topology("", "topo.txt")
