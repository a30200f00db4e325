"""Measured against simulated, run by run, for a lab campaign: each measured run (runs +
lab_runs) is replayed as its OSU-pattern trace on a fabric (the calibrated `lab` tree by
default) on the same nodes, beside its background jobs as background traces on their
nodes (bgtrace.py), and the measured per-iteration latencies are compared with the
simulated ones: KS, Wasserstein, p50 and p99 relative errors (analysis/compare.py).

With a calibration's background detours (lab/host_load.py) each run's fitted host detours
are joined by a second source, as frequent as its background jobs' data rate makes it.
Replays go to the store (replays, replay_iterations, ...) so reports can show each pair; a
replayer without a store (a calibration's trial replays) keeps nothing.
Each run replays with the eager threshold its MPI library applied (replay/eager_limit.py);
a run stored before the agent recorded its protocol is taken to have used what the lab's
jobs use, Open MPI 4.1.4's TCP BTL at its defaults (`btl_tcp_eager_limit` = 65536 in its
`ompi_info`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import hostlist
import numpy as np

from tailcast.analysis.compare import compare_samples
from tailcast.collectors.mpi_protocol import MpiProtocol
from tailcast.errors import UsageError
from tailcast.lab.bgtrace import write_background_trace
from tailcast.lab.gaps import gap_draws
from tailcast.lab.host_load import (
    BackgroundDetours,
    background_mbps,
    check_noise_takes_detours,
    noise_beside,
)
from tailcast.replay.background import BackgroundTrace
from tailcast.replay.eager_limit import eager_threshold
from tailcast.replay.fabric import Fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import Catalog, ResultsDir
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

LAB_PROTOCOL = MpiProtocol(
    library="Open MPI 4.1.4", pml="ob1", transport="tcp", eager_limits={"tcp": 65536}
)
P50_TOLERANCE, P99_TOLERANCE = 0.15, 0.30  # issue 18's acceptance for 1 MiB collectives


def within_tolerances(p50_error: float, p99_error: float) -> bool:
    """Whether relative p50 and p99 errors are within the acceptance above."""
    return abs(p50_error) <= P50_TOLERANCE and abs(p99_error) <= P99_TOLERANCE


@dataclass(frozen=True)
class RunComparison:
    run_id: str
    campaign: str
    phase: str
    placement: str
    benchmark: str
    msg_size_bytes: int
    b: float
    shares_links: bool
    background_jobs: int
    replay_id: str
    n_measured: int
    n_simulated: int
    ks: float
    wasserstein_us: float
    p50_measured_us: float
    p50_simulated_us: float
    p50_error: float
    p99_measured_us: float
    p99_simulated_us: float
    p99_error: float

    @property
    def within(self) -> bool:
        return within_tolerances(self.p50_error, self.p99_error)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"within": self.within}


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class LabReplayer:
    """Replays lab runs on one fabric, caching traces and background call times."""

    def __init__(
        self,
        fabric: Fabric,
        results: ResultsDir | None,
        workdir: Path,
        seed: int = 0,
        background_detours: BackgroundDetours | None = None,
    ) -> None:
        if not fabric.node_names:
            raise UsageError(f"fabric {fabric.name} has no `nodes` key: runs cannot be placed")
        self.fabric, self.results, self.workdir, self.seed = fabric, results, workdir, seed
        self.background_detours = background_detours
        if background_detours is not None:
            check_noise_takes_detours(fabric)  # before any replay, not at the first beside one
        self.index = {n: i for i, n in enumerate(fabric.node_names)}
        self._alone: dict[tuple[tuple[str, ...], int], float] = {}
        workdir.mkdir(parents=True, exist_ok=True)

    def _options(
        self,
        nodes: list[str],
        background: tuple[BackgroundTrace, ...] = (),
        eager: int | None = eager_threshold(LAB_PROTOCOL),
    ) -> ReplayOptions:
        missing = [n for n in nodes if n not in self.index]
        if missing:
            raise UsageError(f"nodes {missing} are not in fabric {self.fabric.name}")
        return ReplayOptions(
            seed=self.seed,
            placement="nodes:" + hostlist.collect_hostlist(nodes),
            eager_threshold_bytes=eager,
            background_traces=background,
        )

    def alone_ns(self, nodes: list[str], size: int) -> float:
        """One background call on an otherwise idle fabric."""
        key = (tuple(nodes), size)
        if key not in self._alone:
            path = self.workdir / f"bg-one-{len(nodes)}-{size}.parquet"
            write_background_trace(path, len(nodes), size, [0.0])
            outcome = replay_trace(path, self.fabric, self._options(nodes))
            self._alone[key] = outcome.total_time_ns
        return self._alone[key]

    def run_fabric(self, run: dict[str, Any]) -> Fabric:
        """The fabric a run replays on: its host detours beside the run's background."""
        return noise_beside(self.fabric, self.background_detours, background_mbps(run))

    def foreground(
        self, benchmark: str, ranks: int, size: int, iterations: int, warmup: int, pause_ns: int
    ) -> Path:
        name = f"osu-{benchmark}-{ranks}-{size}-{iterations}-{warmup}-{pause_ns}.parquet"
        path = self.workdir / name
        if not path.exists():
            table, meta = osu_trace(benchmark, ranks, [size], iterations, warmup, pause_ns)
            write_trace(table, path, meta)
        return path

    def replay_run(self, run: dict[str, Any]) -> tuple[str, np.ndarray]:
        """(replay id, simulated per-iteration latencies in µs) of one measured run."""
        size = int(run["bg_msg_size_bytes"] or 0)
        horizon = 2e9 * max((run["ended_at"] - run["started_at"]).total_seconds(), 1.0)
        background = []
        rng = random.Random(f"{self.seed}:{run['run_id']}")
        gap = float(run["bg_gap_ms"] or 0.0) * 1e6
        kind = run.get("bg_gaps") or "fixed"  # runs recorded before `gaps` existed: fixed
        for i, nodes in enumerate(run["bg_nodes"] or []):
            alone = self.alone_ns(nodes, size)
            # The jobs ran for a while before the measured run and were started one after
            # another: each is somewhere in its call/gap cycle when the run starts. Starting
            # them all at t = 0 would lock them in phase (their bursts on a shared link would
            # coincide, leaving it idle in between), which no real campaign does.
            offset = rng.uniform(0.0, alone + gap)
            # The lab job's own pauses are not recorded, only how they were drawn: this job
            # draws its own, from a seed of its own. Enough calls to outlast the measured run
            # twice over at the job's fastest pace.
            draws = gap_draws(kind, gap, f"{self.seed}:{run['run_id']}:{i}")
            gaps, span = [], offset
            while span < horizon:
                gaps.append(next(draws))
                span += max(alone + gaps[-1], 1e6)
            gaps += [next(draws) for _ in range(10)]  # a margin past the horizon
            path = self.workdir / f"bg-{run['run_id']}-{i}.parquet"
            write_background_trace(path, len(nodes), size, gaps, offset)
            endpoints = ",".join(str(self.index[n]) for n in nodes)
            background.append(BackgroundTrace(path, endpoints))
        trace = self.foreground(
            run["benchmark"], int(run["ranks"]), int(run["msg_size_bytes"]),
            int(run["iterations"]), int(run["warmup"] or 0), loop_pause_ns(run),
        )  # fmt: skip
        recorded = run.get("protocol_json")  # null: stored before the record, the lab's
        protocol = MpiProtocol.from_json(recorded) if recorded else LAB_PROTOCOL
        options = self._options(list(run["nodes"]), tuple(background), eager_threshold(protocol))
        outcome = replay_trace(trace, self.run_fabric(run), options, self.results)
        return outcome.replay_id, outcome.iteration_latency_us


