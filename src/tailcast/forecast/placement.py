"""Where Slurm would likely put a job of N nodes now, so a forecast can use the locality and
the background around nodes the job does not have yet.

Seed 001 §4.1 describes Slurm on a tree topology: it prefers idle nodes under one leaf
switch (group); when no group has enough, it "looks for the switches (groups) with the
fewest number of idle nodes and chooses the idle nodes connected to that switch, and
repeats this process until it assigns all the requested nodes", staying inside one island
when one island can hold the job. This module follows that description (best fit at each
level); it is an estimate, not Slurm's exact select plugin.
"""

from __future__ import annotations

from collections.abc import Iterable

from tailcast.collectors.topology import Topology


def _fill(groups: list[list[str]], count: int) -> list[str]:
    """Idle nodes of the groups with the fewest idle nodes first, until `count`."""
    picked: list[str] = []
    for members in sorted(groups, key=len):
        picked += members[: count - len(picked)]
        if len(picked) == count:
            break
    return picked


def likely_nodes(topo: Topology, busy: Iterable[str], count: int) -> list[str] | None:
    """The nodes a `count`-node job would likely get, or None when fewer are idle."""
    taken = set(busy)
    idle: dict[tuple[str, ...], list[str]] = {}
    for node, path in topo.paths.items():
        if node not in taken:
            idle.setdefault(path, []).append(node)
    if sum(map(len, idle.values())) < count or count < 1:
        return None
    fitting = [members for members in idle.values() if len(members) >= count]
    if fitting:  # one group: the one with the fewest idle nodes that still fits
        return min(fitting, key=len)[:count]
    islands: dict[tuple[str, ...], list[list[str]]] = {}
    for path, members in idle.items():
        islands.setdefault(path[:-1], []).append(members)
    fitting_islands = [gs for gs in islands.values() if sum(map(len, gs)) >= count]
    if fitting_islands:
        return _fill(min(fitting_islands, key=lambda gs: sum(map(len, gs))), count)
    return _fill(list(idle.values()), count)
