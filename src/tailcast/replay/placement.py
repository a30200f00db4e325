"""Where a trace's ranks sit on a fabric, as the user says it → the engine's placement.

- `linear`, `random` (seeded by the replay seed);
- a file with one endpoint number per rank (`#` comments);
- a locality class, `same_group`, `same_island` or `different_islands` (seed 001), on
  fabrics that define groups and islands: `nodes` endpoints of that class (default one per
  rank), ranks in blocks over them;
- `nodes:HOSTLIST` (e.g. a measured run's node list, `nodes:node[01-04]`): the endpoints
  the fabric's `nodes` key names so.
"""

from __future__ import annotations

from pathlib import Path

from tailcast.errors import InputError, UsageError
from tailcast.replay.fabric import Fabric

LOCALITY_CLASSES = ("same_group", "same_island", "different_islands")


def placement_spec(
    text: str, ranks: int, seed: int, fabric: Fabric | None = None, nodes: int | None = None
) -> str:
    """CLI placement → engine placement string (`linear`, `random:SEED`, `explicit:…`,
    `locality:CLASS:NODES:SEED`)."""
    if text == "linear":
        return "linear"
    if text == "random":
        return f"random:{seed}"
    if text in LOCALITY_CLASSES:  # (a fabric without groups: the engine says so)
        return f"locality:{text}:{nodes or ranks}:{seed}"
    if text.startswith("nodes:"):
        return "explicit:" + ",".join(map(str, _by_node_names(text[6:], ranks, fabric)))
    return "explicit:" + ",".join(map(str, _from_file(text, ranks)))


def _from_file(text: str, ranks: int) -> list[int]:
    path = Path(text)
    if not path.is_file():
        raise UsageError(
            "--placement: expected linear, random, same_group, same_island, "
            f"different_islands, nodes:HOSTLIST or a file, got {text!r}"
        )
    endpoints: list[int] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        if not stripped:
            continue
        if not (stripped.isascii() and stripped.isdigit()):  # not "²"
            raise InputError(path, f"expected an endpoint number, got {stripped!r}", line=number)
        endpoints.append(int(stripped))
    if len(endpoints) != ranks:
        raise InputError(path, f"lists {len(endpoints)} endpoints, the trace has {ranks} ranks")
    return endpoints


def _by_node_names(hostlist_text: str, ranks: int, fabric: Fabric | None) -> list[int]:
    import hostlist

    if fabric is None or not fabric.node_names:
        what = fabric.name if fabric is not None else "the fabric"
        raise UsageError(f"--placement nodes:…: {what} has no `nodes` key naming its endpoints")
    names = fabric.node_names
    try:
        wanted = list(hostlist.expand_hostlist(hostlist_text))
    except hostlist.BadHostlist as exc:
        raise UsageError(f"--placement nodes:{hostlist_text}: {exc}") from exc
    index = {name: i for i, name in enumerate(names)}
    missing = [n for n in wanted if n not in index]
    if missing:
        raise UsageError(f"--placement: nodes not in fabric {fabric.name}: {', '.join(missing)}")
    if not wanted:
        raise UsageError("--placement nodes: the node list is empty")
    per = -(-ranks // len(wanted))  # ranks in blocks, as mpirun --map-by slot
    return [index[wanted[r // per]] for r in range(ranks)]
