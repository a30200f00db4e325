"""N_t, the physical nodes of the cluster (seed 001 eq. 1), from `sinfo`.

`sinfo -N` prints one line per node *per partition*, so names are de-duplicated; `--all`
includes hidden partitions. Down and drained nodes count: N_t is the machine's size."""

from __future__ import annotations

from pathlib import Path

from tailcast.collectors.jobs import expand_nodes
from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import InputError

SINFO_ARGV = ("sinfo", "--all", "--noheader", "-N", "-o", "%N")


def parse_sinfo_nodes(text: str, path: str | Path = "<sinfo -N -o %N>") -> tuple[str, ...]:
    """Unique node names in first-seen order; each line is one node name (or a hostlist)."""
    seen: dict[str, None] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        name = line.strip()
        if not name:
            continue
        if " " in name or "|" in name:
            raise InputError(path, f"expected one node name per line, got {name!r}", lineno)
        try:
            for node in expand_nodes(name):
                seen.setdefault(node, None)
        except ValueError as exc:
            raise InputError(path, str(exc), lineno) from exc
    return tuple(seen)


def cluster_nodes(policy: RetryPolicy = RetryPolicy()) -> tuple[str, ...]:
    """All node names the controller knows."""
    return parse_sinfo_nodes(run_tool(list(SINFO_ARGV), policy).stdout)


def total_nodes(policy: RetryPolicy = RetryPolicy()) -> int:
    """N_t from the live cluster."""
    return len(cluster_nodes(policy))
