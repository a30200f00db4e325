"""The in-job measurement loop (seed 001 §5.1 method): for each (benchmark, size) take a queue
snapshot, run the benchmark, take another snapshot, and store the run with b_before,
b_after and whether b was stable (|Δb| < threshold).

Each run writes its own files: `samples`/`osu_results` first, the `runs` row last, each
atomically; the catalog shows the data only once its `runs` row exists (store/results.py).
SIGTERM and SIGUSR2 (Slurm's `--signal=B:USR2@60` warning) let the current run finish and be
written, then the loop ends.

When slurmctld does not answer, each snapshot's queue reads are retried with backoff for
`queue_budget_s` (collectors.queue_budget); if the queue stays unreadable the run is still
stored, with that side's b unknown (null) and b_accepted null, and the agent exits 3.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from tailcast import __version__
from tailcast.agent.osu_runner import run_osu_benchmark
from tailcast.agent.protocol import ProtocolRecorder
from tailcast.agent.resume import stored_points
from tailcast.agent.runners import RunOutcome, run_builtin
from tailcast.collectors.benchmarks import BENCHMARKS, PATTERNS
from tailcast.collectors.launcher import Launcher, allocation_nodes_list, detect_launcher
from tailcast.collectors.mpi_protocol import run_columns
from tailcast.collectors.noise_profile import current_profiles, profiles_json
from tailcast.collectors.osu_suite import SUITE
from tailcast.collectors.proc import RetryPolicy
from tailcast.collectors.queue_budget import (
    QUEUE_BUDGET_S,
    QueueBudget,
    QueueUnavailable,
    snapshot_within,
)
from tailcast.collectors.sinfo import total_nodes
from tailcast.collectors.snapshot import Snapshot, write_snapshots
from tailcast.collectors.topology import (
    Topology,
    UnknownNodeError,
    load_topology_toml,
    read_scontrol_topology,
    topology_from_addrs,
)
from tailcast.collectors.utilisation import DEFAULT_THRESHOLD, b_accepted, own_job_id_from_env
from tailcast.errors import ExternalToolError, InputError, NotAcceptedError, UsageError
from tailcast.store import ResultsDir


def parse_benchmarks(text: str, impl: str = "builtin") -> list[str]:
    """Benchmark names of `impl`: the built-in ones, or any of the OSU suite's
    (`osu_ibcast` or `ibcast`)."""
    names = [b.strip().lower().removeprefix("osu_") for b in text.split(",") if b.strip()]
    known = tuple(SUITE) if impl == "osu" else BENCHMARKS
    bad = [b for b in names if b not in known]
    if bad or not names:
        raise UsageError(f"unknown benchmarks {bad}; choose from {', '.join(known)}")
    return names


def _pattern(impl: str, benchmark: str) -> str:
    return SUITE[benchmark].pattern if impl == "osu" else PATTERNS[benchmark]


def _sizes(impl: str, benchmark: str, sizes: list[int]) -> list[int]:
    """Barriers and start-up tests have no message size: one run, size 0."""
    sized = SUITE[benchmark].sized if impl == "osu" else benchmark != "barrier"
    return sizes if sized else [0]


@dataclass
class AgentConfig:
    benchmarks: list[str]
    sizes: list[int]
    iterations: int = 1000
    warmup: int = 100
    interval_ms: float = 1.0  # seed 001: iterations 1 ms apart
    impl: str = "builtin"  # builtin | osu
    launcher: str = "auto"
    launcher_args: list[str] = field(default_factory=list)
    ranks: int | None = None  # default: one per allocated node
    threshold: float = DEFAULT_THRESHOLD
    exclude_own: bool = True
    own_job_id: str | None = None
    total_nodes: int | None = None
    backend: str = "auto"
    topology_file: Path | None = None
    osu_dir: Path | None = None
    timeout_s: float = 3600.0
    per_rank: bool = True
    cluster: str | None = None
    queue_budget_s: float = QUEUE_BUDGET_S
    resume_key: str | None = None  # recorded with every run (the campaign job's name)
    resume: bool = False  # skip the points already stored under resume_key


class StopFlag:
    """Set by SIGTERM/SIGUSR2; the loop checks it between runs."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.signal = signum
        sys.stderr.write(f"tailcast agent: got signal {signum}, finishing the current run\n")

    def install(self) -> Callable[[], None]:
        previous = {s: signal.signal(s, self) for s in (signal.SIGTERM, signal.SIGUSR2)}

        def restore() -> None:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

        return restore


