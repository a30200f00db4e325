"""Rendering and submitting a b-sweep campaign's phases (tailcast.agent.bsweep_spec explains
the plan): per phase, background jobs, one measurement job and an end job, chained with
`sbatch --dependency` so phases run one at a time in the planned order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hostlist

from tailcast.agent.bsweep_spec import Phase, plan_phases
from tailcast.agent.campaign import (
    Campaign,
    RenderedJob,
    render_agent_job,
    render_background_job,
    submit_script,
    write_scripts,
)
from tailcast.collectors.topology import Topology
from tailcast.errors import UsageError


@dataclass(frozen=True)
class PhaseJobs:
    phase: Phase
    background: list[RenderedJob]
    measure: RenderedJob


def render_sweep(camp: Campaign, topo: Topology | None) -> list[PhaseJobs]:
    spec = camp.background
    if spec is None:
        raise UsageError(f"{camp.path}: no [background] table: not a b-sweep campaign")
    if topo is None:
        raise UsageError("a b-sweep campaign needs a topology to place background jobs")
    out = []
    for phase in plan_phases(spec.levels, camp.placements, spec, topo, camp.nodes):
        stem = f"{camp.name}-p{phase.index:02d}"
        background = [
            render_background_job(camp, f"{stem}-bg{i}", list(nodes), spec)
            for i, nodes in enumerate(phase.background)
        ]
        options = [f"--nodelist={hostlist.collect_hostlist(list(phase.measure_nodes))}"]
        measure = render_agent_job(
            camp,
            f"{stem}-{phase.placement}",
            phase.placement,
            options,
            camp.patterns,
            settle_s=spec.settle_s if background else 0.0,
        )
        out.append(PhaseJobs(phase, background, measure))
    return out


def write_sweep(phases: list[PhaseJobs], out_dir: Path) -> list[Path]:
    return write_scripts([j for p in phases for j in (*p.background, p.measure)], out_dir)


def submit_sweep(
    camp: Campaign, phases: list[PhaseJobs], out_dir: Path, workdir: Path
) -> list[dict[str, Any]]:
    """Submits every phase in order; returns per phase its plan and job ids."""
    common = []
    if camp.partition:
        common.append(f"--partition={camp.partition}")
    if camp.account:
        common.append(f"--account={camp.account}")
    previous_end: str | None = None
    submitted = []
    for p in phases:
        after_previous = [f"afterany:{previous_end}"] if previous_end else []
        bg_ids = [
            submit_script(
                out_dir / f"{job.name}.sbatch",
                workdir,
                [f"--dependency={','.join(after_previous)}"] if after_previous else [],
            )
            for job in p.background
        ]
        deps = [*after_previous, *([f"after:{':'.join(bg_ids)}"] if bg_ids else [])]
        measure_id = submit_script(
            out_dir / f"{p.measure.name}.sbatch",
            workdir,
            [f"--dependency={','.join(deps)}"] if deps else [],
        )
        end_id = measure_id
        if bg_ids:
            # The end job only cancels: one core for a moment, never in b (one node).
            end_id = submit_script(
                None,
                workdir,
                [
                    *common,
                    f"--job-name={camp.name}-p{p.phase.index:02d}-end",
                    f"--dependency=afterany:{measure_id}",
                    "--nodes=1",
                    "--ntasks=1",
                    "--time=00:05:00",
                    "--output=/dev/null",
                    f"--wrap=scancel {' '.join(bg_ids)}",
                ],
            )
        previous_end = end_id
        submitted.append(
            {**p.phase.as_dict(), "background_jobs": bg_ids, "measure_job": measure_id}
            | {"end_job": end_id if bg_ids else None}
        )
    return submitted
