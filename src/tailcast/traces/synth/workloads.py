"""The nine application-inspired workloads of seed 000 §IV-A (INRFlow's workloads), as MPI
traces with their causality: a task sends only after it received what it depends on.

Regular workloads (AA, AR, BI, NB, SH) run in rounds: each round a rank posts its receives
and sends and waits for all of them before the next round, so every rank progresses at the
same pace. Irregular workloads (HR, RA, TL, TR) are a global sequence of flows: a rank's
send is issued only after it has received every earlier flow addressed to it, so each rank
progresses at the pace its incoming traffic dictates (non-blocking sends, blocking
receives in global flow order — deadlock-free by induction on the flow index).
Defaults follow the seed: 5,000 flows of 1 MB (10^6 B); flow counts fixed by the pattern
(AA: N(N-1), AR: N log2 N, NB: N^2/2) override `flows`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tailcast.errors import UsageError
from tailcast.traces.synth.program import Program

DEFAULT_FLOWS = 5000
DEFAULT_FLOW_BYTES = 1_000_000
DEFAULT_RACK = 12  # 16-port ToR with 3:1 oversubscription: 12 server ports (seed 000 §IV-A)


@dataclass(frozen=True)
class WorkloadParams:
    tasks: int
    flows: int = DEFAULT_FLOWS
    flow_bytes: int = DEFAULT_FLOW_BYTES
    seed: int = 0
    stride: int = 1  # Shift's t
    rack_size: int = DEFAULT_RACK  # TorLocal / TorRemote


def _rounds(p: Program, size: int, rounds: list[list[tuple[int, int]]]) -> None:
    """Each round is a list of (src, dst) flows; every rank waits for its round to end."""
    for flows in rounds:
        reqs: dict[int, list[int]] = {r: [] for r in range(p.ranks)}
        for src, dst in flows:
            reqs[dst].append(p.irecv(dst, src, size))
        for src, dst in flows:
            reqs[src].append(p.isend(src, dst, size))
        for r in range(p.ranks):
            p.waitall(r, reqs[r])


def _causal(p: Program, size: int, flows: list[tuple[int, int]]) -> None:
    """Flows in global order; receives block, sends are issued after earlier receives."""
    pending: dict[int, list[int]] = {r: [] for r in range(p.ranks)}
    for src, dst in flows:
        pending[src].append(p.isend(src, dst, size))
        p.recv(dst, src, size)
    for r in range(p.ranks):
        p.waitall(r, pending[r])


def all2all(w: WorkloadParams, rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    n = w.tasks
    return [[(i, (i + k) % n) for i in range(n)] for k in range(1, n)]


def allreduce(w: WorkloadParams, rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    n = w.tasks
    if n & (n - 1):
        raise UsageError(f"AllReduce (recursive doubling) needs a power-of-two task count, not {n}")
    return [[(i, i ^ (1 << k)) for i in range(n)] for k in range(int(math.log2(n)))]


def bisection(w: WorkloadParams, rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    n = w.tasks
    if n % 2:
        raise UsageError("Bisection pairs tasks: needs an even task count")
    rounds = []
    for _ in range(max(1, math.ceil(w.flows / n))):
        perm = rng.permutation(n)
        pairs = perm.reshape(-1, 2)
        rounds.append([(int(a), int(b)) for a, b in pairs] + [(int(b), int(a)) for a, b in pairs])
    return rounds


def nbodies(w: WorkloadParams, rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    # Each task starts a chain travelling clockwise across half the ring: N/2 hops each.
    n = w.tasks
    return [[(i, (i + 1) % n) for i in range(n)] for _ in range(max(1, n // 2))]


def shift(w: WorkloadParams, rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    n, t = w.tasks, w.stride % w.tasks
    if t == 0:
        raise UsageError("Shift stride must not be a multiple of the task count")
    return [[(i, (i + t) % n) for i in range(n)] for _ in range(max(1, math.ceil(w.flows / n)))]


def _other(rng: np.random.Generator, n: int, src: int, choices: np.ndarray | None = None) -> int:
    pool = np.arange(n) if choices is None else choices
    pool = pool[pool != src]
    if pool.size == 0:
        pool = np.array([d for d in range(n) if d != src])
    return int(rng.choice(pool))


def random_app(w: WorkloadParams, rng: np.random.Generator) -> list[tuple[int, int]]:
    n = w.tasks
    out = []
    for _ in range(w.flows):
        src = int(rng.integers(n))
        out.append((src, _other(rng, n, src)))
    return out


def hot_region(w: WorkloadParams, rng: np.random.Generator) -> list[tuple[int, int]]:
    # 25% of the traffic goes to the hot region: 12.5% of the ports; the rest uniform.
    n = w.tasks
    hot = np.arange(max(1, math.ceil(n / 8)))
    out = []
    for _ in range(w.flows):
        src = int(rng.integers(n))
        out.append((src, _other(rng, n, src, hot if rng.random() < 0.25 else None)))
    return out


def _tor(w: WorkloadParams, rng: np.random.Generator, remote: float) -> list[tuple[int, int]]:
    n, rack = w.tasks, max(1, w.rack_size)
    out = []
    for _ in range(w.flows):
        src = int(rng.integers(n))
        same = np.arange(n)[np.arange(n) // rack == src // rack]
        other = np.arange(n)[np.arange(n) // rack != src // rack]
        use_remote = other.size > 0 and (rng.random() < remote or same.size < 2)
        out.append((src, _other(rng, n, src, other if use_remote else same)))
    return out


def tor_local(w: WorkloadParams, rng: np.random.Generator) -> list[tuple[int, int]]:
    return _tor(w, rng, 0.20)  # CLD5: 20% extra-rack


def tor_remote(w: WorkloadParams, rng: np.random.Generator) -> list[tuple[int, int]]:
    return _tor(w, rng, 0.90)  # EDU1: 90% extra-rack


REGULAR: dict[str, Callable[[WorkloadParams, np.random.Generator], list[list[tuple[int, int]]]]]
REGULAR = {"all2all": all2all, "allreduce": allreduce, "bisection": bisection,
           "nbodies": nbodies, "shift": shift}  # fmt: skip
IRREGULAR: dict[str, Callable[[WorkloadParams, np.random.Generator], list[tuple[int, int]]]]
IRREGULAR = {"hotregion": hot_region, "randomapp": random_app, "torlocal": tor_local,
             "torremote": tor_remote}  # fmt: skip
ALIASES = {"aa": "all2all", "ar": "allreduce", "bi": "bisection", "hr": "hotregion",
           "nb": "nbodies", "ra": "randomapp", "sh": "shift", "tl": "torlocal",
           "tr": "torremote"}  # fmt: skip
WORKLOADS: tuple[str, ...] = tuple(sorted(REGULAR | IRREGULAR))


def workload_rows(kind: str, params: WorkloadParams) -> int:
    """At most the rows `workload_trace` writes (traces.synth.budget), from the flow and
    round counts of module doc, without drawing any flow: a receive and a send per flow,
    a waitall per rank and round (regular) or per rank (irregular), init and finalize."""
    name = ALIASES.get(kind.lower(), kind.lower())
    n = max(params.tasks, 0)
    if name == "all2all":
        rounds = max(n - 1, 0)
        flows = n * rounds
    elif name == "allreduce":
        rounds = max(n.bit_length() - 1, 0)
        flows = n * rounds
    elif name == "nbodies":
        rounds = max(1, n // 2)
        flows = n * rounds
    elif name in ("bisection", "shift"):
        rounds = max(1, math.ceil(params.flows / n)) if n else 0
        flows = n * rounds
    else:  # irregular: one waitall per rank
        rounds, flows = 1, max(params.flows, 0)
    return 2 * n + 2 * flows + n * rounds


def workload_trace(kind: str, params: WorkloadParams) -> pa.Table:
    """The trace of one seed-000 workload (`kind`: name or its two-letter abbreviation)."""
    name = ALIASES.get(kind.lower(), kind.lower())
    if params.tasks < 2:
        raise UsageError("a workload needs at least 2 tasks")
    if params.flows < 1 or params.flow_bytes < 0:
        raise UsageError("flows must be >= 1 and flow size >= 0")
    rng = np.random.default_rng(params.seed)
    program = Program(params.tasks)
    if name in REGULAR:
        _rounds(program, params.flow_bytes, REGULAR[name](params, rng))
    elif name in IRREGULAR:
        _causal(program, params.flow_bytes, IRREGULAR[name](params, rng))
    else:
        raise UsageError(f"unknown workload {kind!r}; known: {', '.join(WORKLOADS)}")
    return program.table()