# A sleep ends up to the task's timer slack after its deadline (Linux's `timer_slack_ns`, 50 µs
# by default; time.sleep(0.001) took 1077 µs at the median on the lab's host)
TIMER_SLACK_NS = 50_000


def loop_pause_ns(run: dict[str, Any]) -> int:
    """What the measuring loop did per iteration besides its barrier and timed call: the
    builtin agent sleeps its `--interval-ms` after every call (agent/builtin.py; the argv is
    recorded with the run), plus a sleep's timer slack; 0 without the flag (its default) or a
    recorded argv.

    Not the run's wall time less its timed latencies: that includes mpirun's launch (Python,
    mpi4py, MPI_Init, connections), ~1 s, which spread over 210 iterations made ~4.7 ms of
    pause where the loop slept 1 ms, and the shapers' buckets then refilled between
    iterations. On the lab, one cross-island path passing 32 KiB messages 1 ms apart takes
    1544 µs per message at the median (5 ms apart: 92 µs), as the measured 32 KiB reduce
    chain does across islands (1521 µs), which the longer pause replayed in 256 µs."""
    argv = json.loads(json.loads(run.get("versions_json") or "{}").get("argv") or "[]")
    if "--interval-ms" not in argv[:-1]:
        return 0
    interval_ms = float(argv[argv.index("--interval-ms") + 1])
    return round(interval_ms * 1e6) + (TIMER_SLACK_NS if interval_ms > 0 else 0)


