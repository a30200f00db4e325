"""Runs a lab campaign (spec.py): phase by phase, start the phase's background jobs (real
multi-node MPI jobs, tailcast.lab.background), let them settle, run one agent job per
foreground placement that shares no node with them, then cancel them. Every measured run
gets a `lab_runs` row: phase, placement, the background jobs beside it, whether they share a
directed data link with it (links.py, from the topology), the calls each completed while the
run ran (from their progress logs and the run's start and end) and the host's 1-minute load
before and after its job (the noise a shared machine adds). A phase/placement whose rows
exist is skipped: re-running resumes.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast.collectors.topology import Topology
from tailcast.errors import ExternalToolError
from tailcast.lab.jobs import ENDED, Job, cancel, submit, wait_for
from tailcast.lab.links import shares_links
from tailcast.lab.spec import LabCampaign, Phase
from tailcast.store import Catalog, ResultsDir


@dataclass(frozen=True)
class PlannedRun:
    phase: Phase
    placement: str
    nodes: list[str]
    shares_links: bool


def plan(camp: LabCampaign, topo: Topology) -> list[PlannedRun]:
    return [
        PlannedRun(phase, placement, nodes, shares_links(topo, nodes, phase.jobs))
        for phase in camp.phases
        for placement, nodes in camp.runs_of(phase)
    ]


def _done(results: ResultsDir, camp: LabCampaign) -> set[tuple[str, str]]:
    if not results.files("lab_runs"):
        return set()
    with Catalog(results) as cat:
        rows = cat.sql(
            "SELECT phase, placement, count(*) AS n FROM lab_runs "
            f"WHERE campaign = '{camp.name.replace(chr(39), chr(39) * 2)}' GROUP BY ALL"
        ).to_pylist()
    per_job = len(camp.benchmarks) * len(camp.sizes)
    return {(r["phase"], r["placement"]) for r in rows if r["n"] >= per_job}


def _runs(results: ResultsDir, job_id: str) -> list[tuple[str, float, float]]:
    """(run id, start, end in unix seconds) of the runs an agent job wrote."""
    with Catalog(results) as cat:
        rows = cat.sql(
            "SELECT run_id, epoch(started_at) AS t0, epoch(ended_at) AS t1 FROM runs "
            f"WHERE slurm_job_id = '{int(job_id)}' ORDER BY started_at"
        ).to_pylist()
    return [(str(r["run_id"]), float(r["t0"]), float(r["t1"])) for r in rows]


def _progress(path: Path) -> list[tuple[float, int]]:
    """A background job's (unix time, calls completed) samples, about one per second."""
    samples = []
    try:
        for line in path.read_text().splitlines():
            try:
                doc = json.loads(line)
                samples.append((float(doc["t"]), int(doc["calls"])))
            except (ValueError, KeyError):
                continue  # a line cut by the job's cancellation
    except OSError:
        pass
    return samples


def _calls_between(samples: list[tuple[float, int]], start: float, stop: float) -> int:
    """Calls completed in [start, stop], from the samples nearest each end (±1 s)."""
    before = [c for t, c in samples if t <= start]
    upto = [c for t, c in samples if t <= stop]
    return (upto[-1] if upto else 0) - (before[-1] if before else 0)


def _job_seed(name: str) -> int:
    """Seed of a background job's pauses: fixed by the job's name (campaign, phase, index),
    so a re-recorded campaign draws the same pauses and two jobs of a phase differ."""
    return zlib.crc32(name.encode())


def _agent_argv(camp: LabCampaign) -> list[str]:
    return [
        sys.executable, "-m", "tailcast", "agent", "run",
        "--benchmarks", ",".join(camp.benchmarks),
        "--sizes", ",".join(str(s) for s in camp.sizes),
        "--iterations", str(camp.iterations), "--warmup", str(camp.warmup),
        "--interval-ms", f"{camp.interval_ms:g}",
    ]  # fmt: skip


