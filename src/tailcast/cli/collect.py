"""`tailcast collect`: queue snapshots and b, b time series, saved OSU outputs, topology."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import UsageError

if TYPE_CHECKING:
    from tailcast.collectors.osu_output import OsuOutput
    from tailcast.collectors.snapshot import Snapshot

# The collectors are imported by the commands that use them (start-up of `--help`).
# tailcast.collectors.squeue.BACKENDS; a test checks they agree.
BACKENDS = ("auto", "squeue-json", "squeue-format", "pyslurm")

app = new_app(
    "Read the Slurm queue and compute the background-traffic heuristic b (seed 001 eq. 1 "
    "and 2), keep b time series, parse saved OSU outputs, show the network topology."
)

Backend = Annotated[str, typer.Option("--backend", help=f"Queue reader: {', '.join(BACKENDS)}.")]
TotalNodes = Annotated[
    int | None, typer.Option("--total-nodes", help="N_t; default: node count from sinfo.")
]
IncludeOwn = Annotated[
    bool,
    typer.Option("--include-own-job", help="Count the job we run in (default: excluded)."),
]
OwnJob = Annotated[
    str | None, typer.Option("--own-job-id", help="Our job id; default $SLURM_JOB_ID.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]


def _line(snap: "Snapshot") -> str:
    u = snap.utilisation
    return (
        f"{snap.queue.taken_at:%Y-%m-%dT%H:%M:%S}Z b={u.b:.4f} b_simple={u.b_simple:.4f} "
        f"N_c={u.n_c} N_c'={u.n_c_dup} N_a={u.n_a_dup} N_t={u.n_t} "
        f"running={u.running_jobs} pending={u.pending_jobs} multi_node={u.multi_node_jobs}"
    )


@app.command("snapshot")
def snapshot(
    backend: Backend = "auto",
    total: TotalNodes = None,
    include_own: IncludeOwn = False,
    own_job_id: OwnJob = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from-file", help="A saved `squeue --json` or `squeue -o` output."),
    ] = None,
    store: Annotated[
        bool, typer.Option("--store/--no-store", help="Write snapshots + utilisation.")
    ] = True,
    as_json: AsJson = False,
) -> None:
    """Take one queue snapshot and print b with all its components."""
    from tailcast.collectors.snapshot import snapshot_of, take_snapshot, write_snapshots
    from tailcast.collectors.squeue import load_queue_file

    if from_file is not None:
        if total is None:
            raise UsageError("--from-file needs --total-nodes (N_t)")
        snap = snapshot_of(load_queue_file(from_file), total, own_job_id, not include_own)
    else:
        snap = take_snapshot(backend, total, own_job_id, not include_own)
    if store:
        for path in write_snapshots([snap]):
            note(f"wrote {path}")
    if as_json:
        emit_json(snap.summary())
    else:
        echo(_line(snap))


@app.command("watch")
def watch(
    interval: Annotated[float, typer.Option("--interval", help="Seconds between snapshots.")],
    duration: Annotated[float, typer.Option("--duration", help="Total seconds to watch.")],
    flush_every: Annotated[
        int, typer.Option("--flush-every", help="Write to Parquet at least every N snapshots.")
    ] = 10,
    jitter: Annotated[
        float, typer.Option("--jitter", help="Random ± fraction of the interval.")
    ] = 0.1,
    backend: Backend = "auto",
    total: TotalNodes = None,
    include_own: IncludeOwn = False,
    own_job_id: OwnJob = None,
    as_json: AsJson = False,
) -> None:
    """Keep a b time series; SIGTERM/SIGINT flush what was taken and end cleanly."""
    from tailcast.collectors.sinfo import total_nodes
    from tailcast.collectors.snapshot import take_snapshot
    from tailcast.collectors.watch import watch as watch_series

    n_t = total if total is not None else total_nodes()
    result = watch_series(
        lambda: take_snapshot(backend, n_t, own_job_id, not include_own),
        interval,
        duration,
        flush_every,
        jitter,
        report=lambda s: note(_line(s)),
    )
    for path in result.files:
        note(f"wrote {path}")
    if as_json:
        emit_json(
            {
                "snapshots": len(result.snapshots),
                "failures": result.failures,
                "stopped_by_signal": result.stopped_by,
                "files": result.files,
                "series": [
                    {
                        "taken_at": s.queue.taken_at,
                        "b": s.utilisation.b,
                        "b_simple": s.utilisation.b_simple,
                    }
                    for s in result.snapshots
                ],
            }
        )
    else:
        echo(f"{len(result.snapshots)} snapshots, {len(result.failures)} failed polls")


def _osu_dict(out: "OsuOutput") -> dict[str, Any]:
    from tailcast.collectors.osu_output import result_rows

    return {
        "path": out.path,
        "title": out.title,
        "version": out.version,
        "datatype": out.datatype,
        "columns": out.columns,
        "partial": out.partial,
        "partial_reason": out.partial_reason or None,
        "notes": out.notes,
        "rows": [{k: v for k, v in r.items() if v is not None} for r in result_rows(out)],
    }


@app.command("osu")
def osu(
    files: Annotated[list[Path], typer.Argument(help="Saved OSU stdout files.")],
    stderr: Annotated[
        Path | None, typer.Option("--stderr", help="OSU's stderr saved beside one file.")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Parse saved OSU Micro-Benchmarks outputs (5.x-7.x, OMB-Py; every benchmark of the
    suite); OSU errors exit non-zero."""
    from tailcast.collectors.osu_output import result_rows
    from tailcast.collectors.osu_parse import load_osu_file

    if stderr is not None and len(files) != 1:
        raise UsageError("--stderr goes with exactly one FILE")
    parsed = [load_osu_file(f, stderr) for f in files]
    if as_json:
        emit_json([_osu_dict(o) for o in parsed])
        return
    for out in parsed:
        version = f" v{out.version}" if out.version else ""
        echo(f"# {out.path}: {out.title}{version}" + (" (PARTIAL)" if out.partial else ""))
        rows = result_rows(out)
        keys = [k for k in (rows[0] if rows else {}) if any(r[k] is not None for r in rows)]
        keys = [k for k in keys if k not in ("partial", "tail_json")]
        echo("\t".join(keys))
        for r in rows:
            echo("\t".join("" if r[k] is None else str(r[k]) for k in keys))


@app.command("topology")
def topology(
    file: Annotated[
        Path | None, typer.Option("--file", help="TOML topology ([islands.<name>] groups).")
    ] = None,
    nodes: Annotated[
        str | None, typer.Option("--nodes", help="Classify this hostlist's locality.")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Show islands and groups (from --file or `scontrol show topology`)."""
    from tailcast.collectors.jobs import expand_nodes
    from tailcast.collectors.topology import load_topology_toml, read_scontrol_topology

    topo = load_topology_toml(file) if file else read_scontrol_topology()
    doc: dict[str, Any] = {
        "source": topo.source,
        "groups": {"/".join(g): members for g, members in topo.groups().items()},
    }
    if nodes:
        try:
            node_list = list(expand_nodes(nodes))
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        loc = topo.classify(node_list)
        doc["classified"] = {"nodes": node_list, **loc.__dict__}
    if as_json:
        emit_json(doc)
        return
    for group, members in doc["groups"].items():
        echo(f"{group}: {','.join(members)}")
    if "classified" in doc:
        c = doc["classified"]
        echo(f"locality={c['locality']} levels_spanned={c['levels_spanned']}")
