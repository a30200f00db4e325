"""Host noise profiles: the detours a node's CPU takes away from a running process, as a
fixed-work-quantum loop measures them (agent/fwq/fwq.c, run by `tailcast agent
noise-profile`), and the one form in which the replay engine takes them.

A quantum is one repetition of the same work; the fastest quantum is the work itself
(`quantum_ns`), and a quantum that took more than `threshold_ns` longer holds a detour of
its excess (FWQ's method, LLNL ASC Sequoia; the detour traces LogGOPSim injects per rank,
Hoefler, Schneider & Lumsdaine, SC 2010). A profile is the list of detour lengths and the
window they were seen in; detours per second follow.

The engine's form, a `[host.noise]` table of a fabric file (`host_noise_toml`; the engine
declares it in crates/replay-engine/src/fabric/host/noise.rs):

    [host.noise]
    kind = "empirical"           # detours drawn from the measured ones
    work_ns = 1999000000         # undisturbed work the detours interrupted: quanta x quantum
    detours_ns = [14862, 9212901, ...]   # each detour's length, in observation order

The engine's rate is detours per ns of work (a process meets detours while it runs), which
is what the loop counts: its quanta are the work, its window is that work plus the detours.
Several nodes' profiles pool into one table (work summed, detours concatenated in node
order): the host model is one per fabric.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tailcast.errors import InputError

if TYPE_CHECKING:
    from tailcast.store.results import ResultsDir

DEFAULT_THRESHOLD_NS = 1000  # 5 % of the default 20 µs quantum, 50 clock readings
TABLE = "noise_profiles"


@dataclass(frozen=True)
class NoiseProfile:
    node: str
    quanta: int
    quantum_ns: int
    threshold_ns: int
    clock_overhead_ns: int
    window_ns: int
    detours_ns: list[int]
    method: str = "fwq"
    profile_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def detours_per_s(self) -> float:
        return len(self.detours_ns) / (self.window_ns / 1e9) if self.window_ns else 0.0

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.detours_ns)

        def pct(q: float) -> int | None:
            return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else None

        return {
            "node": self.node,
            "profile_id": self.profile_id,
            "window_s": self.window_ns / 1e9,
            "quanta": self.quanta,
            "quantum_ns": self.quantum_ns,
            "clock_overhead_ns": self.clock_overhead_ns,
            "detours": len(ordered),
            "detours_per_s": self.detours_per_s,
            "detour_p50_ns": pct(0.5),
            "detour_p99_ns": pct(0.99),
            "detour_max_ns": ordered[-1] if ordered else None,
            "lost_fraction": sum(ordered) / self.window_ns if self.window_ns else 0.0,
        }


def parse_fwq_output(text: str, source: str) -> NoiseProfile:
    """A profile from fwq's output: its header line (the node, the quanta, the fastest one,
    the window, the threshold), then each detour's length in ns, one per line."""
    lines = text.split("\n")
    header = lines[0].split()
    if header[:2] != ["#", "fwq"]:
        raise InputError(Path(source), "not fwq output (no '# fwq' header line)", 1)
    meta = dict(item.split("=", 1) for item in header[2:] if "=" in item)
    keys = ("node", "quanta", "quantum_ns", "window_ns", "threshold_ns", "clock_overhead_ns")
    missing = [k for k in keys if not meta.get(k)]
    if missing:
        raise InputError(Path(source), f"the '# fwq' header lacks {missing}", 1)
    try:
        numbers = {k: int(meta[k]) for k in keys[1:]}
    except ValueError as exc:
        raise InputError(Path(source), f"the '# fwq' header: {exc}", 1) from None
    detours = []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            try:
                detours.append(int(line))
            except ValueError:
                message = f"expected a detour in ns, got {line!r}"
                raise InputError(Path(source), message, number) from None
    return NoiseProfile(
        node=meta["node"],
        quanta=numbers["quanta"],
        quantum_ns=numbers["quantum_ns"],
        threshold_ns=numbers["threshold_ns"],
        clock_overhead_ns=numbers["clock_overhead_ns"],
        window_ns=numbers["window_ns"],
        detours_ns=detours,
        method=f"fwq work_steps={meta.get('work_steps', '?')}",
    )


def host_noise_toml(profiles: Sequence[NoiseProfile]) -> str:
    """The `[host.noise]` table of `profiles` pooled (module doc)."""
    window = sum(p.window_ns for p in profiles)
    work = sum(p.quanta * p.quantum_ns for p in profiles)
    detours = [d for p in profiles for d in p.detours_ns]
    nodes = ", ".join(p.node for p in profiles)
    lines = [
        f"# measured by tailcast agent noise-profile on {nodes}: {len(detours)} detours "
        f"in {window / 1e9:.3f} s",
        "[host.noise]",
        'kind = "empirical"',
        f"work_ns = {work}",
        "detours_ns = [" + ", ".join(str(d) for d in detours) + "]",
    ]
    return "\n".join(lines) + "\n"


def profile_rows(
    profiles: Iterable[NoiseProfile],
    cluster: str | None,
    job_id: str | None,
    taken_at: datetime,
) -> list[dict[str, Any]]:
    return [
        {
            "profile_id": p.profile_id,
            "node": p.node,
            "cluster": cluster,
            "slurm_job_id": job_id,
            "taken_at": taken_at,
            "method": p.method,
            "quanta": p.quanta,
            "quantum_ns": p.quantum_ns,
            "threshold_ns": p.threshold_ns,
            "clock_overhead_ns": p.clock_overhead_ns,
            "window_ns": p.window_ns,
            "detours_ns": p.detours_ns,
        }
        for p in profiles
    ]


def stored_profiles(
    results: ResultsDir, problems: list[InputError] | None = None
) -> list[dict[str, Any]]:
    """Every stored profile row. A file that cannot be read is left out (and appended to
    `problems`): a damaged profile must not cost the agent the run it is recording."""
    from tailcast.store.parquet_io import read_table

    rows = []
    for path in results.files(TABLE):
        try:
            rows += read_table(path, TABLE).to_pylist()
        except InputError as err:
            if problems is not None:
                problems.append(err)
    return rows


def current_profiles(
    results: ResultsDir, nodes: Iterable[str], at: datetime | None = None
) -> dict[str, str]:
    """The newest profile of each node taken at or before `at` (default: now), by node;
    nodes without one are left out."""
    at = at or datetime.now(UTC)
    wanted = set(nodes)
    newest: dict[str, tuple[datetime, str]] = {}
    for row in stored_profiles(results):
        node, taken = row["node"], row["taken_at"]
        fits = node in wanted and taken is not None and taken <= at
        if fits and (node not in newest or taken > newest[node][0]):
            newest[node] = (taken, row["profile_id"])
    return {node: pid for node, (_, pid) in sorted(newest.items())}


def profiles_json(profiles: dict[str, str]) -> str | None:
    """The `runs.noise_profiles` value (null: no profile for any node)."""
    return json.dumps(profiles, sort_keys=True) if profiles else None
