"""`tailcast predict`: how long will the tail be if the job starts now?

`train` / `evaluate` fit and validate the learned forecasters on the store's runs, `tail`
forecasts one job (learned model and linear baseline side by side), `serve` keeps a model
warm for the Slurm hook that `install-cli-filter` prints."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import NotAcceptedError, TailcastError, UsageError
from tailcast.units import parse_size

if TYPE_CHECKING:
    from tailcast.collectors.topology import Topology
    from tailcast.forecast.live import QueueState
    from tailcast.store import Catalog

app = new_app(
    "Predict at submission time a collective's latency tail from the queue (b and the shape "
    "of the running jobs) with models trained and validated on the store's runs (seed 001)."
)

ModelOpt = Annotated[str, typer.Option("--model", help="Model name under $TAILCAST_HOME/models.")]
TopologyOpt = Annotated[
    Path | None,
    typer.Option("--topology", help="TOML topology for locality features; default scontrol."),
]
FoldsOpt = Annotated[
    int, typer.Option("--folds", help="Time-ordered validation folds (train: 0 = skip).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _topology(path: Path | None) -> "Topology | None":
    from tailcast.collectors.proc import RetryPolicy
    from tailcast.collectors.topology import load_topology_toml, read_scontrol_topology

    if path is not None:
        return load_topology_toml(path)
    try:
        return read_scontrol_topology(RetryPolicy(attempts=1, timeout_s=20))
    except TailcastError as exc:
        note(f"note: no topology ({exc}); locality features from the runs' own labels")
        return None


def _catalog() -> "Catalog":
    from tailcast.store import Catalog

    catalog = Catalog()
    for problem in catalog.problems:
        note(f"warning: skipped {problem}")
    return catalog


@app.command("train")
def train(
    model: ModelOpt = "tail",
    topology: TopologyOpt = None,
    folds: FoldsOpt = 5,
    as_json: JsonOpt = False,
) -> None:
    """Validate (time-ordered CV) and fit the forecasters on every accepted run; save them
    with a metadata record (query, features, data range, scores, versions)."""
    from tailcast.forecast import training
    from tailcast.forecast.summary import score_lines

    topo = _topology(topology)
    with _catalog() as catalog:
        trained = training.train(catalog, topo, model, folds)
    if as_json:
        emit_json({"model": str(trained.directory), **trained.meta})
        return
    rng = trained.meta["data_range"]
    echo(f"model {model!r} → {trained.directory}")
    echo(f"trained on {rng['runs']} runs in {rng['cv_groups']} Slurm jobs, b {rng['b']}")
    if trained.meta["scores"] is None:
        note("not validated (--folds 0): `tailcast predict evaluate` scores it")
        return
    for line in score_lines(trained.meta["scores"]):
        echo(line)


@app.command("evaluate")
def evaluate(topology: TopologyOpt = None, folds: FoldsOpt = 5, as_json: JsonOpt = False) -> None:
    """Time-ordered, grouped cross-validation of the learned models against the linear
    baseline: pinball loss, band coverage, calibration, Brier score."""
    if folds < 1:
        raise UsageError("--folds must be ≥ 1")
    from tailcast.forecast import training
    from tailcast.forecast.summary import score_lines

    topo = _topology(topology)
    with _catalog() as catalog:
        ts, scores = training.evaluate(catalog, topo, folds)
    if as_json:
        emit_json({"data_range": ts.data_range(), **scores})
        return
    for line in score_lines(scores):
        echo(line)


def _stored_queue(catalog: "Catalog", snapshot_id: str) -> "QueueState":
    from tailcast.forecast.live import queue_from_rows

    util = catalog.con.execute(
        "SELECT n_t, taken_at, own_job_id, own_job_excluded FROM utilisation WHERE snapshot_id = ?",
        [snapshot_id],
    ).fetchall()
    if not util:
        raise UsageError(f"no snapshot {snapshot_id!r} in the store (see `db sql`)")
    n_t, taken_at, own_id, excluded = util[0]
    jobs = catalog.con.execute(
        "SELECT job_id, state, node_count, nodes FROM snapshots WHERE snapshot_id = ?",
        [snapshot_id],
    ).fetchall()
    own = own_id if excluded else None
    rows = [
        {"job_id": j, "state": st, "node_count": c, "nodes": ns}
        for j, st, c, ns in jobs
        if own is None or str(j) != str(own)
    ]
    return queue_from_rows(rows, int(n_t), taken_at, f"snapshot {snapshot_id}")


def _live_queue() -> "QueueState":
    from tailcast.collectors.snapshot import take_snapshot
    from tailcast.forecast.live import QueueState

    snap = take_snapshot()
    own = snap.utilisation.own_job_id if snap.utilisation.own_job_excluded else None
    jobs = tuple(j for j in snap.queue.jobs if own is None or not j.matches(own))
    return QueueState(
        jobs, snap.utilisation.n_t, snap.queue.taken_at, f"live {snap.queue.source} snapshot"
    )


@app.command("tail")
def tail(
    benchmark: Annotated[str, typer.Option(help="Collective, e.g. bcast, reduce, alltoall.")],
    size: Annotated[str, typer.Option(help="Message size, e.g. 4, 1K, 1M.")],
    nodes: Annotated[
        int | None, typer.Option(help="Nodes of the job; default: the training runs' count.")
    ] = None,
    ranks: Annotated[int | None, typer.Option(help="MPI ranks; default one per node.")] = None,
    nodelist: Annotated[
        str | None, typer.Option(help="The job's nodes; default: where Slurm would put it.")
    ] = None,
    locality: Annotated[
        str | None,
        typer.Option(help="same_group | same_island | different_islands (default: any)."),
    ] = None,
    b: Annotated[
        float | None,
        typer.Option("--b", help="Forecast for this b only (no queue shape); default: live."),
    ] = None,
    snapshot: Annotated[
        str | None, typer.Option("--snapshot", help="Replay a stored queue snapshot by id.")
    ] = None,
    simulate: Annotated[
        str | None,
        typer.Option(
            "--simulate",
            help="Also replay the job on this fabric (bundled name or TOML) beside the "
            "queue's running jobs; the fabric's `nodes` must name the cluster's nodes.",
        ),
    ] = None,
    simulate_trace: Annotated[
        Path | None,
        typer.Option(help="Replay this trace instead of the benchmark's OSU-pattern trace."),
    ] = None,
    simulate_load: Annotated[
        float, typer.Option(help="Offered load per background node (fraction of its link).")
    ] = 0.3,
    simulate_iterations: Annotated[int, typer.Option(help="Simulated iterations.")] = 200,
    model: ModelOpt = "tail",
    as_json: JsonOpt = False,
) -> None:
    """Forecast mean, p99 and p99/p50 with bands and P(long tail) for a job starting now,
    beside the linear baseline fitted per (benchmark, size, locality) and, with --simulate,
    the tail a fabric model gives under the queue's running jobs."""
    from tailcast.analysis.prediction import load_run_stats, predict_tail
    from tailcast.collectors.jobs import expand_nodes
    from tailcast.forecast.live import Request, forecast
    from tailcast.forecast.persist import load_model, model_dir

    if b is not None and snapshot is not None:
        raise UsageError("give --b or --snapshot, not both")
    if simulate is not None and b is not None:
        raise UsageError("--simulate places the queue's jobs: use the live queue or --snapshot")
    size_bytes = parse_size(size)
    fabric = None
    if simulate is not None:
        from tailcast.replay.fabric import load_fabric

        fabric = load_fabric(simulate)
    notes: list[str] = []
    with _catalog() as catalog:
        queue = _stored_queue(catalog, snapshot) if snapshot else None
        if queue is None and b is None:
            queue = _live_queue()
        b_value = b if queue is None else None
        learned: dict[str, Any] | None = None
        line = None
        if (model_dir(model, catalog.results) / "model.json").exists():
            loaded = load_model(model, catalog.results)
            span = loaded.meta["data_range"].get("nodes") or [None, None]
            n = nodes or (int(span[0]) if span[0] is not None and span[0] == span[1] else None)
            if n is None:
                raise UsageError("give --nodes (the model was trained on several node counts)")
            req = Request(
                benchmark,
                size_bytes,
                n,
                ranks,
                tuple(expand_nodes(nodelist)) if nodelist else (),
                locality,
            )
            fc = forecast(loaded, req, queue, b_value)
            learned, line, b_value = fc.as_dict(), fc.line(), fc.b
        else:
            notes.append(f"no trained model {model!r} (tailcast predict train): baseline only")
        if b_value is None and queue is not None:
            from tailcast.collectors.utilisation import compute_b

            b_value = compute_b(queue.jobs, queue.n_t).b
        assert b_value is not None
        runs = load_run_stats(catalog, benchmark, size_bytes, locality)
        eager = None  # the eager threshold of the cluster's MPI, as its runs recorded it
        if fabric is not None:  # (none recorded: the fabric's [host] value)
            from tailcast.replay.measured_inputs import recorded_eager_threshold

            eager = recorded_eager_threshold(catalog, benchmark)
    simulated = None
    if fabric is not None:
        from tailcast.forecast.simulate import simulate_tail

        assert queue is not None
        sim_nodes = (learned or {}).get("nodes") or nodes
        if sim_nodes is None:
            raise UsageError("--simulate needs --nodes (no trained model gives the count)")
        wanted = tuple(expand_nodes(nodelist)) if nodelist else ()
        if not wanted and learned and learned.get("node_list"):
            wanted = tuple(expand_nodes(learned["node_list"]))
        simulated = simulate_tail(
            fabric,
            queue,
            benchmark,
            size_bytes,
            int(sim_nodes),
            ranks or int(sim_nodes),
            wanted=wanted,
            trace=simulate_trace,
            iterations=simulate_iterations,
            load=simulate_load,
            eager_threshold_bytes=eager,
        )
    try:
        baseline = predict_tail(runs, b_value, benchmark, size_bytes, locality)
    except NotAcceptedError as exc:
        if learned is None and simulated is None:
            raise
        baseline = None
        notes.append(f"baseline: {exc}")
    source = "--b" if queue is None else queue.source
    if as_json:
        emit_json(
            {
                "b": b_value,
                "b_source": source,
                "learned": learned,
                "baseline": baseline.as_dict() if baseline else None,
                "simulated": simulated.as_dict() if simulated else None,
                "notes": notes,
            }
        )
        return
    if line is not None:
        echo(line)
        covered = (learned or {}).get("band_90_coverage")
        notes.append(
            "[low, high] is the 90% band; it held "
            + (
                f"{covered['p99_us']:.0%} of the held-out runs' p99 in validation"
                if covered
                else "an unknown share of runs (not validated: tailcast predict evaluate)"
            )
        )
    if baseline is not None:
        where = f" ({locality})" if locality else ""
        echo(
            f"baseline (log-linear in b, {baseline.runs} runs{where}): "
            f"mean {baseline.mean_us:.1f} µs "
            f"[{baseline.mean_us_low:.1f}, {baseline.mean_us_high:.1f}] 90% interval, "
            f"p99 {baseline.p99_us:.1f} µs, "
            + ("long tail expected" if baseline.long_tail_expected else "no long tail expected")
            + f" (b = {b_value:.3f}, {source})"
        )
        if baseline.extrapolated:
            notes.append(
                f"baseline: b outside the measured {baseline.b_min:.3f}–{baseline.b_max:.3f}"
            )
    if simulated is not None:
        echo(simulated.line())
    for text in notes:
        note(text)


