"""`tailcast lab`: measurements that characterise a tree-topology cluster such as the local
network lab (`scripts/slurm-local up --network lab`): calibration of its link classes and
the lab campaign with placed background jobs."""

import json
from pathlib import Path
from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import NotAcceptedError

# Each command imports what it needs when it runs: `tailcast` starts without loading the
# replay engine, pyarrow or the topology readers for commands that do not use them.

app = new_app(
    "Characterise a tree-topology cluster (the local network lab): per-link-class rates and "
    "per-message costs, and measured tails under placed background jobs."
)


@app.command("calibrate")
def calibrate(
    workdir: Annotated[
        Path, typer.Option("--workdir", help="Job scripts, outputs and raw results go here.")
    ] = Path("lab-calibration"),
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the calibration as JSON to this file.")
    ] = None,
    fabric_out: Annotated[
        Path | None,
        typer.Option("--fabric-out", help="Write it as a `tree` fabric TOML (e.g. lab.toml)."),
    ] = None,
    topology: Annotated[
        Path | None, typer.Option("--topology", help="TOML topology; default scontrol.")
    ] = None,
    network: Annotated[
        Path | None,
        typer.Option(
            "--network",
            help="The lab's network.toml: --fabric-out then writes each level's shaper as a "
            "token bucket (burst, htb's GSO overdraft).",
        ),
    ] = None,
    ping_iterations: Annotated[int, typer.Option("--ping-iterations")] = 1000,
    bw_window: Annotated[int, typer.Option("--bw-window", help="Messages in flight.")] = 16,
    bw_iterations: Annotated[int, typer.Option("--bw-iterations")] = 8,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calibration as JSON.")] = False,
) -> None:
    """One 2-node job per link class (same group, same island, different islands): 1-byte
    ping-pong and 1 MiB streaming bandwidth; derives per-class rates, per-link latency and
    per-message overhead."""
    from tailcast.collectors.topology import load_topology_toml, read_scontrol_topology
    from tailcast.lab.calibrate import CalibrationSettings, run_calibration
    from tailcast.lab.fabric_toml import fabric_toml
    from tailcast.lab.shaper import load_shapers
    from tailcast.replay.fabric import load_fabric

    shapers = load_shapers(network) if network is not None else None
    topo = load_topology_toml(topology) if topology else read_scontrol_topology()
    settings = CalibrationSettings(
        ping_iterations=ping_iterations, bw_window=bw_window, bw_iterations=bw_iterations
    )
    note(f"calibrating in {workdir.resolve()} (three jobs, one after the other)")
    cal = run_calibration(topo, workdir.resolve(), settings)
    result = cal.as_dict()
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n")
    if fabric_out is not None:
        fabric_out.write_text(
            fabric_toml(cal, topo, fabric_out.stem, shapers, network.name if network else "")
        )
        load_fabric(fabric_out)  # the engine accepts what was written
        note(f"wrote fabric {fabric_out}")
    if as_json:
        emit_json(result)
        return
    for name, c in result["classes"].items():
        echo(
            f"{name:18s} {'-'.join(c['nodes']):14s} one-way p50 {c['one_way_us_p50']:8.1f} us "
            f"p99 {c['one_way_us_p99']:8.1f} us  rate {c['rate_bit_s'] / 1e6:8.1f} Mbit/s"
        )
    echo(
        f"per-message overhead {result['overhead_us']:.1f} us, per-link latency "
        f"{result['link_latency_us']:.2f} us, reduction {result['gamma_ns_per_byte']:.3f} ns/B"
    )


@app.command("campaign")
def campaign(
    spec: Annotated[Path, typer.Argument(help="LAB.toml (see slurm_jobs/lab-campaign.toml).")],
    workdir: Annotated[
        Path, typer.Option("--workdir", help="Job scripts, logs and background status files.")
    ] = Path("lab-campaign"),
    only: Annotated[
        str, typer.Option("--only", help="Comma list of phase names to run (default all).")
    ] = "",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the phases and placements only.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows written as JSON.")
    ] = False,
) -> None:
    """Phase by phase: start the placed background jobs, measure every foreground placement
    that shares no node with them (one agent job each), stop them; one `lab_runs` row per
    measured run. Phases already in the store are skipped."""
    from tailcast.collectors.topology import read_scontrol_topology
    from tailcast.lab.campaign import CampaignRunner, plan
    from tailcast.lab.spec import load_lab_campaign
    from tailcast.store import ResultsDir

    camp = load_lab_campaign(spec)
    topo = read_scontrol_topology()
    if dry_run:
        planned = plan(camp, topo)
        if as_json:
            emit_json(
                [
                    {
                        "phase": r.phase.name,
                        "placement": r.placement,
                        "nodes": r.nodes,
                        "background": r.phase.jobs,
                        "shares_links": r.shares_links,
                    }
                    for r in planned
                ]
            )
            return
        for r in planned:
            echo(
                f"{r.phase.name:24s} {r.placement:18s} beside {len(r.phase.jobs)} jobs "
                f"{r.phase.jobs} shares links: {r.shares_links}"
            )
        return
    runner = CampaignRunner(camp, topo, workdir.resolve(), ResultsDir(), note)
    written = runner.run({p for p in only.split(",") if p} or None)
    if as_json:
        emit_json(written)
    else:
        echo(f"{len(written)} runs measured and recorded in lab_runs")


