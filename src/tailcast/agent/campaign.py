"""Measurement campaigns as Slurm batch jobs (seed 001 §4.1: the same collectives measured
under three placements). A CAMPAIGN.toml lists patterns × sizes × placements; each
(placement, pattern) becomes one agent job running every size. Placements:
- same_group:        `--switches=1` (Slurm's tree plugin keeps the job under one leaf switch);
- same_island:       `--nodelist` of one island's nodes taken round-robin over its groups;
- different_islands: `--nodelist` round-robin over all islands, or `--spread-job` when no
                     topology is known ("spread otherwise").
Scripts are rendered with jinja2 from tailcast/agent/sbatch/*.sbatch.j2 and submitted with
argv lists (`sbatch --parsable SCRIPT`) in an environment scrubbed of inherited SBATCH_* variables.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hostlist
import jinja2

from tailcast.agent.bsweep_spec import BackgroundSpec, load_background
from tailcast.collectors.benchmarks import BENCHMARKS
from tailcast.collectors.slurm_jobs import sbatch
from tailcast.collectors.topology import (
    DIFFERENT_ISLANDS,
    SAME_GROUP,
    SAME_ISLAND,
    Topology,
    UnknownNodeError,
    load_topology_toml,
)
from tailcast.errors import InputError, UsageError
from tailcast.units import parse_size

PLACEMENTS = (SAME_GROUP, SAME_ISLAND, DIFFERENT_ISLANDS)


def templates_dir() -> Path:
    """$TAILCAST_SLURM_JOBS (a site's own templates), else the templates shipped in the
    package (tailcast/agent/sbatch/), so an installed wheel can submit campaigns."""
    explicit = os.environ.get("TAILCAST_SLURM_JOBS")
    if explicit:
        return Path(explicit)
    return Path(__file__).resolve().parent / "sbatch"


@dataclass
class Campaign:
    name: str
    nodes: int
    patterns: list[str]
    sizes: list[str]
    placements: list[str]
    iterations: int = 1000
    warmup: int = 100
    interval_ms: float = 1.0
    impl: str = "builtin"
    launcher: str = "auto"
    threshold: float = 0.05
    time_limit: str = "00:30:00"
    partition: str | None = None
    account: str | None = None
    tailcast: str = "tailcast"
    output_dir: str = "logs"
    topology: Path | None = None
    extra_sbatch: list[str] = field(default_factory=list)
    # A rerun of a job (requeued after a node failure, resubmitted after a kill) skips the
    # points it already stored (agent/resume.py); false measures every point again.
    resume: bool = True
    # Seconds of `agent noise-profile` on the job's nodes before its runs (0: none); the runs
    # record the profile.
    noise_profile_s: float = 0.0
    env: dict[str, str] = field(default_factory=dict)
    collector: dict[str, Any] | None = None
    background: BackgroundSpec | None = None
    path: Path = Path("CAMPAIGN.toml")


def _fail(path: Path, message: str) -> InputError:
    return InputError(path, message)


def load_campaign(path: Path) -> Campaign:
    """Reads and checks a CAMPAIGN.toml; errors name the file (and line for TOML syntax)."""
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        raise InputError(path, f"invalid TOML: {exc}", line) from exc
    body = doc.get("campaign")
    if not isinstance(body, dict):
        raise _fail(path, "needs a [campaign] table")
    known = set(Campaign.__dataclass_fields__) - {"path", "collector", "background"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise _fail(path, f"unknown [campaign] keys {unknown}")
    for key in ("name", "nodes", "patterns", "sizes", "placements"):
        if key not in body:
            raise _fail(path, f"[campaign] needs {key!r}")
    try:
        camp = Campaign(
            **body,
            collector=doc.get("collector"),
            background=load_background(doc.get("background"), path),
            path=path,
        )
    except TypeError as exc:
        raise _fail(path, str(exc)) from exc
    for key in ("patterns", "sizes", "placements", "extra_sbatch"):
        if not isinstance(getattr(camp, key), list):  # `placements = 1000` was a TypeError
            raise _fail(path, f"[campaign] {key} must be a list, got {getattr(camp, key)!r}")
    if not isinstance(camp.env, dict):
        raise _fail(path, f"[campaign] env must be a table, got {camp.env!r}")
    bad = [p for p in camp.patterns if p not in BENCHMARKS]
    if bad:
        raise _fail(path, f"unknown patterns {bad}; choose from {', '.join(BENCHMARKS)}")
    bad = [p for p in camp.placements if p not in PLACEMENTS]
    if bad:
        raise _fail(path, f"unknown placements {bad}; choose from {', '.join(PLACEMENTS)}")
    for size in camp.sizes:
        try:
            parse_size(str(size))
        except UsageError as exc:
            raise _fail(path, str(exc)) from exc
    if not isinstance(camp.resume, bool):
        raise _fail(path, "resume must be true or false")
    noise = camp.noise_profile_s
    if isinstance(noise, bool) or not isinstance(noise, int | float) or noise < 0:
        raise _fail(path, f"noise_profile_s must be a number of seconds >= 0, got {noise!r}")
    if not isinstance(camp.nodes, int) or camp.nodes < 2:
        raise _fail(path, "nodes must be an integer ≥ 2")
    if camp.topology is not None:
        camp.topology = (path.parent / str(camp.topology)).resolve()
    return camp


@dataclass(frozen=True)
class RenderedJob:
    name: str
    placement: str
    pattern: str
    script: str


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # shell scripts, quoted with the shell_quote filter instead
    )
    env.filters["shell_quote"] = lambda v: shlex.quote(str(v))
    env.filters["shell_join"] = lambda argv: shlex.join(str(a) for a in argv)
    return env


def placement_options(camp: Campaign, placement: str, topo: Topology | None) -> list[str]:
    if placement == SAME_GROUP:
        return ["--switches=1"]
    if topo is None:
        if placement == SAME_ISLAND:
            raise UsageError("same_island needs a topology (campaign 'topology' or scontrol)")
        return ["--spread-job"]
    try:
        nodes = topo.pick_nodes(camp.nodes, placement)
    except UnknownNodeError as exc:
        raise UsageError(f"placement {placement}: {exc}") from exc
    return [f"--nodelist={hostlist.collect_hostlist(nodes)}"]


def agent_argv(camp: Campaign, patterns: list[str]) -> list[str]:
    argv = [
        *shlex.split(camp.tailcast),
        "agent",
        "run",
        "--impl",
        camp.impl,
        "--benchmarks",
        ",".join(patterns),
        "--sizes",
        ",".join(str(s) for s in camp.sizes),
        "--iterations",
        str(camp.iterations),
        "--warmup",
        str(camp.warmup),
        "--interval-ms",
        f"{camp.interval_ms:g}",
        "--threshold",
        f"{camp.threshold:g}",
        "--launcher",
        camp.launcher,
    ]
    if camp.topology is not None:
        argv += ["--topology", str(camp.topology)]
    return argv


def render_agent_job(
    camp: Campaign,
    name: str,
    placement: str,
    options: list[str],
    patterns: list[str],
    settle_s: float = 0.0,
) -> RenderedJob:
    """One measurement job running `patterns` at every size of the campaign."""
    noise_argv = []
    if camp.noise_profile_s > 0:
        seconds = f"{camp.noise_profile_s:g}"
        noise_argv = [*shlex.split(camp.tailcast), "agent", "noise-profile", "--seconds", seconds]
    script = (
        _environment()
        .get_template("agent.sbatch.j2")
        .render(
            job_name=name,
            nodes=camp.nodes,
            time_limit=camp.time_limit,
            partition=camp.partition,
            account=camp.account,
            output=f"{camp.output_dir}/{name}-%j.out",
            options=[*options, *camp.extra_sbatch],
            env=sorted(camp.env.items()),
            placement=placement,
            argv=[
                *agent_argv(camp, patterns),
                "--resume-key",
                name,
                *(["--resume"] if camp.resume else []),
            ],
            settle_s=f"{settle_s:g}" if settle_s > 0 else "",
            noise_argv=noise_argv,
        )
    )
    return RenderedJob(name, placement, ",".join(patterns), script)


def render_background_job(
    camp: Campaign, name: str, nodes: list[str], spec: BackgroundSpec
) -> RenderedJob:
    """One background job of a b-sweep phase: `tailcast agent noise` on `nodes`."""
    noise_args = [
        "--pattern",
        spec.pattern,
        "--size",
        str(parse_size(str(spec.size))),
        "--pause-ms",
        f"{spec.pause_ms:g}",
    ]
    script = (
        _environment()
        .get_template("background.sbatch.j2")
        .render(
            job_name=name,
            nodes=len(nodes),
            nodelist=hostlist.collect_hostlist(nodes),
            time_limit=camp.time_limit,
            partition=camp.partition,
            account=camp.account,
            output=f"{camp.output_dir}/{name}-%j.out",
            env=sorted(camp.env.items()),
            pattern=spec.pattern,
            argv=[*shlex.split(camp.tailcast), "agent", "noise", *noise_args],
        )
    )
    return RenderedJob(name, "background", "noise", script)


def render_campaign(camp: Campaign, topo: Topology | None) -> list[RenderedJob]:
    jobs = []
    for placement in camp.placements:
        options = placement_options(camp, placement, topo)
        for pattern in camp.patterns:
            name = f"{camp.name}-{placement}-{pattern}"
            jobs.append(render_agent_job(camp, name, placement, options, [pattern]))
    return jobs


def render_collector(camp: Campaign) -> RenderedJob | None:
    if not camp.collector:
        return None
    c = camp.collector
    argv = [
        *shlex.split(camp.tailcast),
        "collect",
        "watch",
        "--interval",
        str(c.get("interval_s", 60)),
        "--duration",
        str(c.get("duration_s", 3600)),
        "--flush-every",
        str(c.get("flush_every", 10)),
    ]
    script = (
        _environment()
        .get_template("collector.sbatch.j2")
        .render(
            job_name=f"{camp.name}-collector",
            time_limit=c.get("time_limit", camp.time_limit),
            partition=camp.partition,
            account=camp.account,
            output=f"{camp.output_dir}/{camp.name}-collector-%j.out",
            env=sorted(camp.env.items()),
            argv=argv,
        )
    )
    return RenderedJob(f"{camp.name}-collector", "none", "collector", script)


def campaign_topology(camp: Campaign) -> Topology | None:
    if camp.topology is not None:
        return load_topology_toml(camp.topology)
    if SAME_ISLAND in camp.placements or DIFFERENT_ISLANDS in camp.placements:
        from tailcast.collectors.topology import read_scontrol_topology

        return read_scontrol_topology()
    return None


def write_scripts(jobs: list[RenderedJob], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for job in jobs:
        path = out_dir / f"{job.name}.sbatch"
        path.write_text(job.script)
        paths.append(path)
    return paths


def submit_script(path: Path | None, workdir: Path, options: Sequence[str] = ()) -> str:
    """`sbatch --parsable [options] SCRIPT` (no retries: a retry could submit twice); with no
    script, `options` must carry `--wrap`. Returns the job id."""
    return sbatch([f"--chdir={workdir}", *options], path)


def submit_scripts(paths: list[Path], workdir: Path) -> list[str]:
    """Submits each script with no dependencies; returns the job ids in order."""
    return [submit_script(path, workdir) for path in paths]
