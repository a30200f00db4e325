"""The simulation term of a forecast (`predict tail --simulate FABRIC`): the job's benchmark
replayed on a fabric model beside the queue's running jobs, each where Slurm put it.

- **Foreground.** The OSU-pattern trace of the benchmark (`traces.synth.osu`, one timed call
  per iteration between barriers, as OSU's loop), or a given application trace, on the
  candidate's nodes: the forecast's node list (given or where Slurm would likely put the job),
  else the first idle nodes in the fabric's order.
- **Background.** Every running job of ≥ 2 nodes (the jobs b counts, seed 001 eq. 1) becomes
  a synthetic generator on its own nodes, so b, the jobs' sizes and where they sit relative
  to the candidate all come from the queue itself. squeue says who runs, not how much each
  node sends: the offered load per node and the message size are assumptions (`load`,
  `bytes`), stated in the output.
- The fabric must name its endpoints after the cluster's nodes (its `nodes` key); a queue
  job on nodes the fabric does not know is an error naming them.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.errors import UsageError
from tailcast.forecast.live import QueueState
from tailcast.replay.background import BackgroundJob
from tailcast.replay.fabric import Fabric

# Offered load per background node (a fraction of its injection bandwidth) and message size:
# assumptions (see the module doc). At 0.3 a fully busy group of the bundled tree fabric
# offers 120 of its uplink's 200 Gb/s, so contention grows with b without saturating.
DEFAULT_LOAD = 0.3
DEFAULT_BYTES = 1 << 20
DEFAULT_ITERATIONS = 200
WARMUP = 10  # OSU 7.4's warm-up for large collectives (osu_util.h: COLL_SKIP_LARGE)


@dataclass(frozen=True)
class SimulatedTail:
    fabric: str
    nodes: str  # the candidate's node list (hostlist form)
    ranks: int
    iterations: int
    background_jobs: int
    background_nodes: int
    load: float
    bytes: int
    eager_threshold_bytes: int | None  # the measured runs' MPI's (None: the fabric's)
    mean_us: float
    p50_us: float
    p99_us: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        return (
            f"simulated on {self.fabric} ({self.nodes}, {self.ranks} ranks, "
            f"{self.iterations} iterations): p99 {self.p99_us:.1f} µs, p50 {self.p50_us:.1f} µs, "
            f"mean {self.mean_us:.1f} µs; background {self.background_jobs} jobs on "
            f"{self.background_nodes} nodes at load {self.load:g}"
            + (
                f"; eager up to {self.eager_threshold_bytes} B (the runs' MPI)"
                if self.eager_threshold_bytes is not None
                else ""
            )
        )


def candidate_nodes(
    fabric: Fabric, queue: QueueState, wanted: tuple[str, ...], count: int
) -> list[str]:
    """The candidate's nodes: `wanted` when given, else the first `count` idle nodes."""
    names = fabric.node_names
    if not names:
        raise UsageError(
            f"--simulate: fabric {fabric.name} has no `nodes` key naming its endpoints"
        )
    if wanted:
        unknown = [n for n in wanted if n not in names]
        if unknown:
            raise UsageError(f"--simulate: nodes not in fabric {fabric.name}: {', '.join(unknown)}")
        return list(wanted)
    busy = {n for j in queue.jobs if j.running for n in j.nodes}
    idle = [n for n in names if n not in busy]
    if len(idle) < count:
        raise UsageError(
            f"--simulate: {count} nodes wanted, {len(idle)} of fabric {fabric.name} are idle now"
        )
    return idle[:count]


def queue_background(
    fabric: Fabric, queue: QueueState, candidate: list[str], load: float, size: int
) -> list[BackgroundJob]:
    """One generator per running multi-node job, on its nodes (minus the candidate's)."""
    index = {name: i for i, name in enumerate(fabric.node_names or ())}
    taken = set(candidate)
    jobs = []
    for job in queue.jobs:
        if not job.running or len(job.nodes) < 2:
            continue
        unknown = [n for n in job.nodes if n not in index]
        if unknown:
            raise UsageError(
                f"--simulate: job {job.job_id} runs on nodes fabric {fabric.name} does not "
                f"name: {', '.join(unknown[:4])}"
            )
        own = [index[n] for n in job.nodes if n not in taken]
        taken.update(job.nodes)
        if len(own) < 2:
            continue
        jobs.append(
            BackgroundJob(
                pattern="uniform",
                nodes=len(own),
                load=load,
                bytes=size,
                placement=",".join(map(str, own)),
            )
        )
    return jobs


def simulate_tail(
    fabric: Fabric,
    queue: QueueState,
    benchmark: str,
    size_bytes: int,
    nodes: int,
    ranks: int,
    *,
    wanted: tuple[str, ...] = (),
    trace: Path | None = None,
    iterations: int = DEFAULT_ITERATIONS,
    load: float = DEFAULT_LOAD,
    background_bytes: int = DEFAULT_BYTES,
    seed: int = 0,
    eager_threshold_bytes: int | None = None,
) -> SimulatedTail:
    import hostlist

    from tailcast.replay.run import replay_trace
    from tailcast.replay.scenario import ReplayOptions
    from tailcast.traces.io import write_trace
    from tailcast.traces.synth.osu import osu_trace

    if not 0.0 <= load <= 1.0:
        raise UsageError(f"--simulate-load {load}: must be in [0, 1]")
    chosen = candidate_nodes(fabric, queue, wanted, nodes)
    background = queue_background(fabric, queue, chosen, load, background_bytes)
    options = ReplayOptions(
        seed=seed,
        placement="nodes:" + hostlist.collect_hostlist(chosen),
        background=tuple(background),
        eager_threshold_bytes=eager_threshold_bytes,  # None: the fabric's [host] value
    )
    with tempfile.TemporaryDirectory(prefix="tailcast-simulate-") as tmp:
        path = trace
        if path is None:
            table, meta = osu_trace(benchmark, ranks, [size_bytes], iterations, warmup=WARMUP)
            path = write_trace(table, Path(tmp) / f"osu_{benchmark}.parquet", meta)
        outcome = replay_trace(path, fabric, options)
    lat = np.asarray(outcome.iteration_latency_us, dtype=np.float64)
    if lat.size == 0:
        raise UsageError(f"--simulate: the trace {path} has no timed iterations")
    return SimulatedTail(
        fabric=fabric.name,
        nodes=hostlist.collect_hostlist(chosen),
        ranks=outcome.ranks,
        iterations=int(lat.size),
        background_jobs=len(background),
        background_nodes=sum(j.nodes for j in background),
        load=load,
        bytes=background_bytes,
        eager_threshold_bytes=eager_threshold_bytes,
        mean_us=float(lat.mean()),
        p50_us=float(np.percentile(lat, 50)),
        p99_us=float(np.percentile(lat, 99)),
    )