@app.command("tails")
def tails(
    campaign_name: Annotated[
        str | None, typer.Option("--campaign", help="Only this campaign (default: all).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Rows as JSON.")] = False,
) -> None:
    """Median and p99 of every lab campaign run by phase, with b, whether the background
    shared a link, and ratios to the same placement's run without background."""
    from tailcast.lab.tails import phase_tails
    from tailcast.store import Catalog, ResultsDir

    with Catalog(ResultsDir()) as cat:
        rows = phase_tails(cat, campaign_name)
    if as_json:
        emit_json([r.as_dict() for r in rows])
        return
    echo(
        f"{'placement':18s} {'benchmark':9s} {'bytes':>8s} {'phase':10s} {'b':>5s} shared "
        f"{'p50 ms':>9s} {'p99 ms':>9s} {'p50 x':>6s} {'p99 x':>6s} {'load':>5s}"
    )
    for r in rows:
        ratio50 = f"{r.p50_ratio:6.2f}" if r.p50_ratio is not None else "     -"
        ratio99 = f"{r.p99_ratio:6.2f}" if r.p99_ratio is not None else "     -"
        echo(
            f"{r.placement:18s} {r.benchmark:9s} {r.msg_size_bytes:8d} {r.phase:10s} "
            f"{r.b:5.2f} {'yes' if r.shares_links else 'no ':6s} {r.p50_us / 1e3:9.2f} "
            f"{r.p99_us / 1e3:9.2f} {ratio50} {ratio99} {r.host_load_1m:5.1f}"
        )


@app.command("compare")
def compare(
    campaign_name: Annotated[
        str | None, typer.Option("--campaign", help="Only this campaign (default: all).")
    ] = None,
    fabric: Annotated[str, typer.Option("--fabric", help="Bundled name or TOML file.")] = "lab",
    sizes: Annotated[str, typer.Option("--sizes", help="Only these sizes, e.g. 1M.")] = "",
    workdir: Annotated[Path, typer.Option("--workdir", help="Synthesised traces go here.")] = Path(
        "lab-compare"
    ),
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write comparison.json, comparison.md and an HTML report."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    background_detours: Annotated[
        str,
        typer.Option(
            "--background-detours",
            metavar="RATE_PER_S_PER_MBPS:LENGTH_NS:SIGMA",
            help="The background's own host detours on the lab's shared cores (tailcast "
            "calibrate prints them): beside each run's background, a second Poisson detour "
            "source at this rate per MB/s of its traffic, lognormal lengths of this mean "
            "and shape.",
        ),
    ] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Rows as JSON.")] = False,
) -> None:
    """Replays every measured run of a lab campaign on a fabric (same nodes, its background
    jobs as background traces on theirs) and compares measured with simulated latencies:
    KS, Wasserstein, p50 and p99 errors. Exit 3 when a run misses p50 ±15 % or p99 ±30 %."""
    from tailcast.lab.compare import LabReplayer, compare_runs
    from tailcast.lab.compare_report import comparison_markdown, write_comparison
    from tailcast.lab.host_load import BackgroundDetours
    from tailcast.replay.fabric import load_fabric
    from tailcast.store import ResultsDir
    from tailcast.units import parse_sizes

    results = ResultsDir()
    detours = BackgroundDetours.parse(background_detours) if background_detours else None
    replayer = LabReplayer(load_fabric(fabric), results, workdir.resolve(), seed, detours)
    rows = compare_runs(replayer, campaign_name, parse_sizes(sizes) if sizes else None, note)
    if out is not None:
        write_comparison(rows, out, results)
    if as_json:
        emit_json([r.as_dict() for r in rows])
    else:
        echo(comparison_markdown(rows))
    misses = [r for r in rows if not r.within]
    if misses:
        raise NotAcceptedError(f"{len(misses)} of {len(rows)} runs outside p50 ±15 % / p99 ±30 %")
