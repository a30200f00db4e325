"""`tailcast agent`: the in-job measurement loop and campaign submission."""

import os
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.cli.progress import progress
from tailcast.errors import Interrupted

# tailcast.collectors.utilisation.DEFAULT_THRESHOLD (a test checks they agree), declared here
# so that `--help` does not load the collectors.
DEFAULT_THRESHOLD = 0.05
QUEUE_BUDGET_S = 120.0  # tailcast.collectors.queue_budget.QUEUE_BUDGET_S (checked likewise)

if TYPE_CHECKING:
    from tailcast.agent.campaign import Campaign

# The agent and campaign modules (mpi4py runners, jinja2, numpy) load when a command runs.
app = new_app(
    "Measure collective latencies inside a Slurm allocation (every iteration kept, b before "
    "and after each run), and submit measurement campaigns as sbatch jobs."
)


@app.command("run")
def run(
    benchmarks: Annotated[
        str,
        typer.Option(
            "--benchmarks",
            help="Comma list: bcast,reduce,allreduce,...; with --impl osu any OSU benchmark "
            "(ibcast, neighbor_alltoall, latency, bw, ...).",
        ),
    ] = "bcast,reduce,alltoall",
    sizes: Annotated[str, typer.Option("--sizes", help="Comma list, e.g. 4,1K,32K,1M.")] = (
        "4,1K,32K,1M"
    ),
    iterations: Annotated[int, typer.Option("--iterations", help="Timed iterations.")] = 1000,
    warmup: Annotated[int, typer.Option("--warmup", help="Untimed warm-up iterations.")] = 100,
    interval_ms: Annotated[
        float, typer.Option("--interval-ms", help="Pause after each iteration (ms).")
    ] = 1.0,
    impl: Annotated[str, typer.Option("--impl", help="builtin (mpi4py) or osu.")] = "builtin",
    launcher: Annotated[str, typer.Option("--launcher", help="auto, mpirun or srun.")] = "auto",
    launcher_args: Annotated[
        str, typer.Option("--launcher-args", help="Extra launcher arguments (shell words).")
    ] = "",
    ranks: Annotated[
        int | None, typer.Option("--ranks", help="MPI ranks; default one per allocated node.")
    ] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Accept b if |b_after - b_before| < this.")
    ] = DEFAULT_THRESHOLD,
    include_own: Annotated[
        bool, typer.Option("--include-own-job", help="Count our own job in b.")
    ] = False,
    total_nodes: Annotated[
        int | None, typer.Option("--total-nodes", help="N_t; default from sinfo.")
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help="Queue reader.")] = "auto",
    queue_budget: Annotated[
        float,
        typer.Option(
            "--queue-budget",
            help="Seconds a snapshot may retry an unreadable queue (slurmctld down) before "
            "the run is stored with b unknown.",
        ),
    ] = QUEUE_BUDGET_S,
    topology: Annotated[
        Path | None, typer.Option("--topology", help="TOML topology; default scontrol.")
    ] = None,
    osu_dir: Annotated[
        Path | None, typer.Option("--osu-dir", help="Where the OSU binaries are.")
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds allowed per benchmark run.")
    ] = 3600.0,
    per_rank: Annotated[
        bool, typer.Option("--per-rank/--no-per-rank", help="Keep every rank's times.")
    ] = True,
    resume_key: Annotated[
        str | None,
        typer.Option("--resume-key", help="Recorded with every run (campaigns: the job name)."),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Skip the points already stored under --resume-key."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Run summaries as JSON.")] = False,
) -> None:
    """Per (benchmark, size): snapshot, run, snapshot; store runs + samples. Exit 3 if any
    run's b was not stable or could not be read."""
    from tailcast.agent.loop import (
        Agent,
        AgentConfig,
        check_accepted,
        format_b,
        parse_benchmarks,
    )
    from tailcast.units import parse_sizes

    cfg = AgentConfig(
        benchmarks=parse_benchmarks(benchmarks, impl),
        sizes=parse_sizes(sizes),
        iterations=iterations,
        warmup=warmup,
        interval_ms=interval_ms,
        impl=impl,
        launcher=launcher,
        launcher_args=shlex.split(launcher_args),
        ranks=ranks,
        threshold=threshold,
        exclude_own=not include_own,
        total_nodes=total_nodes,
        backend=backend,
        topology_file=topology,
        osu_dir=osu_dir,
        timeout_s=timeout,
        per_rank=per_rank,
        queue_budget_s=queue_budget,
        resume_key=resume_key,
        resume=resume,
    )
    with progress("benchmark runs", len(cfg.benchmarks) * len(cfg.sizes)) as advance:

        def ran(line: str) -> None:  # the agent reports each finished run with a line
            note(line)
            advance(1)

        agent = Agent(cfg, progress=ran)
        summaries = agent.run()
    if as_json:
        emit_json(summaries)
    else:
        for s in summaries:
            echo(
                f"{s['run_id']} {s['benchmark']} {s['msg_size_bytes']} B "
                f"b={format_b(s['b_before'], 4)}->{format_b(s['b_after'], 4)} "
                f"accepted={s['b_accepted']} "
                f"{s['locality']}"
            )
    if agent.stop.signal == signal.SIGTERM:  # SIGUSR2 (the time-limit warning) ends normally
        raise Interrupted(
            signal.SIGTERM,
            f"the run under way was finished first; {len(summaries)} completed run(s) kept",
        )
    check_accepted(summaries)


