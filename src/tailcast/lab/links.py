"""Which data links a job's traffic may use on a tree topology, so a campaign can say from
the topology alone whether background jobs share a link with the measured one.

A message from a to b climbs from a's leaf switch to the lowest switch a and b share, then
descends to b; every hop is a directed link (a link's two directions are separate, as the
lab shapes them). Without a common switch (two top-level switches) the tops are joined
directly, as the lab joins its two islands.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise, permutations

from tailcast.collectors.topology import Topology

Link = tuple[str, str]


def path_links(topo: Topology, src: str, dst: str) -> list[Link]:
    up = [src, *reversed(topo.paths[src])]  # node, leaf switch, ..., top
    down = [dst, *reversed(topo.paths[dst])]
    shared = next((s for s in up[1:] if s in down[1:]), None)
    if shared is not None:  # climb to the lowest common switch, descend from it
        up, down = up[: up.index(shared) + 1], down[: down.index(shared) + 1]
        return [*pairwise(up), *pairwise(reversed(down))]
    return [*pairwise(up), (up[-1], down[-1]), *pairwise(reversed(down))]


def data_links(topo: Topology, nodes: Iterable[str]) -> set[Link]:
    """Directed links an all-to-all among `nodes` may use."""
    return {link for a, b in permutations(list(nodes), 2) for link in path_links(topo, a, b)}


def shares_links(topo: Topology, nodes: Iterable[str], others: Iterable[Iterable[str]]) -> bool:
    mine = data_links(topo, nodes)
    return any(mine & data_links(topo, job) for job in others)