def _topology(cfg: AgentConfig) -> Topology | None:
    if cfg.topology_file is not None:
        return load_topology_toml(cfg.topology_file)
    try:
        return read_scontrol_topology(RetryPolicy(attempts=2, timeout_s=30))
    except (ExternalToolError, InputError):
        return None  # no tree topology configured: locality from SLURM_TOPOLOGY_ADDR or unknown


def _locality(topo: Topology | None, nodes: list[str], outcome: RunOutcome) -> tuple[str, int]:
    candidates = [topo] if topo is not None else []
    if outcome.topology_addrs:
        candidates.append(topology_from_addrs(outcome.topology_addrs))
    for candidate in candidates:
        try:
            loc = candidate.classify(nodes)
            return loc.locality, loc.levels_spanned
        except UnknownNodeError:
            continue
    return "unknown", 0


class Agent:
    """Runs every (benchmark, size) of a config; `run()` returns one summary per run."""

    def __init__(
        self,
        cfg: AgentConfig,
        results: ResultsDir | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        if cfg.impl not in ("builtin", "osu"):
            raise UsageError(f"--impl must be builtin or osu, not {cfg.impl!r}")
        if cfg.iterations < 1 or cfg.warmup < 0:
            raise UsageError("iterations must be ≥ 1 and warmup ≥ 0")
        self.cfg = cfg
        self.results = results or ResultsDir()
        self.progress = progress or (lambda line: sys.stderr.write(line + "\n"))
        self.stop = StopFlag()
        self.protocol = ProtocolRecorder(cfg.launcher_args, self._say)
        self.own_job_id = cfg.own_job_id or own_job_id_from_env()
        self.alloc_nodes = allocation_nodes_list()
        self.ranks = cfg.ranks or len(self.alloc_nodes)
        if self.ranks < 2:
            raise UsageError("need ≥ 2 ranks: run inside a multi-node allocation or give --ranks")
        if cfg.resume and not cfg.resume_key:
            raise UsageError("--resume needs --resume-key (the key earlier runs were stored under)")
        if cfg.queue_budget_s <= 0:
            raise UsageError(f"the queue budget must be > 0 s, not {cfg.queue_budget_s:g}")

    def _say(self, line: str) -> None:
        self.progress(f"tailcast agent: {line}")

    def _snapshot(self, n_t: int, unreadable: list[str]) -> Snapshot | None:
        """The queue now, or None (b unknown) when it stayed unreadable for the budget; the
        reason is appended to `unreadable`."""
        try:
            snap = snapshot_within(
                QueueBudget(self.cfg.queue_budget_s),
                self.cfg.backend,
                n_t,
                self.own_job_id,
                self.cfg.exclude_own,
                on_retry=self._say,
            )
        except QueueUnavailable as exc:
            self._say(f"{exc}; b unknown for this run")
            unreadable.append(str(exc))
            return None
        write_snapshots([snap], self.results)
        return snap

    def _run_one(self, launcher: Launcher, benchmark: str, size: int) -> RunOutcome:
        c = self.cfg
        if c.impl == "osu":
            return run_osu_benchmark(
                launcher,
                self.ranks,
                benchmark,
                size,
                c.iterations,
                c.warmup,
                c.timeout_s,
                self.results.root,
                c.osu_dir,
                c.per_rank,
            )
        return run_builtin(
            launcher,
            self.ranks,
            benchmark,
            size,
            c.iterations,
            c.warmup,
            c.interval_ms,
            c.timeout_s,
            c.per_rank,
        )

    def run(self) -> list[dict[str, Any]]:
        c = self.cfg
        launcher = detect_launcher(c.launcher, c.launcher_args)
        launcher_version = launcher.version()
        n_t = c.total_nodes or total_nodes()
        topo = _topology(c)
        nodes = self.alloc_nodes[: self.ranks] if self.alloc_nodes else []
        done = (
            stored_points(self.results, c.resume_key, c.impl)
            if c.resume_key and c.resume
            else set()
        )
        restore = self.stop.install()
        summaries: list[dict[str, Any]] = []
        try:
            for benchmark in c.benchmarks:
                for size in _sizes(c.impl, benchmark, c.sizes):
                    if self.stop.signal is not None:
                        break
                    if (benchmark, size) in done:
                        self.progress(f"{benchmark} {size} B: stored by an earlier run, skipped")
                        continue
                    summaries.append(
                        self._measure(launcher, launcher_version, n_t, topo, nodes, benchmark, size)
                    )
        finally:
            restore()
        return summaries

    def _measure(
        self,
        launcher: Launcher,
        launcher_version: str,
        n_t: int,
        topo: Topology | None,
        nodes: list[str],
        benchmark: str,
        size: int,
    ) -> dict[str, Any]:
        c = self.cfg
        run_id = uuid.uuid4().hex
        unreadable: list[str] = []
        before = self._snapshot(n_t, unreadable)
        started = datetime.now(UTC)
        outcome = self._run_one(launcher, benchmark, size)
        ended = datetime.now(UTC)
        after = self._snapshot(n_t, unreadable)
        b_before = before.utilisation.b if before else None
        b_after = after.utilisation.b if after else None
        ranks = outcome.ranks or self.ranks
        used_nodes = nodes[:ranks] or sorted(set(outcome.hosts))
        locality, levels = _locality(topo, used_nodes, outcome)
        protocol = self.protocol(len(set(used_nodes)) or 1, ranks, outcome.mpi_library)
        # Unknown, not rejected, when a side's b could not be read.
        accepted = (
            None
            if b_before is None or b_after is None
            else b_accepted(b_before, b_after, c.threshold)
        )
        known = before or after
        versions = {
            "tailcast": __version__,
            "python": sys.version.split()[0],
            "launcher": launcher_version,
            "slurm": (known.queue.slurm_version if known else None) or "",
            "argv": json.dumps(outcome.argv),
            "levels_spanned": str(levels),
            "snapshot_before": before.snapshot_id if before else "",
            "snapshot_after": after.snapshot_id if after else "",
            "own_job_excluded": str(bool(c.exclude_own and self.own_job_id)),
            **({"queue_unreadable": "; ".join(unreadable)} if unreadable else {}),
            **({"resume_key": c.resume_key} if c.resume_key else {}),
            **outcome.versions,
        }
        cluster = (
            c.cluster
            or (known.queue.cluster if known else None)
            or os.environ.get("SLURM_CLUSTER_NAME")
        )
        run_row = {
            "run_id": run_id,
            "cluster": cluster,
            "slurm_job_id": self.own_job_id,
            "nodes": used_nodes,
            "ranks": ranks,
            "benchmark": benchmark,
            "implementation": c.impl,
            "pattern": _pattern(c.impl, benchmark),
            "msg_size_bytes": size,
            "iterations": outcome.iterations or c.iterations,
            "warmup": c.warmup,
            "locality": locality,
            "b_before": b_before,
            "b_after": b_after,
            "b_accepted": accepted,
            "threshold": c.threshold,
            "launcher": launcher.name,
            "mpi_library": outcome.mpi_library,
            "versions_json": json.dumps(versions, sort_keys=True),
            "started_at": started,
            "ended_at": ended,
            "partial": outcome.partial,
            **run_columns(protocol),
            "noise_profiles": profiles_json(current_profiles(self.results, used_nodes, started)),
        }
        # The data first, each part naming its `runs` row, which completes the run (written
        # last); interrupted or failed before that row, none of the run's files stays.
        record_of = f"runs/{run_id}"
        with self.results.all_or_nothing():
            if outcome.samples:
                rows = [{"run_id": run_id, **r} for r in outcome.samples]
                self.results.write("samples", rows, name=run_id, part_of=record_of)
            if outcome.warmup_samples:
                rows = [{"run_id": run_id, **r} for r in outcome.warmup_samples]
                self.results.write("warmup_samples", rows, name=run_id, part_of=record_of)
            if outcome.osu_results:
                rows = [{"run_id": run_id, **r} for r in outcome.osu_results]
                self.results.write("osu_results", rows, name=run_id, part_of=record_of)
            self.results.write("runs", [run_row], name=run_id)
        verdict = {True: "accepted", False: "NOT accepted", None: "unknown"}[accepted]
        self.progress(
            f"{benchmark} {size} B: {len(outcome.samples) or len(outcome.osu_results)} rows, "
            f"b {format_b(b_before)} -> {format_b(b_after)} ({verdict}), {locality}"
            + (" — PARTIAL run" if outcome.partial else "")
        )
        return {k: v for k, v in run_row.items() if k != "versions_json"} | {
            "levels_spanned": levels,
            "samples": len(outcome.samples),
        }


def format_b(b: float | None, digits: int = 3) -> str:
    return "unknown" if b is None else f"{b:.{digits}f}"


def check_accepted(summaries: list[dict[str, Any]]) -> None:
    """Exit code 3 (NotAcceptedError) when any run's b moved by the threshold or more, or
    could not be read (b_accepted null)."""
    moved = [s for s in summaries if s["b_accepted"] is False]
    unknown = [s for s in summaries if s["b_accepted"] is None]
    said = []
    for runs, what in ((moved, "b was not stable"), (unknown, "b unknown (queue unreadable)")):
        if runs:
            which = ", ".join(f"{s['benchmark']}@{s['msg_size_bytes']}" for s in runs)
            said.append(f"{what} during {len(runs)} run(s): {which}")
    if said:
        raise NotAcceptedError("; ".join(said))
