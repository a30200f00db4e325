"""A calibration (calibrate.py) written as a `tree` fabric for the replay engine: the
cluster's switch hierarchy (arity per level from the topology), each level's measured
achievable rate and per-link latency, and in its [host] table the per-message host overhead
and the reduction cost, with the measurements they come from in comments; given the lab's
network.toml (lab/shaper.py), each level's shaper as a token bucket. `tailcast lab calibrate
--fabric-out` writes it; the bundled `lab` fabric is such a file, written on the network lab."""

from __future__ import annotations

from datetime import UTC, datetime

import hostlist

from tailcast.collectors.topology import Topology
from tailcast.errors import UsageError
from tailcast.lab.calibrate import CLASSES, TOP_LEVEL, Calibration
from tailcast.lab.shaper import Bucket

LEVEL_NOTES = {
    "node": "node links (node <-> group switch)",
    "group": "group uplinks (group <-> island switch)",
    "island": "island links",
}


def tree_shape(topo: Topology) -> tuple[list[int], list[str]]:
    """Arity of each level from the endpoints up, and the endpoints in the order the tree
    model numbers them (group by group, island by island). Uniform trees only."""
    islands = topo.islands()
    groups = topo.groups()
    per_group = {len(groups[g]) for gs in islands.values() for g in gs}
    per_island = {len(gs) for gs in islands.values()}
    if len(per_group) != 1 or len(per_island) != 1:
        raise UsageError(
            f"the tree model needs equal groups and islands; topology has group sizes "
            f"{sorted(per_group)} and islands of {sorted(per_island)} groups"
        )
    arity = [per_group.pop(), per_island.pop()]
    if len(islands) > 1:
        arity.append(len(islands))
    order = [n for gs in islands.values() for g in gs for n in groups[g]]
    return arity, order


def _bucket_lines(b: Bucket, source: str) -> list[str]:
    return [
        f"burst_bytes = {b.burst_bytes}                # {source}",
        f"max_packet_bytes = {b.max_packet_bytes}          # htb's overdraft: up to a GSO packet",
        f"peak_bandwidth_gbps = {b.peak_gbps:.1f}         # veth's reported speed",
    ]


def fabric_toml(
    cal: Calibration,
    topo: Topology,
    name: str = "lab",
    shapers: dict[str, Bucket] | None = None,
    shapers_from: str = "network.toml",
) -> str:
    """The fabric TOML; `shapers` (per level, from `shapers_from`) adds token buckets."""
    arity, order = tree_shape(topo)
    nodes = hostlist.collect_hostlist(order)
    if list(hostlist.expand_hostlist(nodes)) != order:  # a hostlist sorts; keep our order
        nodes = ",".join(order)
    levels = ["node", "group", "island"][: len(arity)]
    rates = ", ".join(f"{cal.rate_bit_s[lv] / 1e6:.1f}" for lv in levels)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    half = cal.overhead_us * 1e3 / 2
    lines = [
        f"# {name}: the cluster as `tailcast lab calibrate` measured it ({when}, host load",
        f"# {cal.host_load_1m:.1f}). Rates: osu_bw-style streams of "
        f"{cal.settings.bw_window} x {cal.settings.bw_size_bytes} B messages, one pair per",
        "# link class, each class's rate taken for its highest link; overheads: the fastest",
        "# 1-byte ping-pong (one-way = 2 x overhead + links), a line through the three classes",
        "# (medians are mostly scheduling delay on a shared host: kept here as the noise).",
    ]
    if shapers is not None:
        lines += [
            "# Buckets: each level's shaper as configured (lab/shaper.py). The rates stay the",
            "# streams' goodput: a 16 MiB window gains at most burst + packet (~0.5 %) from",
            "# the bucket, less than TCP's shortfall from the configured rate (~1-1.5 %).",
        ]
    for c in CLASSES:
        m = cal.classes[c]
        lines.append(
            f"#   {c:18s} {'-'.join(m.nodes):14s} one-way min {m.one_way_us_min:6.1f} us "
            f"p50 {m.one_way_us_p50:7.1f} us, rate {m.rate_bit_s / 1e6:6.1f} Mbit/s"
        )
    shape = " x ".join(map(str, reversed(arity)))
    lines += [
        'model = "tree"',
        f'description = "{name}: {shape} tree, measured {rates} Mbit/s"',
        f'nodes = "{nodes}"',
        "switch_latency_ns = 0.0",
        "",
    ]
    for level, a in zip(levels, arity, strict=True):
        c = next(k for k, v in TOP_LEVEL.items() if v == level)
        lines += [
            f"[[levels]]                        # {LEVEL_NOTES[level]}: {c}",
            f"arity = {a}",
            f"link_bandwidth_gbps = {cal.rate_bit_s[level] / 1e9:.6f}",
            f"link_latency_ns = {cal.link_latency_us * 1e3:.1f}",
        ]
        if shapers is not None:
            lines += _bucket_lines(shapers[level], f"{shapers_from} links.{level}")
        lines.append("")
    lines += [
        "[host]",
        f"overhead_ns = {half:.1f}                # half the per-message cost (o at each end)",
        f"gamma_ns_per_byte = {cal.gamma_ns_per_byte:.4f}  # MPI_Reduce_local, MPI_SUM on bytes",
        "",
    ]
    return "\n".join(lines)