@app.command("submit")
def submit(
    campaign: Annotated[Path, typer.Argument(help="CAMPAIGN.toml")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Render the scripts, do not submit.")
    ] = False,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            help="Where scripts go (default <campaign>.rendered/; with --dry-run a new "
            "temporary directory, printed).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Scripts and job ids as JSON.")] = False,
) -> None:
    """Render a campaign's sbatch scripts (patterns x placements) and submit them."""
    from tailcast.agent.campaign import (
        campaign_topology,
        load_campaign,
        render_campaign,
        render_collector,
        submit_scripts,
        write_scripts,
    )

    camp = load_campaign(campaign)
    if out_dir is not None:
        target = out_dir
    elif dry_run:  # a look at the scripts leaves the checkout and the cwd as they were
        import tempfile

        target = Path(tempfile.mkdtemp(prefix=f"tailcast-{campaign.stem}-dry-run-"))
        note(f"dry run: rendering into the temporary directory {target}")
    else:
        target = campaign.with_name(f"{campaign.stem}.rendered")
    if camp.background is not None:
        _submit_sweep(camp, target, dry_run, as_json)
        return
    jobs = render_campaign(camp, campaign_topology(camp))
    collector = render_collector(camp)
    if collector is not None:
        jobs.append(collector)
    paths = write_scripts(jobs, target)
    ids: list[str] = []
    if not dry_run:
        workdir = Path.cwd()
        (workdir / camp.output_dir).mkdir(parents=True, exist_ok=True)
        ids = submit_scripts(paths, workdir)
    if as_json:
        emit_json(
            {
                "out_dir": target,
                "scripts": paths,
                "job_ids": ids,
                "dry_run": dry_run,
                "jobs": [
                    {"name": j.name, "placement": j.placement, "pattern": j.pattern} for j in jobs
                ],
            }
        )
        return
    for i, path in enumerate(paths):
        echo(f"{path}" + (f"\tjob {ids[i]}" if ids else "\t(dry run)"))


def _submit_sweep(camp: "Campaign", target: Path, dry_run: bool, as_json: bool) -> None:
    """A campaign with a [background] table: phases of planned background load."""
    from tailcast.agent.bsweep_submit import render_sweep, submit_sweep, write_sweep
    from tailcast.agent.campaign import campaign_topology

    phases = render_sweep(camp, campaign_topology(camp))
    paths = write_sweep(phases, target)
    if dry_run:
        plan = [p.phase.as_dict() for p in phases]
    else:
        workdir = Path.cwd()
        (workdir / camp.output_dir).mkdir(parents=True, exist_ok=True)
        plan = submit_sweep(camp, phases, target, workdir)
    if as_json:
        emit_json({"out_dir": target, "scripts": paths, "dry_run": dry_run, "phases": plan})
        return
    for p in plan:
        jobs = "" if dry_run else f"\tjob {p['measure_job']}"
        echo(
            f"phase {p['phase']:2d}: b ≈ {p['expected_b']:.3f} {p['placement']} on "
            f"{p['measure_nodes']}, background {p['background'] or 'none'}{jobs}"
        )
    note(f"{len(paths)} scripts in {target}" + (" (dry run)" if dry_run else ""))