def lab_runs(
    cat: Catalog,
    campaign: str | None,
    sizes: list[int] | None,
    phases: list[str] | None = None,
) -> list[dict[str, Any]]:
    where = []
    if campaign:
        where.append(f"l.campaign = {_quote(campaign)}")
    if sizes:
        where.append(f"r.msg_size_bytes IN ({', '.join(str(int(s)) for s in sizes)})")
    if phases:
        where.append(f"l.phase IN ({', '.join(_quote(p) for p in phases)})")
    rows: list[dict[str, Any]] = cat.sql(
        "SELECT l.*, r.benchmark, r.msg_size_bytes, r.ranks, r.iterations, r.warmup, r.nodes, "
        "r.b_before, r.started_at, r.ended_at, r.protocol_json, r.noise_profiles, "
        "r.versions_json FROM lab_runs l JOIN runs r USING (run_id) "
        + ("WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY l.campaign, l.placement, r.benchmark, r.msg_size_bytes, "
        "len(l.bg_job_ids), l.phase"
    ).to_pylist()
    return rows


def measured_latencies(cat: Catalog, runs: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Each run's measured per-iteration latencies (µs), by run id."""
    ids = ", ".join(_quote(r["run_id"]) for r in runs)
    return {
        row["run_id"]: np.asarray(row["lat"], dtype=float)
        for row in cat.sql(
            f"SELECT run_id, list(latency_us) AS lat FROM samples WHERE run_id IN ({ids}) "
            "GROUP BY run_id"
        ).to_pylist()
    }


def compare_runs(
    replayer: LabReplayer,
    campaign: str | None = None,
    sizes: list[int] | None = None,
    progress: Callable[[str], None] = lambda _: None,
    phases: list[str] | None = None,
    results: ResultsDir | None = None,
) -> list[RunComparison]:
    """Replays and compares every lab run that matches; the runs are read from `results`
    (default: the replayer's store)."""
    store = results or replayer.results
    if store is None:
        raise UsageError("compare_runs needs a store to read the measured runs from")
    with Catalog(store) as cat:
        runs = lab_runs(cat, campaign, sizes, phases)
        if not runs:
            raise UsageError("no lab campaign runs match (tailcast lab campaign ...)")
        measured = measured_latencies(cat, runs)
    out = []
    for run in runs:
        replay_id, simulated = replayer.replay_run(run)
        cmp = compare_samples(measured[run["run_id"]], simulated)
        p50, p99 = cmp.percentiles["p50"], cmp.percentiles["p99"]
        row = RunComparison(
            run_id=run["run_id"],
            campaign=run["campaign"],
            phase=run["phase"],
            placement=run["placement"],
            benchmark=run["benchmark"],
            msg_size_bytes=int(run["msg_size_bytes"]),
            b=float(run["b_before"]),
            shares_links=bool(run["shares_links"]),
            background_jobs=len(run["bg_nodes"] or []),
            replay_id=replay_id,
            n_measured=cmp.n_measured,
            n_simulated=cmp.n_simulated,
            ks=cmp.ks_statistic,
            wasserstein_us=cmp.wasserstein,
            p50_measured_us=float(p50["measured"] or 0.0),
            p50_simulated_us=float(p50["simulated"] or 0.0),
            p50_error=float(p50["rel_error"] or 0.0),
            p99_measured_us=float(p99["measured"] or 0.0),
            p99_simulated_us=float(p99["simulated"] or 0.0),
            p99_error=float(p99["rel_error"] or 0.0),
        )
        progress(
            f"{row.phase:10s} {row.placement:18s} {row.benchmark:8s} {row.msg_size_bytes:8d} "
            f"p50 {row.p50_error:+.1%} p99 {row.p99_error:+.1%} KS {row.ks:.2f}"
        )
        out.append(row)
    return out