class CampaignRunner:
    def __init__(
        self,
        camp: LabCampaign,
        topo: Topology,
        workdir: Path,
        results: ResultsDir,
        progress: Callable[[str], None],
    ) -> None:
        self.camp, self.topo, self.workdir, self.results = camp, topo, workdir, results
        self.progress = progress

    def _background(self, phase: Phase) -> list[tuple[Job, Path]]:
        bg = self.camp.background
        started = []
        for i, nodes in enumerate(phase.jobs):
            name = f"{self.camp.name}-bg-{phase.name}-{i}"
            status = self.workdir / f"bg-{phase.name}-{i}.jsonl"
            status.unlink(missing_ok=True)
            argv = [
                "mpirun", "-np", str(len(nodes)), "--map-by", "node", sys.executable, "-m",
                "tailcast.lab.background", "--size", str(bg.size_bytes),
                "--gap-ms", f"{bg.gap_ms:g}", "--gaps", bg.gaps, "--seed", str(_job_seed(name)),
                "--poll-ms", f"{bg.poll_ms:g}", "--progress", str(status),
            ]  # fmt: skip
            started.append(
                (submit(name, nodes, [argv], self.workdir, time_limit="12:00:00"), status)
            )
        return started

    def _measure(self, run: PlannedRun, bg: list[tuple[Job, Path]]) -> list[dict[str, Any]]:
        load_before = os.getloadavg()[0]
        name = f"{self.camp.name}-{run.phase.name}-{run.placement}"
        job = submit(
            name,
            run.nodes,
            [_agent_argv(self.camp)],
            self.workdir,
            env={"TAILCAST_HOME": str(self.results.root)},
            time_limit=self.camp.time_limit,
        )
        end = wait_for(job, ENDED, timeout_s=24 * 3600, poll_s=5.0)
        load_after = os.getloadavg()[0]
        runs = _runs(self.results, job.job_id)
        if not runs:  # exit 3 (b not accepted) still writes runs; nothing written is a failure
            tail = job.output.read_text(errors="replace")[-1500:] if job.output.exists() else ""
            raise ExternalToolError(
                "agent", f"job {job.job_id} ({name}) ended {end}, no runs", tail
            )
        progress = [_progress(path) for _, path in bg]
        b = self.camp.background
        return [
            {
                "run_id": run_id,
                "campaign": self.camp.name,
                "phase": run.phase.name,
                "placement": run.placement,
                "shares_links": run.shares_links,
                "bg_job_ids": [j.job_id for j, _ in bg],
                "bg_nodes": run.phase.jobs,
                "bg_pattern": b.pattern,
                "bg_msg_size_bytes": b.size_bytes,
                "bg_gap_ms": b.gap_ms,
                "bg_gaps": b.gaps,
                "bg_calls": [_calls_between(p, start, stop) for p in progress],
                "bg_seconds": [stop - start] * len(progress),
                "host_load_1m_before": load_before,
                "host_load_1m_after": load_after,
            }
            for run_id, start, stop in runs
        ]

    def run(self, only: set[str] | None = None) -> list[dict[str, Any]]:
        self.workdir.mkdir(parents=True, exist_ok=True)
        done = _done(self.results, self.camp)
        todo = [
            r
            for r in plan(self.camp, self.topo)
            if (r.phase.name, r.placement) not in done and (not only or r.phase.name in only)
        ]
        written: list[dict[str, Any]] = []
        for name in dict.fromkeys(r.phase.name for r in todo):
            runs = [r for r in todo if r.phase.name == name]
            phase = runs[0].phase
            bg = self._background(phase)
            try:
                for job, _ in bg:
                    wait_for(job, frozenset({"RUNNING"}), timeout_s=300)
                time.sleep(self.camp.settle_s if bg else 0)
                for run in runs:
                    self.progress(
                        f"phase {phase.name}: {run.placement} {','.join(run.nodes)} beside "
                        f"{len(bg)} background jobs (shares links: {run.shares_links})"
                    )
                    rows = self._measure(run, bg)
                    self.results.write("lab_runs", rows)
                    written += rows
            finally:
                cancel([job for job, _ in bg])
        return written