@app.command("noise")
def noise(
    pattern: Annotated[str, typer.Option(help="alltoall, allreduce or bcast.")] = "alltoall",
    size: Annotated[str, typer.Option(help="Message size, e.g. 64K.")] = "64K",
    pause_ms: Annotated[float, typer.Option(help="Pause after each call (ms).")] = 2.0,
    launcher: Annotated[str, typer.Option(help="auto, mpirun or srun.")] = "auto",
) -> None:
    """Background traffic inside a Slurm job: one rank per allocated node repeats a
    collective until the job is cancelled (b-sweep campaigns submit these)."""
    from tailcast.agent.noise import NOISE_PATTERNS
    from tailcast.collectors.launcher import allocation_nodes_list, detect_launcher
    from tailcast.errors import UsageError
    from tailcast.units import parse_size

    if pattern not in NOISE_PATTERNS:
        raise UsageError(f"--pattern must be one of {', '.join(NOISE_PATTERNS)}")
    ranks = len(allocation_nodes_list())
    if ranks < 2:
        raise UsageError("agent noise runs inside a Slurm allocation of at least two nodes")
    program = [
        sys.executable,
        "-m",
        "tailcast.agent.noise",
        "--pattern",
        pattern,
        "--size",
        str(parse_size(size)),
        "--pause-ms",
        f"{pause_ms:g}",
    ]
    argv = detect_launcher(launcher).argv(ranks, program)
    sys.stdout.flush()
    os.execv(argv[0], argv)  # the launcher takes this process's place: scancel reaches it


@app.command("noise-profile")
def noise_profile(
    seconds: Annotated[
        float, typer.Option("--seconds", min=0.01, help="How long each node's loop runs.")
    ] = 5.0,
    quantum_us: Annotated[
        float, typer.Option("--quantum-us", min=1.0, help="The work quantum (µs).")
    ] = 20.0,
    threshold_ns: Annotated[
        int,
        typer.Option(
            "--threshold-ns", min=1, help="Excess over the fastest quantum counted as a detour."
        ),
    ] = 1000,
    local: Annotated[
        bool, typer.Option("--local", help="This host only, outside Slurm (no srun).")
    ] = False,
    toml: Annotated[
        Path | None,
        typer.Option("--toml", help="Also write the profiles pooled as a [host.noise] table."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Profiles' summaries as JSON.")] = False,
) -> None:
    """Host noise per node: a fixed-work-quantum loop on every node of the allocation (one
    process per node), its detours (quanta slower than the fastest) stored per node in
    noise_profiles; agent runs record the newest profile of their nodes."""
    from datetime import UTC, datetime

    from tailcast.agent.noise_profile import measure_allocation, measure_local
    from tailcast.collectors.launcher import allocation_nodes_list
    from tailcast.collectors.noise_profile import TABLE, host_noise_toml, profile_rows
    from tailcast.collectors.utilisation import own_job_id_from_env
    from tailcast.store import ResultsDir

    results = ResultsDir()
    taken = datetime.now(UTC)
    quantum_ns = round(quantum_us * 1000)
    if local:
        profiles = measure_local(seconds, quantum_ns, threshold_ns)
    else:
        nodes = allocation_nodes_list()
        profiles = measure_allocation(nodes, seconds, quantum_ns, threshold_ns, results.root)
    rows = profile_rows(
        profiles, os.environ.get("SLURM_CLUSTER_NAME"), own_job_id_from_env(), taken
    )
    results.write(TABLE, rows)
    if toml is not None:
        toml.write_text(host_noise_toml(profiles))
    summaries = [p.summary() for p in profiles]
    if as_json:
        emit_json(summaries)
        return
    for s in summaries:
        echo(
            f"{s['node']}: {s['detours']} detours in {s['window_s']:.2f} s "
            f"({s['detours_per_s']:.1f}/s, {s['lost_fraction']:.1%} of the time), "
            f"p50 {s['detour_p50_ns'] or 0} ns, p99 {s['detour_p99_ns'] or 0} ns, "
            f"max {s['detour_max_ns'] or 0} ns; quantum {s['quantum_ns']} ns, "
            f"clock floor {s['clock_overhead_ns']} ns"
        )
