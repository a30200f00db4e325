"""`tailcast replay`: replay MPI traces through modelled fabrics."""

import gc
import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from tailcast.cli import sweep
from tailcast.cli._common import aligned, echo, emit_json, new_app, note
from tailcast.cli.progress import progress

# Traces of more rows than this stream by default: memory then grows with the rows in
# flight, not the trace (an in-memory replay holds ~150 bytes per row).
STREAM_ROWS = 1 << 18
# tailcast.replay.background_b's defaults (a test checks they agree), declared here so that
# `replay --help` does not import the replay modules.
DEFAULT_LOAD = 0.3
DEFAULT_BYTES = 4 << 20

app = new_app(
    "Replay a tailcast Parquet trace through a modelled fabric (see `fabrics`), optionally "
    "under background traffic, and store per-operation simulated times."
)

app.add_typer(sweep.app, name="sweep")


@app.command("run")
def run(
    trace: Annotated[Path, typer.Argument(help="A tailcast Parquet trace.")],
    fabric: Annotated[
        str, typer.Option("--fabric", help="A fabric TOML file or a bundled name (see `fabrics`).")
    ] = "ideal",
    seed: Annotated[int, typer.Option("--seed", help="Seed of random placement/routing.")] = 0,
    coll: Annotated[
        str,
        typer.Option("--coll", help="Force collective algorithms, e.g. allreduce=ring,bcast=1."),
    ] = "",
    placement: Annotated[
        str | None,
        typer.Option(
            "--placement",
            help="linear, random, same_group, same_island, different_islands (fabrics with "
            "groups and islands), nodes:HOSTLIST (the fabric's `nodes` names), or a file: "
            "one endpoint per rank. Default: linear, or the measured run's (--from-run).",
        ),
    ] = None,
    nodes: Annotated[
        int | None,
        typer.Option("--nodes", min=1, help="Nodes of a locality placement (default: ranks)."),
    ] = None,
    background: Annotated[
        list[str] | None,
        typer.Option(
            "--background",
            help="A synthetic background job, PATTERN:nodes=N:load=L[:bytes=64K]"
            "[:arrivals=poisson|periodic][:hot=F][:placement=random|linear|E0,E1,…]; "
            "PATTERN = uniform, nearest_neighbour, all_to_all, permutation, hot_spot. "
            "Repeatable.",
        ),
    ] = None,
    background_trace: Annotated[
        list[str] | None,
        typer.Option(
            "--background-trace",
            help="A trace replayed in the background on free endpoints, FILE[@random|linear|"
            "E0,E1,…]. Repeatable.",
        ),
    ] = None,
    background_b: Annotated[
        float | None,
        typer.Option(
            "--background-b",
            min=0.0,
            max=1.0,
            help="Background utilisation b (seed 001): jobs of >= 2 nodes on about b x N_t "
            "endpoints, placed around the foreground (fabrics with a fixed endpoint count). "
            "At most the endpoints the replay leaves free: b <= (N_t - taken) / N_t.",
        ),
    ] = None,
    background_pattern: Annotated[
        str,
        typer.Option("--background-pattern", help="Traffic pattern of the b-sized jobs."),
    ] = "uniform",
    background_load: Annotated[
        float,
        typer.Option(
            "--background-load",
            min=0.0,
            max=1.0,
            help="Offered load per b-sized background node (fraction of its injection "
            "bandwidth; an assumption, squeue shows no traffic).",
        ),
    ] = DEFAULT_LOAD,
    background_bytes: Annotated[
        str,
        typer.Option("--background-bytes", help="Message size of the b-sized jobs (K/M/G)."),
    ] = f"{DEFAULT_BYTES >> 20}M",
    background_snapshot: Annotated[
        str | None,
        typer.Option(
            "--background-snapshot",
            help="Sizes of the b-sized jobs from a stored queue snapshot (its running jobs "
            "with >= 2 nodes); default: uniform over 2, 4, ..., 64 nodes.",
        ),
    ] = None,
    from_run: Annotated[
        str | None,
        typer.Option(
            "--from-run",
            help="Reproduce a measured run of the store: its b before (as --background-b), "
            "its nodes or locality (as --placement), its MPI's eager threshold (as "
            "--eager-threshold, when recorded).",
        ),
    ] = None,
    messages: Annotated[
        bool | None,
        typer.Option(
            "--messages/--no-messages",
            help="Store every delivered message (replay_messages) and per-row fabric "
            "columns; default: when the fabric reports per-message details.",
        ),
    ] = None,
    compute_scale: Annotated[
        float,
        typer.Option("--compute-scale", help="Factor on captured compute gaps (0 = comm only)."),
    ] = 1.0,
    eager_threshold: Annotated[
        int | None,
        typer.Option(
            "--eager-threshold",
            help="Largest eager message in bytes; default: the fabric's host model "
            "([host] eager_threshold_bytes).",
            show_default=False,
        ),
    ] = None,
    store: Annotated[
        bool, typer.Option("--store/--no-store", help="Write results to $TAILCAST_HOME.")
    ] = True,
    stream: Annotated[
        bool | None,
        typer.Option(
            "--stream/--in-memory",
            help="Read the trace in chunks (memory bounded by the rows in flight; needs a "
            f"trace sorted by rank, as tailcast writes them). Default: stream traces of "
            f"more than {STREAM_ROWS:,} rows. Both give the same results.",
            show_default=False,
        ),
    ] = None,
    ops: Annotated[
        bool, typer.Option("--ops/--no-ops", help="Store per-operation times (with --stream).")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
) -> None:
    """Replays TRACE; prints total simulated time, per-op-type p50/p99, and the time taken."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    # A replay does no linear algebra: OpenBLAS's worker threads (numpy loads them) would
    # only spin after numpy calls, ~3 % of the command's CPU on 2 cores.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from tailcast.errors import UsageError
    from tailcast.replay.background import parse_job, parse_trace
    from tailcast.replay.background_b import BackgroundB
    from tailcast.replay.fabric import load_fabric
    from tailcast.replay.run import replay_trace
    from tailcast.replay.scenario import ReplayOptions
    from tailcast.store.footer import read_footer
    from tailcast.store.results import ResultsDir
    from tailcast.units import parse_size

    if compute_scale < 0 or (eager_threshold is not None and eager_threshold < 0):
        raise UsageError("--compute-scale and --eager-threshold must be >= 0")
    if coll:  # as the engine will parse it, before the trace is read
        from tailcast import _core

        try:
            _core.check_coll(coll)
        except ValueError as err:
            raise UsageError(str(err)) from err
    the_fabric = load_fabric(fabric)
    # Imported only when used: measured runs' protocol records bring the collectors' parsers
    # (~3 ms of every replay's start-up otherwise).
    if from_run is not None:
        from tailcast.replay.measured_inputs import measured_run, run_placement

        measured = measured_run(from_run)
        background_b = measured.b if background_b is None else background_b
        if eager_threshold is None:  # the run's library's, when recorded
            eager_threshold = measured.eager_threshold_bytes
        if placement is None:
            placement, nodes = run_placement(measured, the_fabric)
    sized = None
    if background_b is not None:
        sizes: tuple[int, ...] = ()
        if background_snapshot:
            from tailcast.replay.measured_inputs import snapshot_job_sizes

            sizes = snapshot_job_sizes(background_snapshot)
        sized = BackgroundB(
            b=background_b,
            pattern=background_pattern,
            load=background_load,
            bytes=parse_size(background_bytes),
            job_sizes=sizes,
            sizes_from=f"snapshot:{background_snapshot}" if background_snapshot else "default",
        )
    elif background_snapshot is not None:
        raise UsageError("--background-snapshot sizes the jobs of --background-b (or --from-run)")
    jobs = tuple(parse_job(b) for b in background or [])
    options = ReplayOptions(
        seed=seed,
        coll=coll,
        placement=placement or "linear",
        compute_scale=compute_scale,
        eager_threshold_bytes=eager_threshold,
        nodes=nodes,
        background=jobs,
        background_traces=tuple(parse_trace(b) for b in background_trace or []),
        background_b=sized,
        from_run=from_run,
        record_messages=messages,
    )
    results = ResultsDir() if store else None
    rows = read_footer(trace).num_rows
    # Everything imported so far lives until exit: out of the collector's sight, the
    # collections the replay's allocations trigger no longer walk it (~4 % of the CPU).
    gc.freeze()
    # (background traces replay in memory only)
    streaming = stream if stream is not None else rows > STREAM_ROWS and not background_trace
    if streaming:
        from tailcast.replay.stream import stream_replay

        with progress("replay", rows) as advance:
            outcome: Any = stream_replay(
                trace, the_fabric, options, results, keep_ops=ops, progress=advance
            )
    else:
        with progress("replay (in memory)", rows) as advance:
            outcome = replay_trace(trace, the_fabric, options, results, progress=advance)
    if outcome.unknown_ops:
        note(f"replayed as local no-ops (unknown to the engine): {outcome.unknown_ops}")
    summary = outcome.summary()
    summary["streamed"] = streaming
    summary["timing"] = _timing(summary["actions"], wall0, cpu0)
    if as_json:
        emit_json(summary)
        return
    _print_summary(summary)


def _timing(actions: int, wall0: float, cpu0: float) -> dict[str, float]:
    """Wall and CPU seconds of the replay (reading, engine, summary, storing) and the
    process's CPU seconds with its start-up (what `time` shows for the whole command)."""
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {
        "wall_s": round(wall, 4),
        "cpu_s": round(cpu, 4),
        "process_cpu_s": round(time.process_time(), 4),
        "actions_per_s": round(actions / wall) if wall > 0 else 0,
        "actions_per_cpu_s": round(actions / cpu) if cpu > 0 else 0,
    }


def _print_head(s: dict[str, Any]) -> None:
    how = ", streamed" if s.get("streamed") else ""
    echo(f"trace      {s['trace']} ({s['ranks']} ranks, {s['actions']} actions{how})")
    echo(f"fabric     {s['fabric']}")
    echo(f"total time {s['total_time_us']:.3f} us")
    if s["iterations"]:
        echo(
            f"iterations {s['iterations']}: p50 {s['iteration_p50_us']:.3f} us, "
            f"p99 {s['iteration_p99_us']:.3f} us"
        )
    stats = s["fabric_stats"]
    if "background_offered_load" in stats:
        echo(
            f"background {s['background_messages']} messages, offered load "
            f"{stats['background_offered_load']:.3f}, delivered "
            f"{stats['background_delivered_load']:.3f}"
        )


def _print_summary(s: dict[str, Any]) -> None:
    _print_head(s)
    echo(f"{'op':<22}{'count':>10}{'p50 us':>14}{'p99 us':>14}")
    for name, row in sorted(s["ops"].items()):
        echo(f"{name:<22}{row['count']:>10}{row['p50_us']:>14.3f}{row['p99_us']:>14.3f}")
    t = s["timing"]
    echo(
        f"time       {t['wall_s']:.3f} s wall, {t['cpu_s']:.3f} s CPU "
        f"({t['process_cpu_s']:.3f} s with start-up), "
        f"{t['actions_per_cpu_s'] / 1e6:.2f} M actions per CPU-second"
    )
    if s["stored"]:
        note(f"replay {s['replay_id']} stored ({len(s['stored'])} files)")


@app.command("fabrics")
def fabrics(
    describe: Annotated[
        str | None,
        typer.Option(
            "--describe",
            help="A model (e.g. flow): its parameters; a bundled fabric or fabric TOML file: "
            "its values beside its model's parameters.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Lists the bundled fabrics and the fabric models, or describes one of them."""
    import tomllib

    from tailcast.replay.fabric import bundled_fabrics, model_docs

    models = model_docs()
    if describe is not None:
        _describe(describe, models, as_json)
        return
    rows = []
    for name, text in bundled_fabrics().items():
        table = tomllib.loads(text)
        rows.append(
            {
                "name": name,
                "model": table.get("model", ""),
                "description": table.get("description", ""),
            }
        )
    if as_json:
        emit_json(
            {"fabrics": rows, "models": [{"name": m, "doc": d["doc"]} for m, d in models.items()]}
        )
        return
    for line in aligned([[r["name"], r["model"], r["description"]] for r in rows]):
        echo(line)
    echo("")
    echo("models (tailcast replay fabrics --describe MODEL):")
    for line in aligned([[name, d["doc"]] for name, d in models.items()], indent="  "):
        echo(line)


def _describe(name: str, models: dict[str, dict[str, Any]], as_json: bool) -> None:
    """A model's parameters (key, expected, default, doc); for a fabric (bundled name or
    TOML file) also the value it gives each."""
    from tailcast.errors import UsageError
    from tailcast.replay.fabric import bundled_fabrics, declared_value, load_fabric

    if name in models:
        doc = models[name]
        if as_json:
            emit_json(doc)
            return
        echo(f"model {doc['name']}: {doc['doc']}")
        rows = []
        for p in doc["params"]:
            default = "required" if p["required"] else f"default {p['default']}"
            rows += [[p["key"], f"{p['expected']}; {default}"], ["", p["doc"]]]
        for line in aligned(rows, indent="  "):
            echo(line)
        return
    if name not in bundled_fabrics() and not name.endswith(".toml"):
        known = ", ".join([*models, *bundled_fabrics()])
        raise UsageError(
            f"--describe {name!r}: not a model, bundled fabric or .toml file ({known})"
        )
    fabric = load_fabric(name)
    doc = models[fabric.model]
    params = []
    for p in doc["params"]:
        is_set, value = declared_value(fabric.table, p["key"])
        params.append({**p, "set": is_set, "value": value})
    if as_json:  # the model's document (as --describe MODEL), each parameter with a value
        emit_json(
            {
                **doc,
                "params": params,
                "fabric": fabric.name,
                "source": fabric.source,
                "description": fabric.table.get("description"),
            }
        )
        return
    description = fabric.table.get("description")
    echo(f"fabric {fabric.name} ({fabric.source})" + (f": {description}" if description else ""))
    echo(f"model {doc['name']}: {doc['doc']}")
    rows = [["key", "value", "default"], ["", "doc"]]
    for p in params:
        default = "required" if p["required"] else p["default"]
        rows.append([p["key"], _shown(p, params) if p["set"] else "-", default])
        rows.append(["", p["doc"]])
    for line in aligned(rows, indent="  "):
        echo(line)


def _shown(param: dict[str, Any], params: list[dict[str, Any]]) -> str:
    """A fabric's value of a parameter as TOML; of a table, only what no parameter of its
    own shows (a flow topology's `kind`), so every value is printed once."""
    from tailcast.replay.toml_text import value_text

    value = param["value"]
    prefix = param["key"] + "."
    own = {
        p["key"].removeprefix(prefix).split(" (")[0] for p in params if p["key"].startswith(prefix)
    }
    if isinstance(value, dict):
        rest = {k: v for k, v in value.items() if k not in own}
        return value_text(rest) if rest else "(table)"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return f"({len(value)} tables)"
    return value_text(value)


@app.command("schedule")
def schedule_cmd(
    coll: Annotated[
        str,
        typer.Argument(
            help="A collective (Open MPI 4.1.4's fixed rules choose) or KIND=ALG[:segsize=..]"
            "[:fanout=..], e.g. bcast=pipeline:segsize=128K.",
            metavar="COLL",
        ),
    ],
    ranks: Annotated[int, typer.Option("--ranks", "-n", help="Communicator size.")] = 16,
    size: Annotated[
        str, typer.Option("--size", help="Bytes (OSU's size: per-peer block for all-to-all).")
    ] = "1M",
    fabric: Annotated[str, typer.Option("--fabric", help="Bundled fabric or TOML.")] = "ideal",
    root: Annotated[int, typer.Option("--root", help="Root of rooted collectives.")] = 0,
    dtype_bytes: Annotated[
        int, typer.Option("--dtype-bytes", help="Element size (fallbacks count elements).")
    ] = 1,
    plot_path: Annotated[
        Path | None, typer.Option("--plot", help="Write a space-time diagram (PNG/SVG/PDF).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Prints one collective's per-rank program (isend, irecv, wait, reduce) with each
    transfer's posted and delivered time on the fabric, and the total."""
    from tailcast.replay.fabric import load_fabric
    from tailcast.replay.schedule import Request, plot, schedule, text_lines
    from tailcast.units import parse_size

    req = Request(coll=coll, ranks=ranks, size_bytes=parse_size(size), root=root,
                  dtype_bytes=dtype_bytes)  # fmt: skip
    doc = schedule(req, load_fabric(fabric))
    if plot_path is not None:
        plot(doc, plot_path)
    if as_json:
        emit_json(doc)
        return
    for line in text_lines(doc):
        echo(line)
    if plot_path is not None:
        note(f"wrote {plot_path}")


@app.command("budget")
def budget(
    design: Annotated[
        str, typer.Argument(help="Chip design TOML or bundled name (seed004-1000port).")
    ] = "seed004-1000port",
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Draw wavelengths vs ring radius (PNG/SVG).")
    ] = None,
) -> None:
    """Insertion loss and WDM wavelengths of photonic switch chips (seed 004, Eqs. 1-13)."""
    from tailcast.errors import UsageError
    from tailcast.photonic.budget_report import budget_report, print_budget

    report = budget_report(design)
    if plot is not None:
        if not report["points"]:
            missing = ", ".join(report["missing"])
            raise UsageError(f"--plot: design {design!r} has no design space (lacks {missing})")
        from tailcast.photonic.budget_plot import plot_budget

        plot_budget(report, plot)
    if as_json:
        emit_json(report)
        return
    print_budget(report, echo)