@app.command("serve")
def serve(
    socket_path: Annotated[
        Path | None, typer.Option("--socket", help="Unix socket; default per user and store.")
    ] = None,
    model: ModelOpt = "tail",
    refresh: Annotated[float, typer.Option(help="Seconds between queue reads.")] = 15.0,
    idle_exit: Annotated[
        float, typer.Option(help="Exit after this many idle seconds; 0 = never.")
    ] = 0.0,
) -> None:
    """Keep the model loaded and the queue fresh; answer the cli_filter hook on a socket."""
    from tailcast.forecast.service import ServiceState, default_socket_path
    from tailcast.forecast.service import serve as run_service
    from tailcast.store import ResultsDir

    path = socket_path or default_socket_path()
    raise typer.Exit(run_service(path, ServiceState(model, ResultsDir()), refresh, idle_exit))


@app.command("install-cli-filter")
def install_cli_filter(
    socket_path: Annotated[
        Path | None, typer.Option("--socket", help="The service's socket; default per user.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the script here instead of stdout.")
    ] = None,
    autostart: Annotated[
        bool,
        typer.Option("--autostart/--no-autostart", help="Let the hook start the service."),
    ] = True,
) -> None:
    """Print the Slurm cli_filter/lua script (forecast line at sbatch/salloc/srun) and the
    slurm.conf line that enables it."""
    from tailcast.forecast.hook import SLURM_CONF_LINE, render_cli_filter
    from tailcast.forecast.service import default_socket_path

    script = render_cli_filter(socket_path or default_socket_path(), autostart)
    if out is None:
        echo(script.rstrip("\n"))
    else:
        out.write_text(script)
        note(f"wrote {out}")
    note(
        "install: copy it to cli_filter.lua beside slurm.conf and add to slurm.conf:\n"
        f"  {SLURM_CONF_LINE}"
    )
